"""The audit line (fauxka/controller/audit.py) as an explicit Spark schema, and Kafka's error names."""

from kio.schema.errors import ErrorCode
from pyspark.sql import types as T

CORRUPT = "_corrupt_record"

AUDIT_SCHEMA = T.StructType([
    T.StructField("ts", T.DoubleType()),
    T.StructField("principal", T.StringType()),
    T.StructField("client_address", T.StringType()),
    T.StructField("receiving_broker", T.IntegerType()),
    T.StructField("forwarded_by", T.IntegerType()),
    T.StructField("api", T.StringType()),
    T.StructField("api_version", T.IntegerType()),
    T.StructField("resource_type", T.StringType()),
    T.StructField("resource_name", T.StringType()),
    T.StructField("action", T.StringType()),
    T.StructField("validate_only", T.BooleanType()),
    T.StructField("error_code", T.IntegerType()),
    T.StructField("error_message", T.StringType()),
    T.StructField("latency_ms", T.DoubleType()),
    # extra keys (new_partitions, configs, ops, ...) are not part of the report and are ignored
    T.StructField(CORRUPT, T.StringType()),
])

# Only the timeouts table shows these: the first parse leaves them out (a string field never makes
# a line malformed: Spark turns any JSON value into its text), and REQUEST_TIMED_OUT lines are
# parsed again with AUDIT_SCHEMA for them.
DETAIL = ("client_address", "resource_type", "resource_name", "action")
CORE_SCHEMA = T.StructType([f for f in AUDIT_SCHEMA.fields if f.name not in DETAIL])

# A line without one of these is malformed, like one that is not a JSON object or has a value of
# the wrong type; forwarded_by and error_message are null by design, the rest only describe.
REQUIRED = ("ts", "principal", "receiving_broker", "api", "validate_only", "error_code", "latency_ms")

POLICY_VIOLATION = 44
REQUEST_TIMED_OUT = 7

# "Rule fauxka.policy.max.partitions: ..." (fauxka/controller/rules_policy.py) -> the rule's key
RULE_PATTERN = r"^Rule ([A-Za-z0-9_.\-]+):"


def error_name(code: int) -> str:
    """REQUEST_TIMED_OUT for 7, NONE for 0, UNKNOWN(1234) for a code Kafka does not define."""
    try:
        return ErrorCode(code).name.upper()
    except ValueError:
        return f"UNKNOWN({code})"
