"""DescribeConfigs v1-v4, answered by any broker from its own config and metadata cache
(Kafka's ConfigHelper.describeConfigs, 3.4-3.9). v1 synonyms and config_source; v2 same as v1; v3
config_type and documentation; v4 flexible. A success carries error_message "" in every version
(the generated field's default; Kafka 2.x sent null), and the entries in the order of Kafka 3.9's
Scala hash map (fauxka/model/scala_order.py)."""

from typing import TYPE_CHECKING

from fauxka.model import broker_configs as bc
from fauxka.model.acl_model import CLUSTER_NAME
from fauxka.model.config_resources import BROKER, BROKER_LOGGER, TOPIC, java_int
from fauxka.model.errors import ErrorCode
from fauxka.model.scala_order import scala_hash_map_order
from fauxka.model.topic_configs import ConfigSource, ConfigValidationError, effective_topic_configs
from fauxka.model.topic_names import validate_topic_name

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .admin_common import dynamic_broker_layers

if TYPE_CHECKING:
    from ..protocol.requests import DescribeConfigsRequest

_KEY = 32
# How many entries Kafka 3.9's map of a whole TOPIC / per-broker BROKER resource holds (LogConfig's 36
# keys; KafkaConfig's non-internal keys, about 320: any count from 192 to 383 gives the same table),
# which sets its table size and so the order of the entries fauxka reports from it.
_KAFKA_ENTRIES = {(TOPIC, True): 36, (BROKER, True): 320}
TOPIC_REFUSED, CLUSTER_REFUSED = (29, "Topic authorization failed."), (31, "Cluster authorization failed.")
INVALID_REQUEST_MESSAGE = ("This most likely occurs because of a request being malformed by the client library or "
                           "the message was sent to an incompatible broker. See the broker logs for more details.")


class _Refused(Exception):
    def __init__(self, code: int, message: str | None):
        super().__init__(message)
        self.code, self.message = code, message


async def handle(ctx: RequestContext, request: "DescribeConfigsRequest") -> Response:
    if any(r.resource_type not in (TOPIC, BROKER, BROKER_LOGGER) for r in request.resources):
        # KafkaApis throws for the whole request: every resource gets the error, no configs
        results = [_result(r, ErrorCode.invalid_request, INVALID_REQUEST_MESSAGE, ()) for r in request.resources]
    else:
        documentation = getattr(request, "include_documentation", False)  # v3+
        may = [_may_describe(ctx, r) for r in request.resources]
        allowed = [r for r, ok in zip(request.resources, may) if ok]
        refused = [r for r, ok in zip(request.resources, may) if not ok]
        results = [_describe(ctx, r, request.include_synonyms, documentation) for r in allowed]
        # Kafka answers the resources it may not describe after the others
        results += [_result(r, *(TOPIC_REFUSED if r.resource_type == TOPIC else CLUSTER_REFUSED), ())
                     for r in refused]
    return build(response_schema(_KEY, ctx.version), {"throttle_time": 0, "results": results})


def _may_describe(ctx: RequestContext, resource) -> bool:
    """DescribeConfigs on the topic; on the cluster for BROKER and BROKER_LOGGER resources."""
    if resource.resource_type == TOPIC:
        return ctx.authorized("DESCRIBE_CONFIGS", "TOPIC", resource.resource_name)
    return ctx.authorized("DESCRIBE_CONFIGS", "CLUSTER", CLUSTER_NAME)


def _result(resource, code: int, message: str | None, configs) -> dict:
    return {"error_code": code, "error_message": message, "resource_type": resource.resource_type,
            "resource_name": resource.resource_name, "configs": configs}


