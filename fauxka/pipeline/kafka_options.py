"""The options of the `fauxka-kafka` Spark data source, checked as Spark's Kafka connector checks
them (spark-sql-kafka-0-10's KafkaSourceProvider), without Spark or a socket.

Offsets JSON is Spark's: `{"topic": {"0": 23, "1": -2}}` where -2 means earliest and -1 latest;
`startingOffsetsByTimestamp` is `{"topic": {"0": 1700000000000}}` (milliseconds).
"""

import json
import re
from dataclasses import dataclass, field

EARLIEST = -2
LATEST = -1

# Spark's source options (lower-cased: Spark's options are case-insensitive). Those marked
# "accepted" change nothing here but are valid for Spark's connector, so code written for it runs.
SOURCE_OPTIONS = {
    "subscribe", "subscribepattern", "assign", "startingoffsets", "endingoffsets",
    "startingoffsetsbytimestamp", "startingtimestamp", "endingoffsetsbytimestamp", "endingtimestamp",
    "maxoffsetspertrigger", "failondataloss", "includeheaders", "kafkaconsumer.polltimeoutms",
    # accepted: the connector's knobs for its own consumer pool and group naming
    "minoffsetspertrigger", "maxtriggerdelay", "minpartitions", "groupidprefix", "fetchoffset.numretries",
    "fetchoffset.retryintervalms", "startingoffsetsbytimestampstrategy", "path",
}
SINK_OPTIONS = {"topic", "includeheaders", "path", "checkpointlocation"}
# Spark refuses these consumer settings: the source manages them itself
FORBIDDEN_CLIENT = {"auto.offset.reset", "key.deserializer", "value.deserializer", "enable.auto.commit",
                    "interceptor.classes", "key.serializer", "value.serializer"}
# Java client settings with no librdkafka equivalent (dropped, so a Spark job's options still work)
JAVA_ONLY = {"security.providers", "ssl.truststore.type", "ssl.keystore.type", "sasl.jaas.config",
             "ssl.endpoint.identification.algorithm.java"}


class OptionError(ValueError):
    """A bad option: the message names it."""


@dataclass(frozen=True)
class Subscription:
    kind: str  # "subscribe" | "subscribePattern" | "assign"
    topics: tuple[str, ...] = ()
    pattern: str | None = None
    assigned: tuple[tuple[str, int], ...] = ()

    def matches(self, topic: str) -> bool:
        if self.kind == "subscribe":
            return topic in self.topics
        if self.kind == "subscribePattern":
            return re.fullmatch(self.pattern, topic) is not None
        return any(t == topic for t, _ in self.assigned)


@dataclass(frozen=True)
class SourceOptions:
    client: dict = field(default_factory=dict)  # librdkafka settings (kafka.* without the prefix)
    subscription: Subscription = Subscription("subscribe")
    starting: str | dict = "latest"  # "earliest" | "latest" | {topic: {partition: offset}}
    ending: str | dict = "latest"
    starting_by_timestamp: dict | None = None  # {topic: {partition: ms}}
    starting_timestamp: int | None = None
    ending_by_timestamp: dict | None = None  # {topic: {partition: ms}}; batch only
    ending_timestamp: int | None = None
    max_offsets_per_trigger: int | None = None
    fail_on_data_loss: bool = True
    include_headers: bool = False
    poll_timeout_ms: int = 120_000


def client_conf(options: dict) -> dict:
    """kafka.* options as librdkafka settings; kafka.bootstrap.servers is required."""
    conf = {}
    for key, value in options.items():
        if key.lower().startswith("kafka."):
            name = key[len("kafka."):]
            if name.lower() in FORBIDDEN_CLIENT:
                raise OptionError(f"Kafka option '{name}' is not supported as the source manages it "
                                  f"(Spark's connector refuses it too)")
            if name.lower() not in JAVA_ONLY:
                conf[name] = value
    if not conf.get("bootstrap.servers"):
        raise OptionError("Option 'kafka.bootstrap.servers' must be specified")
    return conf


def _lower(options: dict) -> dict:
    return {k.lower(): v for k, v in options.items()}


def _bool(options: dict, name: str, default: bool) -> bool:
    value = options.get(name.lower())
    if value is None:
        return default
    if str(value).lower() not in ("true", "false"):
        raise OptionError(f"Option '{name}' must be true or false, got {value!r}")
    return str(value).lower() == "true"


def _int(options: dict, name: str, default: int | None) -> int | None:
    value = options.get(name.lower())
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise OptionError(f"Option '{name}' must be an integer, got {value!r}") from None
    if number <= 0:
        raise OptionError(f"Option '{name}' must be positive, got {value!r}")
    return number


