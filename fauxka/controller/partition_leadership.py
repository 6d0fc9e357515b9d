"""Partition leadership on the active controller, as Kafka's ZK-mode controller moves it.

Sources (Kafka 3.9): KafkaController.onBrokerFailure / onBrokerStartup / onControllerFailover
(offline partitions elected, replicas of dead brokers leave ISRs), doControlledShutdown,
processReplicaLeaderElection (ElectLeaders, auto rebalance), tryProcessAlterPartition, and
KafkaZkClient.updateLeaderAndIsr (conditional sets at the partition epoch = znode version).
Kafka's controller runs one event at a time; here one lock serialises every leadership
write, and each write is a fenced multi-op whose set ops expect the version last seen.
The controller records what it wrote in its own cache; every other broker learns it from
its watch on the state znode.
"""

import asyncio
import time
from collections.abc import Iterable
from typing import Any

from fauxka.model.errors import ErrorCode
from fauxka.zkstore import BadVersion, MultiFailed, NoNode, ZkStore, ZkUnavailable
from fauxka.zkstore import paths as zp
from fauxka.zkstore.fenced import ControllerMoved, FencedWriter
from fauxka.zkstore.store import Op

from . import leader_election as le
from .broker_parts import Metadata, Settings
from .election import ControllerElection
from .role_tasks import RoleTasks

ATTEMPTS = 5  # a write that lost a race on a partition epoch re-reads it and tries again
MAX_OPS = 1000  # partition state sets per multi-op (about 150 bytes each; ZooKeeper takes 1 MB)
PREFERRED_STRATEGY = "PreferredReplicaPartitionLeaderElectionStrategy"
UNCLEAN_STRATEGY = "OfflinePartitionLeaderElectionStrategy(true)"