def _describe(ctx: RequestContext, resource, include_synonyms: bool, include_documentation: bool) -> dict:
    wanted = set(resource.configuration_keys or ())
    try:
        if resource.resource_type == TOPIC:
            entries = _topic(ctx, resource.resource_name, include_synonyms, include_documentation)
        elif resource.resource_type == BROKER:
            entries = _broker(ctx, resource.resource_name, include_synonyms, include_documentation)
        else:
            entries = _loggers(ctx, resource.resource_name)
    except _Refused as refused:
        return _result(resource, refused.code, refused.message, ())
    configs = [e for e in entries if not wanted or e["name"] in wanted]
    # In the order of Kafka's Scala map: the whole config map's table, or a filter's new map of the kept ones
    whole = _KAFKA_ENTRIES.get((resource.resource_type, bool(resource.resource_name)), 0)
    size = len(configs) if wanted else max(len(configs), whole)
    by_name = {e["name"]: e for e in configs}
    configs = [by_name[n] for n in scala_hash_map_order(by_name, size)]
    return _result(resource, 0, "", configs)  # Kafka leaves the message at its default, "" (null only in 2.x)


def _topic(ctx: RequestContext, topic: str, include_synonyms: bool, include_documentation: bool) -> list[dict]:
    invalid = validate_topic_name(topic)
    if invalid is not None:
        raise _Refused(ErrorCode.invalid_topic_exception, invalid)
    if topic not in ctx.cache.topics:
        raise _Refused(ErrorCode.unknown_topic_or_partition, "")
    dynamic_broker, dynamic_default = dynamic_broker_layers(ctx)
    try:
        entries = effective_topic_configs(ctx.cache.topic_configs.get(topic, {}), dynamic_broker, dynamic_default,
                                          ctx.config.originals, include_synonyms, include_documentation)
    except ConfigValidationError as exc:  # a stored override LogConfig cannot build: Kafka's ConfigException
        ctx.log.error("describe configs failed", topic=topic, error=exc.message)
        raise _Refused(ErrorCode.unknown_server_error, None) from None
    return [_entry(e) for e in entries]


def _broker(ctx: RequestContext, name: str, include_synonyms: bool, include_documentation: bool) -> list[dict]:
    broker_id = ctx.broker_id
    if name:
        if not java_int(name):
            raise _Refused(ErrorCode.invalid_request, f"Broker id must be an integer, but it is: {name}")
        if int(name) != broker_id:
            raise _Refused(ErrorCode.invalid_request,
                           f"Unexpected broker id, expected {broker_id} or empty string, but received {name}")
    configs = ctx.cache.broker_configs
    entries = bc.describe_broker(ctx.config.originals, configs.get(bc.DEFAULT_ENTITY, {}),
                                 configs.get(str(broker_id), {}), per_broker=bool(name),
                                 include_synonyms=include_synonyms, include_documentation=include_documentation)
    return [_entry(e) for e in entries]


def _loggers(ctx: RequestContext, name: str) -> list[dict]:
    broker_id = ctx.broker_id
    if not name:
        raise _Refused(ErrorCode.invalid_request, "Broker id must not be empty")
    if not java_int(name):
        raise _Refused(ErrorCode.invalid_request, f"Broker id must be an integer, but it is: {name}")
    if int(name) != broker_id:
        raise _Refused(ErrorCode.invalid_request, f"Unexpected broker id, expected {broker_id} but received {name}")
    return [{"name": logger, "value": level, "read_only": False,
             "config_source": int(ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG), "is_sensitive": False,
             "synonyms": (), "config_type": 0, "documentation": ""}
            for logger, level in bc.loggers(ctx.config["log.level"]).items()]


def _entry(e) -> dict:
    return {"name": e.name, "value": e.value, "read_only": e.read_only, "config_source": int(e.source),
            "is_sensitive": e.sensitive, "config_type": int(e.config_type), "documentation": e.documentation,
            "synonyms": [{"name": s.name, "value": s.value, "source": int(s.source)} for s in e.synonyms]}


def error_response(request, code):
    """DescribeConfigsRequest.getErrorResponse: every resource named answers the error."""
    return build(response_schema(_KEY, request.version), {
        "throttle_time": 0, "results": [_result(r, code, None, []) for r in request.body.resources]})
