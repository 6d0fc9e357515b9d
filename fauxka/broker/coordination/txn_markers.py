"""Transaction markers, the coordinator's sender (Kafka's TransactionMarkerChannelManager): the
transaction coordinator's TxnMarkerChannel (fauxka/coordinator/txn/coordinator.py).

`MarkerSender.send_markers(pid, epoch, commit, coordinator_epoch, partitions)` returns once every
partition has its COMMIT/ABORT control batch: partitions are grouped by their current leader
(metadata cache), this broker's own are written directly by the partition writer
(replica_writer.py, as the leader's WriteTxnMarkers), the others get WriteTxnMarkers v1 over an
inter-broker connection (`dial`); whatever failed (a leader change, an unreachable broker) is
retried with the leader looked up again, until it succeeds or the topic is gone. The caller's task
owns the loop (cancelled when the coordinator unloads).
"""

import asyncio
from typing import Awaitable, Callable

from fauxka.model.errors import ErrorCode

from ..inter_broker import InterBrokerConnectError
from ..metadata_cache import MetadataCache
from ..protocol.build import build
from ..protocol.framing import FrameError
from ..protocol.codec import RequestParseError, request_schema
from .replica_writer import ReplicaPartitionWriter

TopicPartition = tuple[str, int]
_VERSION = 1
_RETRY_S = 0.1
CLIENT_ID_PREFIX = "fauxka-txn-markers-"


class MarkerSender:
    def __init__(self, writer: ReplicaPartitionWriter, cache: MetadataCache, broker_id: int,
                 dial: Callable[[int, float, str], Awaitable], timeout_ms: int, log):
        """`dial(broker_id, timeout_s, client_id)`: a pipelined connection to that broker's
        inter-broker listener (fauxka/broker/inter_broker.py's connect)."""
        self._writer = writer
        self._cache = cache
        self._broker_id = broker_id
        self._dial = dial
        self._timeout_ms = timeout_ms
        self._channels: dict[int, object] = {}
        self._log = log.bind(component="txn-markers")

    async def send_markers(self, producer_id: int, epoch: int, commit: bool, coordinator_epoch: int,
                   partitions: set[TopicPartition]) -> None:
        remaining = set(partitions)
        while remaining:
            cache = self._cache
            by_leader: dict[int, list[TopicPartition]] = {}
            for tp in sorted(remaining):
                if tp[0] not in cache.topics:
                    remaining.discard(tp)  # a deleted topic needs no marker (as Kafka drops them)
                    continue
                state = cache.partition_states.get(tp)
                by_leader.setdefault(state.leader if state is not None else -1, []).append(tp)
            outcomes = await asyncio.gather(*(self._to_leader(leader, tps, producer_id, epoch, commit, coordinator_epoch)
                                              for leader, tps in by_leader.items() if leader >= 0))
            for done in outcomes:
                remaining -= done
            if remaining:
                await asyncio.sleep(_RETRY_S)

    async def _to_leader(self, leader: int, tps: list[TopicPartition], producer_id: int, epoch: int, commit: bool,
                         coordinator_epoch: int) -> set[TopicPartition]:
        if leader == self._broker_id:
            results = await self._writer.write_markers(producer_id, epoch, commit, coordinator_epoch, tps, self._timeout_ms)
            return {tp for tp, code in results.items() if code == ErrorCode.none}
        topics: dict[str, list[int]] = {}
        for topic, index in tps:
            topics.setdefault(topic, []).append(index)
        request = build(request_schema(27, _VERSION), {"markers": [{
            "producer_id": producer_id, "producer_epoch": epoch, "transaction_result": commit,
            "coordinator_epoch": coordinator_epoch,
            "topics": [{"name": t, "partition_indexes": ps} for t, ps in topics.items()]}]})
        timeout_s = self._timeout_ms / 1000
        try:
            channel = self._channels.get(leader)
            if channel is None or channel.closed:
                channel = self._channels[leader] = await self._dial(
                    leader, timeout_s, f"{CLIENT_ID_PREFIX}{self._broker_id}")
            response = await channel.send(request, timeout_s + 1)
        except (InterBrokerConnectError, FrameError, ConnectionError, OSError, asyncio.TimeoutError, RequestParseError) as exc:
            self._log.info("writing transaction markers failed", leader=leader, error=repr(exc))
            await self._drop(leader)
            return set()
        done = set()
        for marker in response.markers:
            for topic in marker.topics:
                for p in topic.partitions:
                    if p.error_code == ErrorCode.none:
                        done.add((topic.name, int(p.partition_index)))
        return done

    async def _drop(self, leader: int) -> None:
        channel = self._channels.pop(leader, None)
        if channel is not None:
            await channel.close()

    async def close(self) -> None:
        for leader in list(self._channels):
            await self._drop(leader)
