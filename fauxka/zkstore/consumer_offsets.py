"""Offsets of OffsetCommit v0 / OffsetFetch v0, kept in ZooKeeper as Kafka 3.9 in ZK mode keeps
them (`KafkaZkClient.setOrCreateConsumerOffset` / `getConsumerOffset`, `ConsumerOffset` in
ZkData): `/consumers/<group>/offsets/<topic>/<partition>` holds the offset as a decimal string.
These are not the group coordinator's offsets: v0 of both apis reads and writes only these."""

from fauxka.model.errors import ErrorCode, KafkaError

from .errors import NoNode, NodeExists, ZkError
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


class ZkConsumerOffsets:
    """The v0 offsets as OffsetCommit v0 and OffsetFetch v0 use them: a failure (ZooKeeper's, or a
    znode that is not a number) is UNKNOWN_SERVER_ERROR, as Kafka's Errors.forException(e)."""

    def __init__(self, zk: ZkStore):
        self._zk = zk

    async def commit(self, group: str, topic: str, partition: int, offset: int) -> None:
        try:
            await set_consumer_offset(self._zk, group, topic, partition, offset)
        except (ZkError, ValueError):
            raise KafkaError(ErrorCode.unknown_server_error) from None

    async def fetch(self, group: str, topic: str, partition: int) -> int | None:
        try:
            return await get_consumer_offset(self._zk, group, topic, partition)
        except (ZkError, ValueError):
            raise KafkaError(ErrorCode.unknown_server_error) from None
