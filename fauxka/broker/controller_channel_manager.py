"""On the active controller: tells the brokers what it wrote to ZooKeeper, as Kafka's
ZooKeeper-mode controller does (ControllerChannelManager, ControllerBrokerRequestBatch).

One queue and one sender per registered broker. The controller records its own writes in its
metadata cache (partition states, topics created, reassigned, deleted); each such change marks the
partitions pending for every broker, and each sender sends what is pending in one batch as soon as
its previous batch is answered: LeaderAndIsr to the replicas, UpdateMetadata to all, StopReplica to
the replicas of a deleted topic (controller_messages.py builds them from the cache at send time, so
a partition changed twice while a batch was out goes once, in its newest state).

A broker that registers (starts, or comes back on a new session: a new broker epoch), and every
broker when this one becomes controller (KafkaController.onControllerFailover, onBrokerStartup),
gets the full state. A send that fails (connection lost, timeout) is retried with the full state on
a new connection until the broker goes away; an answer with an error (STALE_CONTROLLER_EPOCH,
STALE_BROKER_EPOCH) is logged and not retried, as Kafka's RequestSendThread does. The controller does
not send to itself: its cache is where the requests are built from.
"""

import asyncio
from typing import Any

from fauxka.model.errors import ErrorCode

from . import controller_messages as messages
from .config import BrokerConfig
from .inter_broker import InterBrokerConnectError, InterBrokerConnector
from .metadata_cache import MetadataCache
from .protocol.codec import RequestParseError

CLIENT_ID_PREFIX = "fauxka-controller-"  # + the controller's id; fault_injection reads the sender from it
RETRY_BACKOFF_S = 0.1
Key = tuple[str, int]


class ControllerChannelManager:
    def __init__(self, broker_id: int, config: BrokerConfig, cache: MetadataCache, inter_broker: InterBrokerConnector,
                 log: Any):
        self._broker_id = broker_id
        self._config = config
        self._cache = cache
        self._inter_broker = inter_broker
        self._log = log
        self._senders: dict[int, _BrokerSender] = {}
        self._unsubscribe = None
        self._epoch = -1
        self._assignments: dict = {}  # topic -> its assignment as last seen: the replicas of a deleted one
        self.changes = 0  # changes queued to the senders so far, each in their next batch
        self._progress = asyncio.Event()  # a sender delivered a batch or failed

    # what its per-broker senders use
    @property
    def broker_id(self) -> int:
        return self._broker_id

    @property
    def config(self) -> BrokerConfig:
        return self._config

    @property
    def log(self) -> Any:
        return self._log

    def connect(self, broker_id: int, timeout_s: float, client_id: str):
        return self._inter_broker.connect(broker_id, timeout_s, client_id)

    @property
    def epoch(self) -> int:
        return self._epoch

    def start(self, controller_epoch: int) -> None:
        """This broker became the active controller with `controller_epoch`."""
        self.halt()
        self._epoch = controller_epoch
        self._assignments = dict(self._cache.all_topics)
        self._unsubscribe = self._cache.subscribe(self._on_cache_event)
        for broker_id in list(self._cache.brokers):
            self._follow(broker_id)

    def halt(self) -> list[asyncio.Task]:
        """No longer controller (or stopping): the senders end at once; their tasks are returned."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        senders, self._senders = self._senders, {}
        self.progressed()
        return [s.cancel() for s in senders.values()]

    async def stop(self) -> None:
        await asyncio.gather(*self.halt(), return_exceptions=True)

    # --- what changed -----------------------------------------------------------------------------

    async def wait_delivered(self, timeout_s: float) -> bool:
        """Until every change seen so far has reached every registered broker whose sender is not
        failing (a broker that does not answer is not waited for), at most `timeout_s`; whether it
        did. An admin write is answered once the brokers serve it: a client's next request to any
        broker finds the topic (Kafka's answer waits only for the controller's own cache)."""
        target = self.changes
        try:
            async with asyncio.timeout(max(timeout_s, 0)):
                while not all(s.caught_up(target) for s in self._senders.values()):
                    self._progress.clear()
                    await self._progress.wait()
        except TimeoutError:
            return False
        return True

    def progressed(self) -> None:
        self._progress.set()

    def _on_cache_event(self, event: tuple) -> None:
        kind = event[0]
        if kind == "partition":
            self._pending({(event[1], event[2])})
        elif kind == "topic":
            topic = event[1]
            assignment = self._cache.all_topics.get(topic)
            if assignment is not None:
                self._assignments[topic] = assignment
                self._pending({(topic, p) for p in assignment.partitions})
            else:
                gone = self._assignments.pop(topic, None)
                if gone is not None:
                    self.changes += 1
                    for sender in self._senders.values():
                        sender.deleted(topic, sorted(gone.partitions), sender.broker_id in
                                       messages.assignment_replicas(gone))
        elif kind == "broker":
            self._follow(event[1])

    def _pending(self, keys: set[Key]) -> None:
        self.changes += 1
        for sender in self._senders.values():
            sender.add(keys)

    def _follow(self, broker_id: int) -> None:
        """A broker registered, re-registered or went away: its sender (re)started or ended."""
        if broker_id == self._broker_id:
            return
        epoch = self._cache.broker_epochs.get(broker_id)
        sender = self._senders.get(broker_id)
        if sender is not None and (epoch is None or sender.broker_epoch != epoch):
            sender.cancel()
            del self._senders[broker_id]
            sender = None
            self.progressed()  # nobody waits for a broker gone
        if sender is None and epoch is not None and broker_id in self._cache.brokers:
            self._senders[broker_id] = _BrokerSender(self, broker_id, epoch)

    # --- one batch --------------------------------------------------------------------------------

    def batch(self, broker_id: int, broker_epoch: int, full: bool, keys: set[Key],
              deleted: dict[str, list[int]], stop: dict[str, list[int]]) -> list:
        """The requests for one broker, in Kafka's order: LeaderAndIsr, UpdateMetadata, StopReplica."""
        cache, me, epoch = self._cache, self._broker_id, self._epoch
        if full:
            keys = set(cache.partition_states)
        requests = [messages.leader_and_isr(cache, me, epoch, broker_id, broker_epoch, keys),
                    messages.update_metadata(cache, me, epoch, broker_epoch, keys, deleted)]
        stop = {t: p for t, p in stop.items() if t not in cache.all_topics}  # not one created again since
        if stop:
            requests.append(messages.stop_replica(me, epoch, broker_epoch, stop))
        return [r for r in requests if r is not None]


