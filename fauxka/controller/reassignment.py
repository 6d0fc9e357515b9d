"""Partition reassignments (KIP-455) on the active controller, as Kafka's ZK-mode controller
carries them out (KafkaController.onPartitionReassignment, 3.9).

U: the topic znode gets RS = TRS + ORS with adding_replicas / removing_replicas (the only place
   the origin replicas are kept, so a new controller resumes from it); replicas a replaced
   reassignment no longer needs leave the ISR.
A: while some target replica is out of the ISR: the leader epoch is bumped; the brokers, which
   follow the topic znode, start the new replicas, which fetch and catch up, and the leader adds
   them to the ISR (AlterPartition).
B: once every target replica is in sync: leadership moves to the first live in-sync target
   replica when the leader is not one (else the epoch is bumped), the removed replicas leave
   the ISR one at a time, then the topic znode gets RS = TRS and no adding/removing; the
   brokers that lost the partition stop their replica and delete its log.
The legacy /admin/reassign_partitions znode is not read. Throttles are not applied.
"""

import asyncio
from collections.abc import Iterable
from typing import Any

from fauxka.model import reassignment as rules
from fauxka.model.errors import ErrorCode, KafkaError
from fauxka.zkstore import BadVersion, MultiFailed, NoNode, ZkStore, ZkUnavailable
from fauxka.zkstore import paths as zp
from fauxka.zkstore.fenced import ControllerMoved, FencedWriter
from fauxka.zkstore.store import Op

from . import leader_election as le
from .broker_parts import Metadata
from .election import ControllerElection
from .partition_leadership import PartitionLeadership
from .role_tasks import RoleTasks

ATTEMPTS = 5  # a topic znode write that lost a race (CreatePartitions) reads it again
RETRY_S = 0.5  # a pass interrupted by ZooKeeper is retried after this

Key = tuple[str, int]


