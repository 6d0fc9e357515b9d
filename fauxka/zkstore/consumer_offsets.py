"""Offsets of OffsetCommit v0 / OffsetFetch v0, kept in ZooKeeper as Kafka 3.9 in ZK mode keeps
them (`KafkaZkClient.setOrCreateConsumerOffset` / `getConsumerOffset`, `ConsumerOffset` in
ZkData): `/consumers/<group>/offsets/<topic>/<partition>` holds the offset as a decimal string.
These are not the group coordinator's offsets: v0 of both apis reads and writes only these."""

from .errors import NoNode, NodeExists
from .store import ZkStore


def consumer_offset_path(group: str, topic: str, partition: int) -> str:
    return f"/consumers/{group}/offsets/{topic}/{partition}"


async def set_consumer_offset(zk: ZkStore, group: str, topic: str, partition: int, offset: int) -> None:
    """Set the znode, creating it (and its parents) when missing, as setOrCreateConsumerOffset."""
    path, data = consumer_offset_path(group, topic, partition), str(offset).encode()
    try:
        await zk.set(path, data)
    except NoNode:
        try:
            await zk.create(path, data, makepath=True)
        except NodeExists:  # created meanwhile by another commit: Kafka's createRecursive then sets
            await zk.set(path, data)


async def get_consumer_offset(zk: ZkStore, group: str, topic: str, partition: int) -> int | None:
    """The stored offset, None when there is none."""
    found = await zk.get(consumer_offset_path(group, topic, partition))
    return None if found is None else int(found[0].decode())