def offsets_json(name: str, text: str, *, allow: tuple[int, ...] = (EARLIEST, LATEST)) -> dict:
    """{topic: {partition(int): offset}} from Spark's JSON; OptionError naming the option otherwise."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise OptionError(f"Option '{name}': expected e.g. {{\"topicA\":{{\"0\":23,\"1\":-1}}}}, "
                          f"got {text!r} ({exc.msg})") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise OptionError(f"Option '{name}': expected {{topic: {{partition: offset}}}}, got {text!r}")
    result = {}
    for topic, partitions in data.items():
        result[topic] = {}
        for partition, offset in partitions.items():
            if not str(partition).lstrip("-").isdigit() or not isinstance(offset, int) or isinstance(offset, bool):
                raise OptionError(f"Option '{name}': bad entry {topic}/{partition}: {offset!r}")
            if offset < 0 and offset not in allow:
                raise OptionError(f"Option '{name}': offset {offset} for {topic}-{partition} is not allowed")
            result[topic][int(partition)] = offset
    return result


def _position(options: dict, name: str, default: str, allow: tuple[int, ...]) -> str | dict:
    value = options.get(name.lower())
    if value is None:
        return default
    if value.strip().lower() in ("earliest", "latest"):
        return value.strip().lower()
    return offsets_json(name, value, allow=allow)


def _subscription(options: dict) -> Subscription:
    given = [k for k in ("subscribe", "subscribepattern", "assign") if options.get(k)]
    if len(given) != 1:
        raise OptionError("Exactly one of the options 'subscribe', 'subscribePattern' or 'assign' must be "
                          f"specified, got {len(given)}")
    value = options[given[0]]
    if given[0] == "subscribe":
        topics = tuple(t.strip() for t in value.split(",") if t.strip())
        if not topics:
            raise OptionError(f"Option 'subscribe': no topic in {value!r}")
        return Subscription("subscribe", topics=topics)
    if given[0] == "subscribepattern":
        try:
            re.compile(value)
        except re.error as exc:
            raise OptionError(f"Option 'subscribePattern': bad pattern {value!r}: {exc}") from None
        return Subscription("subscribePattern", pattern=value)
    try:
        data = json.loads(value)
        pairs = tuple((t, int(p)) for t, ps in data.items() for p in ps)
    except (json.JSONDecodeError, AttributeError, TypeError, ValueError):
        raise OptionError(f"Option 'assign': expected e.g. {{\"topicA\":[0,1]}}, got {value!r}") from None
    return Subscription("assign", assigned=pairs)


def source_options(options: dict, *, streaming: bool) -> SourceOptions:
    """Every option checked; OptionError names the first bad one (an unknown option included)."""
    lowered = _lower(options)
    for key in lowered:
        if not key.startswith("kafka.") and key not in SOURCE_OPTIONS:
            raise OptionError(f"Unknown option '{key}' for the fauxka-kafka source "
                              f"(known: kafka.*, {', '.join(sorted(SOURCE_OPTIONS - {'path'}))})")
    for name in ("endingOffsets", "endingOffsetsByTimestamp", "endingTimestamp"):
        if streaming and name.lower() in lowered:
            raise OptionError(f"Option '{name}' is for batch queries only (as in Spark's connector)")
    starting = _position(lowered, "startingOffsets", "latest" if streaming else "earliest", (EARLIEST, LATEST))
    if not streaming and starting == "latest":
        raise OptionError("Option 'startingOffsets' latest is not valid for batch queries")
    ending = _position(lowered, "endingOffsets", "latest", (LATEST,))
    if ending == "earliest":
        raise OptionError("Option 'endingOffsets' earliest is not valid for batch queries")
    by_ts, end_by_ts = (lowered.get(k) for k in ("startingoffsetsbytimestamp", "endingoffsetsbytimestamp"))
    starting_by_timestamp = offsets_json("startingOffsetsByTimestamp", by_ts, allow=()) if by_ts else None
    ending_by_timestamp = offsets_json("endingOffsetsByTimestamp", end_by_ts, allow=()) if end_by_ts else None
    _check_timestamp_range(starting_by_timestamp, ending_by_timestamp)
    return SourceOptions(
        client=client_conf(options),
        subscription=_subscription(lowered),
        starting=starting,
        ending=ending,
        starting_by_timestamp=starting_by_timestamp,
        starting_timestamp=_int(lowered, "startingTimestamp", None),
        ending_by_timestamp=ending_by_timestamp,
        ending_timestamp=_int(lowered, "endingTimestamp", None),
        max_offsets_per_trigger=_int(lowered, "maxOffsetsPerTrigger", None),
        fail_on_data_loss=_bool(lowered, "failOnDataLoss", True),
        include_headers=_bool(lowered, "includeHeaders", False),
        poll_timeout_ms=_int(lowered, "kafkaConsumer.pollTimeoutMs", 120_000),
    )


def _check_timestamp_range(start: dict | None, end: dict | None) -> None:
    """Both by timestamp: the same partitions, none ending before it starts (Spark's
    KafkaSourceProvider.checkOffsetLimitValidity)."""
    if start is None or end is None:
        return
    pairs = {(t, p) for t, ps in start.items() for p in ps}
    if pairs != {(t, p) for t, ps in end.items() for p in ps}:
        raise OptionError("startingOffsetsByTimestamp and endingOffsetsByTimestamp must name the same partitions")
    for t, p in sorted(pairs):
        if start[t][p] > end[t][p]:
            raise OptionError(f"{t}-{p}: starting timestamp {start[t][p]} is after the ending timestamp {end[t][p]}")


def rate_limit(start: dict, latest: dict, max_rows: int) -> dict:
    """End offsets reading at most `max_rows` records in all, shared in proportion to what each
    partition has waiting (KafkaMicroBatchStream.rateLimit). Offsets keyed "topic" -> "partition"."""
    waiting = {(t, p): latest[t][p] - start.get(t, {}).get(p, 0) for t in latest for p in latest[t]}
    total = sum(max(0, n) for n in waiting.values())
    if total <= max_rows:
        return latest
    end = {t: dict(ps) for t, ps in latest.items()}
    for (t, p), n in waiting.items():
        begin = start.get(t, {}).get(p, 0)
        if n > 0:
            end[t][p] = begin + max(int(n * max_rows / total), 0)
    given = sum(end[t][p] - start.get(t, {}).get(p, 0) for (t, p), n in waiting.items() if n > 0)
    if given == 0:  # fewer rows than partitions: one record from the first that has one
        t, p = next((t, p) for (t, p), n in waiting.items() if n > 0)
        end[t][p] = start.get(t, {}).get(p, 0) + 1
    return end
