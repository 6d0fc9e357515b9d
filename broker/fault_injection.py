"""Injected faults obeyed (model/faults.py says which request each one hits): the one place,
called by broker/dispatch.py for every request a client sends (not inside envelopes).

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
from typing import Any, Awaitable, Callable

from model.errors import ErrorCode
from model.faults import PARTITION_APIS, Fault, RequestFacts, affects, first_match
from zkstore.faults import FaultStore, FaultWatch

from . import fault_responses
from .controller_link import CLIENT_ID_PREFIX as FORWARDER_PREFIX
from .replication.fetcher import CLIENT_ID_PREFIX as FETCHER_PREFIX
from .request_trace import RequestTrace
from .handlers.error_responses import error_response

HANG_POLL_S = 0.05


class FaultInjector:
    def __init__(self, broker):
        self._broker = broker
        self.store = FaultStore(broker.zk)
        self.watch = FaultWatch(broker.zk, self._changed)
        self.trace = RequestTrace(broker)
        self._changed_event = asyncio.Event()
        self.hits = 0
        self._actions: dict[str, asyncio.Task] = {}  # leader/storage faults this controller is carrying out
        self._done: set[str] = set()  # storage faults whose leaderships this controller moved

    def start(self) -> None:
        self.watch.start()
        self.trace.start()

    def stop(self) -> None:
        self.watch.stop()
        self.trace.stop()
        self._changed_event.set()
        for task in self._actions.values():
            task.cancel()

    def _changed(self) -> None:
        self._changed_event.set()
        self._changed_event = asyncio.Event()
        self.start_actions()

    def start_actions(self) -> None:
        """On the active controller: carry out the `leader` faults not yet under way (after every
        change of the faults, and when this broker becomes controller)."""
        if self._broker.is_controller:
            for fault in list(self.watch.faults.values()):
                action = {"leader": self._move_leader, "storage": self._leave_failed_log}.get(fault.kind)
                if action is not None and fault.id not in self._actions and fault.id not in self._done:
                    task = asyncio.get_running_loop().create_task(action(fault), name=f"fault-{fault.id}")
                    self._actions[fault.id] = task
                    task.add_done_callback(lambda _t, i=fault.id: self._actions.pop(i, None))

    async def _move_leader(self, fault: Fault) -> None:
        """A `leader` fault, on the active controller: through its partition leadership, then removed."""
        key = (fault.scope.topic, fault.scope.partition)
        log = self._broker.log.bind(fault=fault.id, topic=key[0], partition=key[1], leader=fault.scope.broker)
        try:
            moved = await self._broker.leadership.move_leader(key, fault.scope.broker)
            log.info("leader fault applied" if moved else "leader fault not applicable (not a live in-sync replica)")
        except Exception as exc:  # the controller moved, ZooKeeper is away: the fault stays for the next one
            log.warning("leader fault failed", error=repr(exc))
            return
        await self.store.remove(fault.id)

    async def _leave_failed_log(self, fault: Fault) -> None:
        """A `storage` fault, on the active controller, once: the failed replica's leaderships move to
        another in-sync replica (Kafka's controller on a log dir failure: its replicas go offline)."""
        failed, cache = fault.scope.broker, self._broker.cache
        keys = [(t, p) for (t, p), state in cache.partition_states.items()
                if state.leader == failed and (fault.scope.topic in (None, t))
                and fault.scope.partition in (None, p)]
        for key in keys:
            others = [b for b in cache.partition_states[key].isr if b != failed and b in cache.brokers]
            try:
                if others and await self._broker.leadership.move_leader(key, others[0]):
                    self._broker.log.info("leadership moved off a failed log", fault=fault.id, topic=key[0],
                                          partition=key[1], leader=others[0])
            except Exception as exc:  # the controller moved: the next one does it
                self._broker.log.warning("storage fault: leadership not moved", error=repr(exc))
                return
        self._done.add(fault.id)

    def facts(self, ctx) -> RequestFacts:
        request = ctx.request
        key = request.api.key
        parts: tuple = ()
        replica_id = -1
        if key in PARTITION_APIS:
            parts = fault_responses.partitions(request.body, ctx.cache.topic_by_id)
        if key == 1:
            body = request.body
            replica_id = body.replica_state.replica_id if request.version >= 15 else body.replica_id
        return RequestFacts(self._broker.broker_id, key, request.version, request.client_id, ctx.principal,
                            parts, replica_id, sending_broker(request.client_id))

    async def dispatch(self, ctx, run: Callable[[Any], Awaitable[Any]]) -> Any:
        """The response to `ctx`'s request with any fault that hits it applied; `run(ctx)` answers
        it normally."""
        trace = self.trace
        if not self.watch.faults and not trace.enabled:
            return await run(ctx)
        started = time.perf_counter()
        facts = self.facts(ctx)
        fault = first_match(self.watch.faults.values(), facts, int(time.time() * 1000))
        if fault is not None and fault.count is not None and not await self.store.consume(fault.id):
            fault = None  # its last hit went elsewhere
        if fault is None:
            response = await run(ctx)
        else:
            self.hits += 1
            self._broker.metrics.child(self._broker.metrics.injected_faults, fault.kind).inc()
            ctx.log.info("fault injected", fault=fault.id, kind=fault.kind)
            response = await self._apply(ctx, fault, facts, run)
        trace.record(ctx, facts, response, fault.id if fault else None, started)
        return response

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
            return error_response(request, code)
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
        if ctx.connection is not None:
            ctx.connection.close_after_response = True
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
    for prefix in (FETCHER_PREFIX, FORWARDER_PREFIX):
        if client_id and client_id.startswith(prefix) and client_id[len(prefix):].isdigit():
            return int(client_id[len(prefix):])
    return -1
