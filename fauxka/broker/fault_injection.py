"""Injected faults obeyed (fauxka/model/faults.py says which request each one hits): the one place,
called by fauxka/broker/dispatch.py for every request a client sends (not inside envelopes).

Faults are followed through ZooKeeper watches (zkstore/faults.FaultWatch), so a fault added or
removed anywhere applies here one watch notification later (a few ms on a local ZooKeeper).
A counted fault takes each hit from its znode (compare-and-set) before acting, so its count holds
cluster-wide. A `hang` (or a stopped `replication`) holds the request until the fault is removed or
expires, then closes the connection without answering.
"""

import asyncio
import dataclasses
import datetime
import time
from typing import Any, Awaitable, Callable, Collection, Iterable

from fauxka.controller.partition_leadership import PartitionLeadership
from fauxka.model.errors import ErrorCode
from fauxka.model.faults import PARTITION_APIS, Fault, RequestFacts, affects, encode_obeyed, first_match
from fauxka.zkstore import ZkStore
from fauxka.zkstore import paths as zp
from fauxka.zkstore.faults import FaultStore, FaultWatch
from fauxka.zkstore.link_fault import LinkCut, wait_fault_gone

from . import fault_responses
from .applied import LatestValuePublisher
from .controller_channel_manager import CLIENT_ID_PREFIX as CONTROLLER_PREFIX
from .config import BrokerConfig
from .controller_link import CLIENT_ID_PREFIX as FORWARDER_PREFIX
from .metadata_cache import MetadataCache
from .metrics import BrokerMetrics
from .replication.fetcher import CLIENT_ID_PREFIX as FETCHER_PREFIX
from .protocol.codec import Request
from .request_trace import RequestTrace

HANG_POLL_S = 0.05
NOTICE_WAIT_S = 5.0  # a `storage` fault's broker, saying it obeys it, before the controller acts


