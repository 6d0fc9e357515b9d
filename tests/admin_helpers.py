"""Raw admin requests through fauxka's own client, for exact codes and messages
that the client libraries would hide or refuse to send."""

import asyncio
import uuid

from fauxka.broker.protocol.build import build
from fauxka.broker.protocol.client import request_once
from fauxka.broker.protocol.codec import request_schema


def unique(prefix: str = "t") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def send(address: str, api_key: int, version: int, values: dict, timeout_s: float = 30.0):
    host, _, port = address.rpartition(":")
    request = build(request_schema(api_key, version), values)
    return asyncio.run(request_once(host, int(port), request, timeout_s))


# Topic configs for tests that write old timestamps (2023) and read them back: under the default
# retention.ms (7 days) a retention pass (every 5 minutes) falling between the write and the read
# rightly deletes them, as Kafka's does.
KEEP_OLD_RECORDS = {"retention.ms": "-1"}


def topic_spec(name: str, partitions: int = -1, replication_factor: int = -1,
               assignments: dict[int, list[int]] | None = None, configs: dict | None = None) -> dict:
    return {
        "name": name, "num_partitions": partitions, "replication_factor": replication_factor,
        "assignments": [{"partition_index": p, "broker_ids": b} for p, b in (assignments or {}).items()],
        "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()],
    }


def create_topics(address: str, specs: list[dict], validate_only: bool = False, timeout_ms: int = 10000,
                  version: int = 7):
    """The CreateTopics response's per-topic results, in request order."""
    response = send(address, 19, version, {"topics": specs, "timeout": timeout_ms, "validate_only": validate_only})
    return list(response.topics)


def create_partitions(address: str, topic: str, count: int, timeout_ms: int = 10000):
    """CreatePartitions v3 of one topic to `count` partitions: its result."""
    response = send(address, 37, 3, {"topics": [{"name": topic, "count": count, "assignments": None}],
                                     "timeout": timeout_ms, "validate_only": False})
    return list(response.results)


def partition_count(address: str, topic: str) -> int:
    """How many partitions the broker's Metadata (v12) reports for `topic`."""
    response = send(address, 3, 12, {"topics": [{"name": topic, "topic_id": None}], "allow_auto_topic_creation": False,
                                     "include_topic_authorized_operations": False})
    return len(response.topics[0].partitions)


def delete_topics(address: str, names: list[str] | None = None, ids: list[uuid.UUID] | None = None,
                  timeout_ms: int = 10000, version: int = 6):
    if version >= 6:
        topics = [{"name": n, "topic_id": None} for n in names or []]
        topics += [{"name": None, "topic_id": i} for i in ids or []]
        values = {"topics": topics, "timeout": timeout_ms}
    else:
        values = {"topic_names": names or [], "timeout": timeout_ms}
    return list(send(address, 20, version, values).responses)


def errors(results) -> list[tuple[str, int, str | None]]:
    return [(r.name, int(r.error_code), r.error_message) for r in results]