class Reassignments(RoleTasks):
    """Started when this broker becomes controller, stopped when it stops being it."""

    def __init__(self, zk: ZkStore, cache: Metadata, writer: FencedWriter, election: ControllerElection,
                 leadership: PartitionLeadership, log: Any):
        super().__init__()
        self._zk = zk
        self._cache = cache
        self._writer = writer
        self._election = election
        self._leadership = leadership  # PartitionLeadership: live brokers, partition state writes
        self._log = log.bind(component="reassignment")
        self._lock = asyncio.Lock()  # Kafka's controller runs one event at a time
        self._moving: set[Key] = set()  # ControllerContext.partitionsBeingReassigned
        self._wake = asyncio.Event()

    # --- life cycle ------------------------------------------------------------------------

    def start(self) -> None:
        """onControllerFailover: every partition whose topic znode says it is being reassigned is
        resumed (maybeResumeReassignments)."""
        self._moving = {(t, p) for t, a in self._cache.all_topics.items() for p in a.reassigning()}
        self._unsubscribe = self._cache.subscribe(self._on_cache_event)
        self._tasks = [asyncio.get_running_loop().create_task(self._run(), name="reassignments")]

    def _on_cache_event(self, event: tuple) -> None:
        # an ISR change of a moving partition (PartitionReassignmentIsrChange), a broker coming or
        # going, a topic znode changing (a deleted topic ends its reassignments)
        if not self._moving:
            return
        kind = event[0]
        if (kind == "partition" and (event[1], event[2]) in self._moving) or kind == "broker" or \
                (kind == "topic" and any(t == event[1] for t, _ in self._moving)):
            self._wake.set()

    async def _run(self) -> None:
        resumed = False
        while True:
            try:
                async with self._lock:
                    if not resumed:
                        for key in sorted(self._moving):
                            await self._proceed(key, self.assignment(key))
                        resumed = True
                    for key in sorted(self._moving):
                        await self._maybe_complete(key)
            except ControllerMoved:
                return
            except ZkUnavailable as exc:
                self._log.warning("reassignment interrupted", error=str(exc))
                await asyncio.sleep(RETRY_S)
                continue
            except Exception as exc:  # a bug must not end reassignments for good
                self._log.exception("reassignment pass failed", error=repr(exc))
                await asyncio.sleep(RETRY_S)
                continue
            await self._wake.wait()
            self._wake.clear()

    # --- queries ----------------------------------------------------------------------------

    def assignment(self, key: Key) -> rules.Assignment:
        """ControllerContext.partitionFullReplicaAssignment: empty for an unknown partition."""
        topic = self._cache.all_topics.get(key[0])
        replicas = topic.partitions.get(key[1]) if topic is not None else None
        if not replicas:
            return rules.Assignment([])
        return rules.Assignment(list(replicas), list(topic.adding.get(key[1], ())),
                                list(topic.removing.get(key[1], ())))

    async def listing(self, keys: Iterable[Key] | None) -> dict[Key, rules.Assignment]:
        """processListPartitionReassignments: the named partitions (all when None) being reassigned."""
        async with self._lock:
            wanted = sorted(self._moving) if keys is None else list(dict.fromkeys(keys))
            return {k: a for k in wanted if (a := self.assignment(k)).reassigning}

    # --- AlterPartitionReassignments ----------------------------------------------------------------

    async def alter(self, requests: dict[Key, list[int] | None]) -> dict[Key, tuple[ErrorCode, str | None]]:
        """processApiPartitionReassignment: by partition, (error, message). A None target cancels.
        Answered once phase U (and A or B) is written, as Kafka answers; ControllerMoved when this
        broker stopped being controller meanwhile."""
        async with self._lock:
            live = self._leadership.live
            results: dict[Key, tuple[ErrorCode, str | None]] = {}
            planned: dict[Key, rules.Assignment] = {}
            for key, target in requests.items():
                current = self.assignment(key)
                error = rules.validate(current, target, live) if target is not None else None
                if error is not None:
                    results[key] = error
                    continue
                built = rules.build(current, target)
                if built is None:
                    results[key] = (ErrorCode.no_reassignment_in_progress, "No partition reassignment is in progress.")
                else:
                    planned[key] = built
            for key, built in planned.items():  # maybeTriggerPartitionReassignment
                if key[0] in self._cache.deleting or not self.assignment(key).replicas:
                    results[key] = (ErrorCode.unknown_topic_or_partition, rules.PARTITION_NOT_FOUND)
                    continue
                try:
                    await self._proceed(key, built)
                    results[key] = (ErrorCode.none, None)
                except KafkaError as exc:
                    results[key] = (exc.code, exc.message)
                except ControllerMoved:
                    raise
                except Exception as exc:
                    self._log.exception("reassignment failed", topic=key[0], partition=key[1], error=repr(exc))
                    results[key] = (ErrorCode.unknown_server_error,
                                    "The server experienced an unexpected error when processing the request.")
            return {key: results[key] for key in requests}

    # --- the phases ------------------------------------------------------------------------------------

    async def _proceed(self, key: Key, wanted: rules.Assignment) -> None:
        """onPartitionReassignment (under self._lock)."""
        current = self.assignment(key)
        if not current.replicas:
            self._moving.discard(key)
            return
        if (current.replicas, current.adding, current.removing) != (wanted.replicas, wanted.adding, wanted.removing):
            await self._write_assignment(key, wanted)  # U1
            unneeded = [r for r in current.replicas if r not in wanted.replicas]
            if unneeded:  # U3: a replaced reassignment's adding replicas
                await self._remove_from_isr(key, unneeded)
        self._moving.add(key)
        state = self._cache.partition_states.get(key)
        if state is not None and not rules.complete(wanted, state.isr):
            self._log.info("reassigning", topic=key[0], partition=key[1], replicas=wanted.replicas,
                           adding=wanted.adding, removing=wanted.removing)
            await self._bump_epoch(key)  # A1; A2: the adding brokers start their replicas from the znode
        elif state is not None:
            await self._finish(key, wanted)

    async def _maybe_complete(self, key: Key) -> None:
        assignment = self.assignment(key)
        if not assignment.replicas:
            self._moving.discard(key)  # the topic or partition is gone
            return
        state = self._cache.partition_states.get(key)
        if state is not None and rules.complete(assignment, state.isr):
            self._log.info("target replicas in sync", topic=key[0], partition=key[1], target=assignment.target)
            await self._finish(key, assignment)

    async def _finish(self, key: Key, assignment: rules.Assignment) -> None:
        """Phase B."""
        target = assignment.target
        state = self._cache.partition_states[key]
        live = self._leadership.live
        if state.leader not in target or state.leader not in live:  # B3
            leader = rules.reassign_leader(target, state.isr, live)
            if leader is not None:
                await self._leadership.apply_each([key], lambda p, live, epoch: le.bumped(
                    p.state, leader, p.state.isr, epoch) if p.state.leader != leader else None)
            else:
                self._log.error("no target replica can lead", topic=key[0], partition=key[1], target=target)
        else:
            await self._bump_epoch(key)
        await self._remove_from_isr(key, assignment.removing)  # B4, B5 (the znode below stops them)
        await self._write_assignment(key, rules.Assignment(target))  # B6
        self._moving.discard(key)  # B7
        self._log.info("reassignment complete", topic=key[0], partition=key[1], replicas=target)

    async def _bump_epoch(self, key: Key) -> None:
        """updateLeaderEpoch: the same leader and ISR, one leader epoch later."""
        await self._leadership.apply_each([key], lambda p, live, epoch: le.bumped(
            p.state, p.state.leader, p.state.isr, epoch))

    async def _remove_from_isr(self, key: Key, replicas: list[int]) -> None:
        """ReplicaStateMachine's OfflineReplica, one replica at a time as Kafka groups them."""
        for replica in replicas:
            await self._leadership.apply_each([key], lambda p, live, epoch, r=replica: le.without_replica(
                p.state, r, epoch))

    async def _write_assignment(self, key: Key, new: rules.Assignment) -> None:
        """updateReplicaAssignmentForPartition: the topic znode with this partition's assignment,
        conditional on the version read (CreatePartitions writes the same znode)."""
        topic, partition = key
        path = zp.topic_path(topic)
        for _ in range(ATTEMPTS):
            value = await self._zk.get(path)
            if value is None:
                raise KafkaError(ErrorCode.unknown_topic_or_partition, rules.PARTITION_NOT_FOUND)
            read = zp.decode_topic(value[0])
            if partition not in read.partitions:
                raise KafkaError(ErrorCode.unknown_topic_or_partition, rules.PARTITION_NOT_FOUND)
            adding, removing = dict(read.adding), dict(read.removing)
            adding.pop(partition, None)
            removing.pop(partition, None)
            if new.adding:
                adding[partition] = list(new.adding)
            if new.removing:
                removing[partition] = list(new.removing)
            written = zp.TopicAssignment(read.topic_id, {**read.partitions, partition: list(new.replicas)},
                                         adding, removing)
            self._cache.watch_owned([topic])
            try:
                await self._writer.write([Op.set(path, zp.encode_topic(written), value[1].version)])
            except MultiFailed as failed:
                if isinstance(failed.cause, BadVersion):
                    continue
                if isinstance(failed.cause, NoNode):
                    raise KafkaError(ErrorCode.unknown_topic_or_partition, rules.PARTITION_NOT_FOUND) from None
                raise
            except ControllerMoved as exc:
                self._election.resign(str(exc))
                raise
            self._cache.record_assignment(topic, written)
            return
        raise KafkaError(ErrorCode.unknown_server_error,
                         "The server experienced an unexpected error when processing the request.")