class FaultInjector:
    def __init__(self, zk: ZkStore, config: BrokerConfig, cache: MetadataCache, metrics: BrokerMetrics,
                 leadership: PartitionLeadership, is_controller: Callable[[], bool],
                 error_response: Callable[[Request, int], Any], log: Any):
        """`error_response`: an api's answer carrying one error code (fauxka/broker/handlers/table.py's;
        given, not imported: the handlers' context carries this injector)."""
        self._broker_id = config.broker_id
        self._config = config
        self._cache = cache
        self._metrics = metrics
        self._leadership = leadership  # the controller's: `leader` and `storage` faults
        self._is_controller = is_controller
        self._error_response = error_response
        self._log = log
        self.store = FaultStore(zk)
        self.watch = FaultWatch(zk, self._changed)
        self.trace = RequestTrace(zk, config["fauxka.trace.file"], self._publish_seen)
        # what this broker obeys, for fauxka.testing to wait on (FAULTS_SEEN/<id>)
        self.seen = LatestValuePublisher(zk, zp.faults_seen_path(self._broker_id), log, "faults obeyed")
        self.link = LinkCut(zk)  # `zookeeper` faults
        self._changed_event = asyncio.Event()
        self.hits = 0
        self._actions: dict[str, asyncio.Task] = {}  # leader/storage faults this controller is carrying out
        self._done: set[str] = set()  # storage faults whose leaderships this controller moved

    @property
    def active(self) -> bool:
        """Faults to inject or requests to trace: dispatch looks at every request."""
        return bool(self.watch.faults) or self.trace.enabled

    def start(self) -> None:
        self.seen.start()
        self.watch.start()
        self.trace.start()
        self._publish_seen()

    async def stop(self) -> None:
        self.watch.stop()
        self.trace.stop()
        self._changed_event.set()
        tasks = list(self._actions.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)  # a cut link restored on the way
        await self.seen.stop()

    def session_renewed(self) -> None:
        """A new ZooKeeper session: publish what is obeyed again (its node was the old session's)."""
        self.seen.session_renewed()

    def _changed(self) -> None:
        self._changed_event.set()
        self._changed_event = asyncio.Event()
        self.start_actions()
        self._publish_seen()

    def _publish_seen(self) -> None:
        self.seen.put(encode_obeyed(self.watch.faults, self.trace.enabled))

    def start_actions(self) -> None:
        """A `zookeeper` fault on this broker: its link cut (every broker's part). On the active
        controller: carry out the `leader` and `storage` faults not yet under way (after every
        change of the faults, and when this broker becomes controller)."""
        now_ms = int(time.time() * 1000)
        for fault in list(self.watch.faults.values()):
            if (fault.kind == "zookeeper" and fault.scope.broker in (None, self._broker_id)
                    and fault.id not in self._actions and not fault.expired(now_ms)):
                self._start_action(fault, self._cut_zookeeper)
        if self._is_controller():
            for fault in list(self.watch.faults.values()):
                action = {"leader": self._move_leader, "storage": self._leave_failed_log}.get(fault.kind)
                if action is not None and fault.id not in self._actions and fault.id not in self._done:
                    self._start_action(fault, action)

    def _start_action(self, fault: Fault, action) -> None:
        task = asyncio.get_running_loop().create_task(action(fault), name=f"fault-{fault.id}")
        self._actions[fault.id] = task
        task.add_done_callback(lambda _t, i=fault.id: self._actions.pop(i, None))

    async def _cut_zookeeper(self, fault: Fault) -> None:
        """A `zookeeper` fault: this broker's link to ZooKeeper cut until the fault is removed or
        expires (fauxka/zkstore/link_fault.py), watched meanwhile through a session of its own."""
        config, log = self._config, self._log.bind(fault=fault.id)
        await self.seen.flushed(1.0)  # fauxka.testing learns that it is obeyed before the link goes
        self.link.cut_link()
        log.warning("zookeeper link cut (fault)")
        try:
            await wait_fault_gone(config["zookeeper.connect"], fault.id, fault.expires_ms,
                                  config["zookeeper.session.timeout.ms"], log)
        finally:
            self.link.restore_link()
            log.warning("zookeeper link restored (fault gone)")

    async def _move_leader(self, fault: Fault) -> None:
        """A `leader` fault, on the active controller: through its partition leadership, then removed."""
        key = (fault.scope.topic, fault.scope.partition)
        log = self._log.bind(fault=fault.id, topic=key[0], partition=key[1], leader=fault.scope.broker)
        try:
            moved = await self._leadership.move_leader(key, fault.scope.broker)
            log.info("leader fault applied" if moved else "leader fault not applicable (not a live in-sync replica)")
        except Exception as exc:  # the controller moved, ZooKeeper is away: the fault stays for the next one
            log.warning("leader fault failed", error=repr(exc))
            return
        await self.store.remove(fault.id)

    async def _leave_failed_log(self, fault: Fault) -> None:
        """A `storage` fault, on the active controller, once: the failed replicas go offline (Kafka's
        controller on a log dir failure, KafkaController.onReplicasBecomeOffline): their
        leaderships move to another live in-sync replica and they leave the ISRs."""
        failed, cache = fault.scope.broker, self._cache
        try:
            if not await self._noticed_by(failed, fault.id):
                return  # removed meanwhile
            keys = [(t, p) for (t, p), state in cache.partition_states.items()
                    if (state.leader == failed or failed in state.isr) and affects(fault.scope, (t, p))]
            moved = await self._leadership.take_offline(keys, failed)
        except Exception as exc:  # the controller moved: the next one does it
            self._log.warning("storage fault: replicas not taken offline", error=repr(exc))
            return
        self._log.info("replicas on a failed log taken offline", fault=fault.id, broker=failed,
                              partitions=len(moved))
        self._done.add(fault.id)

    async def _noticed_by(self, broker_id: int, fault_id: str) -> bool:
        """Until broker `broker_id` obeys the fault (its follower no longer fetches the failed logs),
        NOTICE_WAIT_S at most: Kafka's controller acts on a failed log once the broker that has it
        says so (its log dir event notification), after that broker has stopped fetching it. Acting
        earlier would let the new leader hear from the failed replica and take it back into the ISR.
        A broker that publishes nothing (stopped) or does not say in time (cut off) is not waited for.
        False when the fault was removed meanwhile (nothing to do)."""
        if broker_id == self._broker_id:
            return True  # this broker obeys it already: the action started from its own watch
        deadline = time.monotonic() + NOTICE_WAIT_S
        while time.monotonic() < deadline:
            if fault_id not in self.watch.faults:
                return False
            seen = await self.store.obeyed_by(broker_id)
            if seen is None or fault_id in seen:
                return True
            await asyncio.sleep(HANG_POLL_S)
        self._log.warning("storage fault: the failed broker did not say it obeys it, its replicas taken offline anyway",
                          fault=fault_id, broker=broker_id)
        return True

    def offline(self, broker_id: int, topic: str, partition: int) -> bool:
        """Whether a `storage` fault in force has failed that broker's log of the partition: Kafka
        takes such a replica offline (ReplicaStateMachine's OfflineReplica) and Metadata lists it in
        offline_replicas on every broker until the log directory is back."""
        now_ms = int(time.time() * 1000)
        return any(f.kind == "storage" and f.scope.broker == broker_id and affects(f.scope, (topic, partition))
                   and not f.expired(now_ms) for f in self.watch.faults.values())

    def failed_log_dirs(self, log_dirs: int) -> int:
        """Kafka's OfflineLogDirectoryCount: each `storage` fault in force on this broker fails a log
        dir (at most `log_dirs` of them)."""
        now_ms = int(time.time() * 1000)
        failed = sum(1 for f in list(self.watch.faults.values())
                     if f.kind == "storage" and f.scope.broker == self._broker_id and not f.expired(now_ms))
        return min(failed, log_dirs)

    def failed_logs(self, keys: Iterable[tuple[str, int]]) -> Collection[tuple[str, int]]:
        """Those of the (topic, partition)s whose log on this broker has failed (`storage` faults in
        force); asked once per follower fetch, so the usual answer (no fault) is at once."""
        if not self.watch.faults:
            return ()
        return {key for key in keys if self.offline(self._broker_id, *key)}

    def facts(self, ctx) -> RequestFacts:
        request = ctx.request
        key = request.api.key
        parts: tuple = ()
        replica_id = -1
        if key in PARTITION_APIS:
            parts = fault_responses.partitions(request.body, ctx.cache.topic_by_id)
        in_session: tuple = ()
        if key == 1:
            body = request.body
            replica_id = body.replica_state.replica_id if request.version >= 15 else body.replica_id
            if replica_id >= 0 and request.version >= 7 and body.session_epoch > 0:
                in_session = ctx.replicas.fetch_session_partitions(body.session_id)
        return RequestFacts(self._broker_id, key, request.version, request.client_id, ctx.principal,
                            parts, replica_id, sending_broker(request.client_id), in_session)

    async def dispatch(self, ctx, run: Callable[[Any], Awaitable[Any]]) -> Any:
        """The response to `ctx`'s request with any fault that hits it applied; `run(ctx)` answers
        it normally."""
        trace = self.trace
        changed = self.changes
        started = time.perf_counter()
        facts = self.facts(ctx)
        fault = first_match(self.watch.faults.values(), facts, int(time.time() * 1000))
        if fault is not None and fault.count is not None and not await self.store.consume(fault.id):
            fault = None  # its last hit went elsewhere
        if fault is None:
            response = await run(ctx)
            if changed.is_set() and (fault := await self._stopping(ctx, facts)) is not None:
                self._hit(ctx, fault)
                response = self._close(ctx)
        else:
            self._hit(ctx, fault)
            response = await self._apply(ctx, fault, facts, run)
        trace.record(ctx, facts, response, fault.id if fault else None, started)
        return response

    @property
    def changes(self) -> asyncio.Event:
        """Set (and replaced) when the faults change: taken before a request runs, it says after
        whether they changed meanwhile."""
        return self._changed_event

    async def changed_meanwhile(self, ctx, response: Any) -> Any:
        """A Fetch that came while no fault was in force (dispatch.py runs those without this
        injector), answered after the faults changed: `response`, unless one now stops it (see
        _stopping)."""
        fault = await self._stopping(ctx, self.facts(ctx))
        if fault is None:
            return response
        self._hit(ctx, fault)
        return self._close(ctx)

    def _hit(self, ctx, fault: Fault) -> None:
        self.hits += 1
        self._metrics.child(self._metrics.injected_faults, fault.kind).inc()
        ctx.log.info("fault injected", fault=fault.id, kind=fault.kind)

    async def _stopping(self, ctx, facts: RequestFacts) -> Fault | None:
        """A follower's fetch waits at its leader (up to replica.fetch.wait.max.ms) for records; one
        that came before a fault stopping that follower's replication (`replication` -1, `link`,
        `storage`) and is answered after it must not carry the records appended since: add_fault
        returned once this broker obeyed, and the next record a test sends must meet the fault. The
        fault that now stops it, if any: the caller drops the answer and closes the connection, and
        the follower's next fetch (a full one: a failed fetch starts its session over) meets it."""
        if facts.replica_id < 0:
            return None
        fault = first_match(self.watch.faults.values(), facts, int(time.time() * 1000))
        if fault is None or not (fault.kind in ("link", "storage") or (fault.kind == "replication"
                                                                      and fault.delay_ms < 0)):
            return None
        if fault.count is not None and not await self.store.consume(fault.id):
            return None
        return fault

    async def _apply(self, ctx, fault: Fault, facts: RequestFacts, run) -> Any:
        kind = fault.kind
        if kind in ("close", "link"):
            return self._close(ctx)
        if kind == "hang" or (kind == "replication" and fault.delay_ms < 0):
            await self._until_gone(fault)
            return self._close(ctx)
        if kind in ("delay", "replication"):
            await asyncio.sleep(fault.delay_s())
            return await run(ctx)
        if kind == "throttle":
            response = await run(ctx)
            if response is None or isinstance(response, bytes) or not hasattr(response, "throttle_time"):
                return response
            return dataclasses.replace(response, throttle_time=datetime.timedelta(milliseconds=fault.throttle_ms))
        return await self._error(ctx, fault, facts, run)  # error, storage

    async def _error(self, ctx, fault: Fault, facts: RequestFacts, run) -> Any:
        code = ErrorCode(fault.error) if fault.kind == "error" else ErrorCode.kafka_storage_error
        request = ctx.request
        key = request.api.key
        if key not in PARTITION_APIS:
            return self._error_response(request, code)
        hit = [tp for tp in facts.partitions if affects(fault.scope, tp)]
        if key == fault_responses.FETCH and facts.replica_id >= 0:  # a follower whose log failed (storage)
            rest = fault_responses.follower_fetch_without(request.body, set(hit))
            response = None
            if rest.topics:
                response = await run(dataclasses.replace(ctx, request=dataclasses.replace(request, body=rest)))
            return fault_responses.fetch_with_errors(request.version, response, hit, code)
        if key == fault_responses.PRODUCE:
            if int(request.body.acks) == 0:
                return self._close(ctx)  # Kafka closes the connection when an acks=0 Produce fails
            rest = fault_responses.without(request.body, set(hit))
            response = None
            if rest.topic_data:
                response = await run(dataclasses.replace(ctx, request=dataclasses.replace(request, body=rest)))
            return fault_responses.produce_with_errors(request.version, response, hit, code)
        response = await run(ctx)
        if response is None or isinstance(response, bytes):
            return response
        return fault_responses.patched(response, set(hit), code, ctx.cache.topic_by_id)

    @staticmethod
    def _close(ctx) -> None:
        ctx.close_after_response()
        return None

    async def _until_gone(self, fault: Fault) -> None:
        """Until the fault is removed or expires (or the broker stops: the task is cancelled)."""
        while True:
            current = self.watch.faults.get(fault.id)
            if current is None or current.expired(int(time.time() * 1000)):
                return
            event = self._changed_event
            try:
                async with asyncio.timeout(HANG_POLL_S * 20):
                    await event.wait()
            except TimeoutError:
                pass  # re-check the expiry


def sending_broker(client_id: str | None) -> int:
    """The broker that sent a request, from the client ids brokers use with each other, else -1."""
    for prefix in (FETCHER_PREFIX, FORWARDER_PREFIX, CONTROLLER_PREFIX):
        if client_id and client_id.startswith(prefix) and client_id[len(prefix):].isdigit():
            return int(client_id[len(prefix):])
    return -1