class _BrokerSender:
    """One broker's queue (the partitions pending, deleted topics) and the task sending it."""

    def __init__(self, manager: ControllerChannelManager, broker_id: int, broker_epoch: int):
        self._manager = manager
        self.broker_id = broker_id
        self.broker_epoch = broker_epoch
        self._full = True  # a broker new to this controller gets everything first
        self._keys: set[Key] = set()
        self._deleted: dict[str, list[int]] = {}
        self._stop: dict[str, list[int]] = {}  # deleted topics this broker held replicas of
        self.delivered = -1  # the manager's changes count its last delivered batch covered (-1: none yet)
        self.failing = False  # its last send failed: retried, not waited for
        self._wake = asyncio.Event()
        self._wake.set()
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"controller-to-broker-{broker_id}")

    def add(self, keys: set[Key]) -> None:
        if not self._full:
            self._keys |= keys
        self._wake.set()

    def deleted(self, topic: str, partitions: list[int], replica: bool) -> None:
        self._keys = {k for k in self._keys if k[0] != topic}
        self._deleted[topic] = partitions
        if replica:
            self._stop[topic] = partitions
        self._wake.set()

    def caught_up(self, changes: int) -> bool:
        return self.failing or self.delivered >= changes

    def cancel(self) -> asyncio.Task:
        self._task.cancel()
        return self._task

    async def _run(self) -> None:
        manager = self._manager
        conn = None
        timeout_s = manager.config["controller.socket.timeout.ms"] / 1000
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                full, keys, deleted, stop = self._full, self._keys, self._deleted, self._stop
                self._full, self._keys, self._deleted, self._stop = False, set(), {}, {}
                covers = manager.changes  # every change seen so far is in this batch
                try:
                    if conn is None or conn.closed:
                        conn = await manager.connect(self.broker_id, timeout_s, f"{CLIENT_ID_PREFIX}{manager.broker_id}")
                    for request in self._manager.batch(self.broker_id, self.broker_epoch, full, keys, deleted, stop):
                        response = await conn.send(request, timeout_s)
                        code = ErrorCode(int(response.error_code))
                        if code != ErrorCode.none:
                            manager.log.warning("broker refused a controller request", broker=self.broker_id,
                                               api=type(request).__name__, error=code.name)
                    self.delivered, self.failing = covers, False
                    manager.progressed()
                except Exception as exc:  # noqa: BLE001 - whatever it was, the broker gets everything again
                    if isinstance(exc, (InterBrokerConnectError, ConnectionError, OSError, TimeoutError,
                                        RequestParseError)):
                        manager.log.info("controller request not delivered; retrying", broker=self.broker_id,
                                        error=str(exc) or type(exc).__name__)
                    else:
                        manager.log.exception("controller request failed", broker=self.broker_id, error=repr(exc))
                    if conn is not None:
                        await conn.close()
                        conn = None
                    self._full = True  # whatever it missed: everything again, on a new connection
                    self.failing = True
                    manager.progressed()
                    self._deleted.update(deleted)
                    self._stop.update(stop)
                    await asyncio.sleep(RETRY_BACKOFF_S)
                    self._wake.set()
        finally:
            if conn is not None:
                await conn.close()