class PartitionLeadership(RoleTasks):
    """Started when this broker becomes controller, stopped when it stops being it."""

    def __init__(self, zk: ZkStore, cache: Metadata, writer: FencedWriter, election: ControllerElection,
                 config: Settings, log: Any):
        super().__init__()
        self._zk = zk
        self._cache = cache
        self._writer = writer
        self._election = election
        self._config = config
        self._log = log.bind(component="leadership")
        self._lock = asyncio.Lock()
        # ControllerContext.shuttingDownBrokerIds, with the broker epoch (registration czxid) of the
        # request: a broker that registered again since (a bounce) is not shutting down any more.
        self._shutting_down: dict[int, int] = {}
        self._known_live: set[int] = set()
        self._wake = asyncio.Event()
        self.unclean_elections = 0  # leaders elected from outside the ISR (the broker's metrics read it)

    # --- life cycle ------------------------------------------------------------------

    def start(self) -> None:
        self._shutting_down.clear()
        self._known_live = set(self._cache.brokers)
        self._unsubscribe = self._cache.subscribe(self._on_cache_event)
        loop = asyncio.get_running_loop()
        self._wake.set()  # onControllerFailover: elect what is offline now
        self._tasks = [loop.create_task(self._reconcile_loop(), name="leadership-reconcile")]
        if self._config["auto.leader.rebalance.enable"]:
            self._tasks.append(loop.create_task(self._rebalance_loop(), name="leadership-rebalance"))

    def _on_cache_event(self, event: tuple) -> None:
        if event[0] == "broker":
            self._wake.set()

    @property
    def shutting_down(self) -> set[int]:
        """Registered brokers whose controlled shutdown this controller has started."""
        epochs = self._cache.broker_epochs
        return {b for b, epoch in self._shutting_down.items() if b in self._cache.brokers and epochs.get(b) == epoch}

    @property
    def live(self) -> set[int]:
        """ControllerContext.liveBrokerIds: registered and not shutting down."""
        return set(self._cache.brokers) - self.shutting_down

    def _unclean(self, topic: str) -> bool:
        value = self._cache.topic_configs.get(topic, {}).get("unclean.leader.election.enable")
        if value is None:
            value = self._cache.broker_configs.get("<default>", {}).get("unclean.leader.election.enable")
        if value is None:
            return bool(self._config["unclean.leader.election.enable"])
        return str(value).lower() == "true"

    def _partitions(self, keys: Iterable[tuple[str, int]] | None = None) -> list[le.Partition]:
        cache = self._cache
        if keys is None:
            return le.partitions_of({t: a.partitions for t, a in cache.all_topics.items()}, cache.partition_states)
        result = []
        for topic, p in keys:
            assignment = cache.all_topics.get(topic)
            state = cache.partition_states.get((topic, p))
            if assignment is not None and p in assignment.partitions and state is not None:
                result.append(le.Partition(topic, p, list(assignment.partitions[p]), state))
        return result

    # --- broker failure and startup ---------------------------------------------------

    async def _guarded(self, action, what: str) -> bool | None:
        """Run one pass of a background task: True when done, None when it should be retried
        (ZooKeeper unreachable, or a bug that must not end the task for good), False when this
        broker is no longer controller."""
        try:
            await action()
            return True
        except ControllerMoved:
            return False
        except ZkUnavailable as exc:
            self._log.warning(f"{what} interrupted", error=str(exc))
        except Exception as exc:
            self._log.exception(f"{what} failed", error=repr(exc))
        return None

    async def _reconcile_loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            outcome = await self._guarded(self.reconcile, "leader election")
            if outcome is False:
                return
            if outcome is None:
                await asyncio.sleep(0.5)
                self._wake.set()

    async def reconcile(self) -> None:
        """onBrokerFailure / onBrokerStartup / onControllerFailover as one level-triggered pass:
        every partition without a live leader gets one (OfflinePartitionLeaderElectionStrategy),
        or NO_LEADER when none can lead; brokers that are not live leave every ISR."""
        async with self._lock:
            registered = set(self._cache.brokers)
            gone = self._known_live - registered
            for broker in set(self._shutting_down) - self.shutting_down:  # gone, or registered anew
                del self._shutting_down[broker]
            self._known_live = registered
            if gone:
                self._log.info("brokers lost", brokers=sorted(gone))
            await self._write_computed(None, self._offline_plan)

    def _offline_plan(self, partitions: list[le.Partition]) -> dict[tuple[str, int], zp.PartitionState]:
        live, epoch, stopping = self.live, self._election.epoch, self.shutting_down
        registered = set(self._cache.brokers)
        plan = {}
        for p in partitions:
            if p.topic in self._cache.deleting:
                continue  # onReplicasBecomeOffline leaves topics queued for deletion alone
            state = p.state
            if le.needs_offline_election(p, live) and state.leader not in stopping:
                new = le.elect_offline(p, live, self._unclean(p.topic), epoch)
                if new is not None and new.leader not in state.isr:  # Kafka's UncleanLeaderElectionsPerSec
                    self.unclean_elections += 1
                if new is None and state.leader != le.NO_LEADER:
                    new = le.without_replica(state, state.leader, epoch) or le.bumped(state, le.NO_LEADER,
                                                                                      state.isr, epoch)
                if new is not None:
                    state = new
            dead = [r for r in state.isr if r not in registered and r != state.leader]
            for replica in dead:
                shrunk = le.without_replica(state, replica, epoch)
                if shrunk is not None and (shrunk.leader, shrunk.isr) != (state.leader, state.isr):
                    state = shrunk  # a last ISR member stays: nothing to write for it
            if state is not p.state:
                plan[(p.topic, p.partition)] = state
        return plan

    # --- controlled shutdown ----------------------------------------------------------

    async def controlled_shutdown(self, broker_id: int, broker_epoch: int) -> list[tuple[str, int]]:
        """doControlledShutdown: leaderships of `broker_id` move to another live in-sync replica,
        it leaves the ISRs it follows in; the partitions (RF > 1) it still leads are returned.
        LookupError: not a registered broker (BROKER_NOT_AVAILABLE); PermissionError: a stale
        broker epoch (STALE_BROKER_EPOCH)."""
        async with self._lock:
            if broker_id not in self._cache.brokers:
                raise LookupError(f"Broker id {broker_id} does not exist.")
            known = self._cache.broker_epochs.get(broker_id, -1)
            if broker_epoch != -1 and broker_epoch < known:
                raise PermissionError(f"Received controlled shutdown request from an old broker epoch "
                                      f"{broker_epoch} for broker {broker_id}. Current broker epoch is {known}.")
            self._shutting_down[broker_id] = known
            self._log.info("controlled shutdown", broker=broker_id)

            def plan(partitions: list[le.Partition]) -> dict:
                live, stopping, epoch, out = self.live, self.shutting_down, self._election.epoch, {}
                for p in partitions:
                    if broker_id not in p.replicas or len(p.replicas) <= 1 or p.topic in self._cache.deleting:
                        continue
                    if p.state.leader == broker_id:
                        new = le.elect_controlled_shutdown(p, live, stopping, epoch)
                    else:
                        new = le.without_replica(p.state, broker_id, epoch)
                    if new is not None:
                        out[(p.topic, p.partition)] = new
                return out

            await self._write_computed(None, plan)
            return sorted((p.topic, p.partition) for p in self._partitions()
                          if p.state.leader == broker_id and len(p.replicas) > 1 and p.topic not in self._cache.deleting)

    # --- preferred leaders ------------------------------------------------------------------

    async def _rebalance_loop(self) -> None:
        interval = self._config["leader.imbalance.check.interval.seconds"]
        while True:
            await asyncio.sleep(interval)
            if await self._guarded(self.rebalance, "preferred leader rebalance") is False:
                return

    async def rebalance(self) -> int:
        """checkAndTriggerAutoLeaderRebalance; the number of partitions moved."""
        async with self._lock:
            percentage = self._config["leader.imbalance.per.broker.percentage"]
            live, epoch = self.live, self._election.epoch

            def plan(partitions: list[le.Partition]) -> dict:
                out = {}
                for p in le.rebalance_candidates(partitions, live, percentage, self._cache.deleting):
                    new = le.elect_preferred(p, live, epoch)
                    if new is not None:
                        out[(p.topic, p.partition)] = new
                return out

            written = await self._write_computed(None, plan)
            if written:
                self._log.info("preferred leaders restored", partitions=len(written))
            return len(written)

    async def elect_leaders(self, preferred: bool, keys: list[tuple[str, int]] | None
                            ) -> dict[tuple[str, int], tuple[ErrorCode, str | None]]:
        """processReplicaLeaderElection for ElectLeaders: by partition, (error, message); NONE when
        the wanted leader was written. keys None: every partition."""
        async with self._lock:
            cache, live, epoch = self._cache, self.live, self._election.epoch
            if keys is None:
                keys = [(t, p) for t, a in cache.all_topics.items() for p in a.partitions]
            results: dict[tuple[str, int], tuple[ErrorCode, str | None]] = {}
            electable = []
            for key in dict.fromkeys(keys):
                found = self._partitions([key])
                if not found:
                    results[key] = (ErrorCode.unknown_topic_or_partition, "The partition does not exist.")
                elif key[0] in cache.deleting:
                    results[key] = (ErrorCode.invalid_topic_exception, "The topic is being deleted")
                elif (found[0].state.leader == found[0].replicas[0]) if preferred else \
                        (found[0].state.leader != le.NO_LEADER and found[0].state.leader in live):
                    results[key] = (ErrorCode.election_not_needed, None)
                else:
                    electable.append(key)

            def plan(partitions: list[le.Partition]) -> dict:
                out = {}
                for p in partitions:
                    new = (le.elect_preferred(p, live, epoch) if preferred
                           else le.elect_offline(p, live, True, epoch))
                    if new is not None:
                        out[(p.topic, p.partition)] = new
                return out

            written = await self._write_computed(electable, plan) if electable else set()
            strategy = PREFERRED_STRATEGY if preferred else UNCLEAN_STRATEGY
            failed = ErrorCode.preferred_leader_not_available if preferred else ErrorCode.eligible_leaders_not_available
            for topic, p in electable:
                if (topic, p) in written:
                    results[(topic, p)] = (ErrorCode.none, None)
                else:
                    results[(topic, p)] = (failed, f"Failed to elect leader for partition {topic}-{p} "
                                                   f"under strategy {strategy}")
            return results

    async def move_leader(self, key: tuple[str, int], target: int) -> bool:
        """A `leader` fault (fauxka/model/faults.py): `target` leads the partition, one leader epoch later
        (an in-sync replica only, as a preferred election requires). True once it leads."""
        await self._apply_each([key], lambda p, live, epoch: le.elect_given(p, target, live, epoch))
        state = self._cache.partition_states.get(key)
        return state is not None and state.leader == target

    async def take_offline(self, keys: list[tuple[str, int]], replica: int) -> set[tuple[str, int]]:
        """A `storage` fault: `replica`'s logs of `keys` failed (le.take_offline); the keys written."""
        return await self._apply_each(keys, lambda p, live, epoch: le.take_offline(p, replica, live, epoch))

    async def apply_each(self, keys, change) -> set[tuple[str, int]]:
        """Write `change(partition, live, controller_epoch)` (a PartitionState, or None for no
        change) for each of `keys`, serialised with every other leadership write (reassignments)."""
        return await self._apply_each(keys, change)

    async def _apply_each(self, keys, change) -> set[tuple[str, int]]:
        async with self._lock:
            live, epoch = self.live, self._election.epoch
            return await self._write_computed(keys, lambda partitions: {
                (p.topic, p.partition): s for p in partitions if (s := change(p, live, epoch)) is not None})

    # --- AlterPartition --------------------------------------------------------------------

    async def alter_partition(self, changes: dict[tuple[str, int], le.IsrChange], version: int
                              ) -> dict[tuple[str, int], tuple[ErrorCode, zp.PartitionState | None]]:
        """tryProcessAlterPartition after the broker checks: by partition, (error, state)."""
        async with self._lock:
            live = self.live
            results: dict[tuple[str, int], tuple[ErrorCode, zp.PartitionState | None]] = {}
            for attempt in range(ATTEMPTS):
                to_write = {}
                for key, change in changes.items():
                    if key in results and results[key][0] != ErrorCode.invalid_update_version:
                        continue
                    assigned = key[1] in self._cache.partitions_of(key[0])
                    current = self._cache.partition_states.get(key) if assigned else None
                    verdict, state = le.check_alter_partition(current, change, live, version)
                    if verdict == "write":
                        to_write[key] = zp.PartitionState(state.leader, state.leader_epoch,
                                                          self._election.epoch, state.isr, state.zk_version)
                    else:
                        results[key] = (ErrorCode.none if verdict == "same" else ErrorCode[verdict], state)
                if not to_write:
                    break
                try:
                    written = await self._write(to_write)
                except _Stale as stale:
                    if not await self._refresh(stale.key):
                        results[stale.key] = (ErrorCode.unknown_topic_or_partition, None)
                        changes = {k: v for k, v in changes.items() if k != stale.key}
                    continue
                for key in to_write:
                    results[key] = (ErrorCode.none, self._cache.partition_states[key]) if key in written \
                        else (ErrorCode.invalid_update_version, None)
                break
            else:
                for key in changes:
                    results.setdefault(key, (ErrorCode.invalid_update_version, None))
            return results

    # --- writes ---------------------------------------------------------------------------

    async def _write_computed(self, keys, plan) -> set[tuple[str, int]]:
        """Compute `plan(partitions)` from the cache and write it; on a stale partition epoch,
        re-read that znode and compute again for what is not written yet. The keys written."""
        gone: set[tuple[str, int]] = set()
        written: set[tuple[str, int]] = set()
        for _ in range(ATTEMPTS):
            states = {k: v for k, v in plan(self._partitions(keys)).items() if k not in gone and k not in written}
            if not states:
                return written
            try:
                return written | await self._write(states)
            except _Stale as stale:
                written |= stale.written
                if not await self._refresh(stale.key):
                    gone.add(stale.key)  # deleted meanwhile (topic deletion)
        self._log.warning("partition states kept changing under the controller")
        return written

    async def _write(self, states: dict[tuple[str, int], zp.PartitionState]) -> set[tuple[str, int]]:
        """KafkaZkClient.updateLeaderAndIsr as fenced multi-ops of at most MAX_OPS each (ZooKeeper's
        1 MB request limit): each set expects the version the state was computed from; the cache
        records the versions written. _Stale names the first partition whose version moved."""
        keys = list(states)
        written: set[tuple[str, int]] = set()
        for start in range(0, len(keys), MAX_OPS):
            chunk = keys[start:start + MAX_OPS]
            ops = [Op.set(zp.partition_state_path(t, p), zp.encode_partition_state(states[(t, p)]),
                          states[(t, p)].zk_version) for t, p in chunk]
            try:
                results = await self._writer.write(ops)
            except MultiFailed as failed:
                if isinstance(failed.cause, (BadVersion, NoNode)):
                    raise _Stale(chunk[failed.index], written) from None
                raise
            except ControllerMoved as exc:
                self._election.resign(str(exc))
                raise
            for key, stat in zip(chunk, results):
                s = states[key]
                self._cache.record_partition_state(key[0], key[1], zp.PartitionState(
                    s.leader, s.leader_epoch, s.controller_epoch, s.isr, stat.version))
                written.add(key)
        self._log.info("partition states written", partitions=len(keys), written_at=time.time())
        return written

    async def _refresh(self, key: tuple[str, int]) -> bool:
        """Read a partition state the controller's cache had stale; False when it no longer exists."""
        value = await self._zk.get(zp.partition_state_path(*key))
        if value is None:
            return False
        self._cache.record_partition_state(key[0], key[1], zp.decode_partition_state(value[0], value[1].version))
        return True


class _Stale(Exception):
    def __init__(self, key: tuple[str, int], written: set[tuple[str, int]]):
        super().__init__(f"partition epoch of {key} moved")
        self.key, self.written = key, written
