"""Per-partition injected errors (fauxka/model/faults.py's `error` kind on a partition api): which
partitions a request names, and the response with the faulted partitions answering the error, as
Kafka answers partition errors one partition at a time (ReplicaManager's per-partition results).

- Produce: the faulted partitions are taken out of the request before the handler runs (nothing is
  appended for them), then added to its response with the error; acks=0 has no response, so the
  connection is closed instead, as Kafka does when a partition of an acks=0 Produce fails.
- Fetch, ListOffsets, OffsetForLeaderEpoch, DeleteRecords: the handler answers, then the faulted
  partitions' entries get the error (a Fetch's records dropped, its offsets -1).
"""

import dataclasses
from typing import Any, Callable

from .protocol.build import build
from .protocol.codec import response_schema

PRODUCE = 0
FETCH = 1
_TOPIC_NAME_FIELDS = ("name", "topic")
_PARTITION_FIELDS = ("index", "partition_index", "partition", "partition_id")
_TOPIC_LISTS = ("topic_data", "topics", "responses")
_PARTITION_LISTS = ("partition_data", "partitions", "partition_responses")


def _first(entity: Any, names: tuple[str, ...]) -> Any:
    for name in names:
        if hasattr(entity, name):
            return getattr(entity, name)
    return None


def _topic_name(entity: Any, topic_by_id: Callable[[Any], str | None]) -> str | None:
    name = _first(entity, _TOPIC_NAME_FIELDS)
    if not name and getattr(entity, "topic_id", None) is not None:
        name = topic_by_id(entity.topic_id)
    return name


def _walk(entity: Any, topic_by_id):
    """(topic entity, topic name, partition entity, partition index) of a request or response."""
    topics = _first(entity, _TOPIC_LISTS) or ()
    for topic in topics:
        name = _topic_name(topic, topic_by_id)
        for part in _first(topic, _PARTITION_LISTS) or ():
            index = _first(part, _PARTITION_FIELDS)
            if isinstance(index, int) and not isinstance(part, int):
                yield topic, name, part, index


def partitions(body: Any, topic_by_id) -> tuple[tuple[str, int], ...]:
    """Every (topic, partition) a partition api's request names."""
    return tuple((name, index) for _, name, _, index in _walk(body, topic_by_id) if name is not None)


def _without(body: Any, hit: set[tuple[str, int]], topics: str, name: str, parts: str, index: str) -> Any:
    kept_topics = []
    for topic in getattr(body, topics):
        kept = tuple(p for p in getattr(topic, parts) if (getattr(topic, name), getattr(p, index)) not in hit)
        if kept:
            kept_topics.append(dataclasses.replace(topic, **{parts: kept}))
    return dataclasses.replace(body, **{topics: tuple(kept_topics)})


def without(body: Any, hit: set[tuple[str, int]]) -> Any:
    """A Produce request without the faulted partitions."""
    return _without(body, hit, "topic_data", "name", "partition_data", "index")


def _with_errors(key: int, version: int, response: Any, hit: list[tuple[str, int]], entry: Callable[[int], dict],
                 name: str, parts: str, top: dict) -> Any:
    """The handler's response (None: nothing was left to handle) plus `entry(index)` for each faulted
    partition, under its topic; `top`: the response's other fields with their defaults."""
    merged: dict[str, list] = {}
    for topic in response.responses if response is not None else ():
        merged.setdefault(getattr(topic, name), []).extend(getattr(topic, parts))
    for topic_name, index in hit:
        merged.setdefault(topic_name, []).append(entry(index))
    values = {field: getattr(response, field, default) if response is not None else default
              for field, default in top.items()}
    values["responses"] = [{name: n, parts: p} for n, p in merged.items()]
    return build(response_schema(key, version), values)


def produce_with_errors(version: int, response: Any, hit: list[tuple[str, int]], code: int) -> Any:
    """The handler's Produce response plus an error entry for each faulted partition."""
    return _with_errors(PRODUCE, version, response, hit, lambda index: {
        "index": index, "error_code": code, "base_offset": -1, "log_append_time": None, "log_start_offset": -1,
        "record_errors": (), "error_message": "injected by fauxka"},
        "name", "partition_responses", {"throttle_time": 0, "node_endpoints": ()})


def follower_fetch_without(body: Any, hit: set[tuple[str, int]]) -> Any:
    """A follower's (sessionless, by topic name: fauxka/broker/replication/fetcher.py) Fetch without the
    faulted partitions: the leader learns nothing of the follower's position in them."""
    return _without(body, hit, "topics", "topic", "partitions", "partition")


def fetch_with_errors(version: int, response: Any, hit: list[tuple[str, int]], code: int) -> Any:
    """The handler's Fetch response plus an error entry for each faulted partition (topics by name)."""
    return _with_errors(FETCH, version, response, hit, lambda index: {
        "partition_index": index, "error_code": code, "high_watermark": -1, "last_stable_offset": -1,
        "log_start_offset": -1, "aborted_transactions": None, "preferred_read_replica": -1, "records": None},
        "topic", "partitions", {"throttle_time": 0, "error_code": 0, "session_id": 0, "node_endpoints": ()})


_BLANKS = {"records": None, "high_watermark": -1, "last_stable_offset": -1, "log_start_offset": -1,
           "offset": -1, "end_offset": -1, "timestamp": -1, "low_watermark": -1, "aborted_transactions": None,
           "preferred_read_replica": -1}


def patched(response: Any, hit: set[tuple[str, int]], code: int, topic_by_id) -> Any:
    """The response with the faulted partitions' entries answering `code`."""
    topics = _first(response, _TOPIC_LISTS)
    if not topics:
        return response
    list_field = next(n for n in _TOPIC_LISTS if hasattr(response, n))
    new_topics = []
    for topic in topics:
        name = _topic_name(topic, topic_by_id)
        part_field = next((n for n in _PARTITION_LISTS if hasattr(topic, n)), None)
        if part_field is None:
            new_topics.append(topic)
            continue
        parts = []
        for part in getattr(topic, part_field):
            index = _first(part, _PARTITION_FIELDS)
            if (name, index) in hit and hasattr(part, "error_code"):
                blanks = {k: v for k, v in _BLANKS.items() if hasattr(part, k)}
                part = dataclasses.replace(part, error_code=type(part.error_code)(code), **blanks)
            parts.append(part)
        new_topics.append(dataclasses.replace(topic, **{part_field: tuple(parts)}))
    return dataclasses.replace(response, **{list_field: tuple(new_topics)})
