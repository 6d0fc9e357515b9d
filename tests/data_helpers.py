"""Raw Produce, Fetch and ListOffsets through fauxka's own client, for exact error codes."""

import time
import uuid

from aiokafka.record.default_records import DefaultRecordBatchBuilder

from tests.admin_helpers import send

NO_UUID = uuid.UUID(int=0)


def batch(values: list[bytes], timestamp: int | None = None, keys: list[bytes] | None = None) -> bytes:
    """One magic-2 batch, stamped now by default (an old CreateTime rolls a segment per batch, as
    Kafka's segment.ms counts from the first batch's timestamp, and a fetch reads one segment)."""
    if timestamp is None:
        timestamp = int(time.time() * 1000)
    builder = DefaultRecordBatchBuilder(2, 0, 0, -1, -1, -1, 1 << 24)
    for i, value in enumerate(values):
        builder.append(i, timestamp + i, keys[i] if keys else None, value, [])
    return bytes(builder.build())


def produce(address: str, topic: str, partition: int, records: bytes, acks: int = -1, timeout_ms: int = 10000,
            version: int = 11):
    """The partition's PartitionProduceResponse, and the whole response."""
    response = send(address, 0, version, {
        "transactional_id": None, "acks": acks, "timeout": timeout_ms,
        "topic_data": [{"name": topic, "partition_data": [{"index": partition, "records": records}]}]})
    return response.responses[0].partition_responses[0], response


def fetch(address: str, topic: str, partition: int, offset: int, version: int = 12, max_wait_ms: int = 0,
          min_bytes: int = 1, current_leader_epoch: int = -1, topic_id: uuid.UUID | None = None,
          session_id: int = 0, session_epoch: int = -1, isolation_level: int = 0, partition_max_bytes: int = 1 << 20,
          max_bytes: int = 1 << 24, rack_id: str = ""):
    """The whole FetchResponse (one topic, one partition asked for)."""
    return send(address, 1, version, {
        "cluster_id": None, "replica_id": -1, "max_wait": max_wait_ms, "min_bytes": min_bytes, "max_bytes": max_bytes,
        "isolation_level": isolation_level, "session_id": session_id, "session_epoch": session_epoch,
        "forgotten_topics_data": (), "rack_id": rack_id,
        "topics": [{"topic": topic, "topic_id": topic_id or NO_UUID, "partitions": [{
            "partition": partition, "current_leader_epoch": current_leader_epoch, "fetch_offset": offset,
            "last_fetched_epoch": -1, "log_start_offset": -1, "partition_max_bytes": partition_max_bytes}]}]},
        timeout_s=max_wait_ms / 1000 + 30)


def list_offset(address: str, topic: str, partition: int, timestamp: int, isolation_level: int = 0,
                version: int = 9, current_leader_epoch: int = -1):
    response = send(address, 2, version, {
        "replica_id": -1, "isolation_level": isolation_level,
        "topics": [{"name": topic, "partitions": [{"partition_index": partition,
                                                    "current_leader_epoch": current_leader_epoch,
                                                    "timestamp": timestamp}]}]})
    return response.topics[0].partitions[0]


def leader_of(cluster, topic: str, partition: int = 0) -> int:
    """The leader the controller's metadata names (it knows a topic it created first)."""
    response = send(cluster.controller_address(), 3, 12, {
        "topics": [{"name": topic, "topic_id": None}], "allow_auto_topic_creation": False,
        "include_topic_authorized_operations": False})
    return next(p.leader_id for p in response.topics[0].partitions if p.partition_index == partition)
