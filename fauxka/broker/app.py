"""One broker process: ZooKeeper session, registration, metadata cache,
controller election and listeners, started and stopped in order."""

import asyncio
import signal
import socket
import sys
from typing import Any

from fauxka.controller.acls import AclWrites
from fauxka.controller.admin import AdminController
from fauxka.controller.areas import ControllerAreas
from fauxka.controller.audit import AuditLog
from fauxka.controller.configs import ConfigWrites
from fauxka.controller.election import ControllerElection
from fauxka.controller.features import FeatureController
from fauxka.controller.partition_leadership import PartitionLeadership
from fauxka.controller.partitions import PartitionCreation
from fauxka.controller.policy import PolicyConfigError, load_policies
from fauxka.controller.policy_gate import PolicyGate
from fauxka.controller.producer_ids import ProducerIdBlocks
from fauxka.controller.quotas import QuotaWrites
from fauxka.controller.reassignment import Reassignments
from fauxka.controller.scram import ScramWrites
from fauxka.controller.tokens import TokenWrites
from fauxka.controller.write_waits import WriteWaits
from fauxka.model import delegation_tokens, features
from fauxka.model.errors import KafkaError
from fauxka.model.topic_names import GROUP_METADATA_TOPIC, TRANSACTION_STATE_TOPIC
from fauxka.zkstore import MultiFailed, NodeExists, Op, SessionState, ZkStore, ZkUnavailable
from fauxka.zkstore import paths as zp
from fauxka.zkstore.config_entities import EntityConfigReader
from fauxka.zkstore.consumer_offsets import ZkConsumerOffsets
from fauxka.zkstore.fenced import FencedWriter

from . import logs
from .applied import AppliedPublisher
from .auth.authorizer import AuthorizerConfigError, load_authorizer
from .auth.token_cache import TokenCache
from .auto_create import AutoTopicCreator
from .cache_purgatory import CachePurgatory
from .controller_channel import ControllerChannel
from .controller_channel_manager import ControllerChannelManager
from .coordination.coordinators import Coordinators
from .coordination.producer_ids import ProducerIdManager
from .controller_link import ControllerLink
from .forwarding import ForwardingManager
from .config import BrokerConfig
from .context import Services
from .dynamic_config import DynamicConfigApplier
from .fault_injection import FaultInjector
from .handlers import table as handlers
from .inter_broker import InterBrokerConnector
from .metadata_cache import MetadataCache
from .controller_metrics import ControllerMetrics
from .metrics import BrokerMetrics
from .server_metrics import SHUTTING_DOWN
from .quotas import Quotas
from .registration import BrokerIdTaken, NoBrokerId, register, resolve_broker_id
from .replication.replica_manager import ReplicaManager
from .server import Server


class Broker:
    def __init__(self, config: BrokerConfig, log: Any):
        self.config = config
        self.broker_id = config.broker_id
        self.log = log
        self.metrics = BrokerMetrics()
        self.zk = ZkStore(config["zookeeper.connect"], config["zookeeper.session.timeout.ms"], log)
        self.metrics.follow_zk_requests(self.zk.requests)
        self.cache = MetadataCache(self.zk, log)
        self.metrics.follow_cache(self.cache)
        self.zk.on_latency = self.metrics.server.zk_latency.update  # ZooKeeperRequestLatencyMs
        self.election = ControllerElection(self.zk, self.broker_id, log, self._controller_changed)
        self.applied = AppliedPublisher(self.zk, self.broker_id, log)
        self.inter_broker = InterBrokerConnector(self.cache, config)  # secured connections to other brokers
        # as controller: LeaderAndIsr, UpdateMetadata, StopReplica to every broker
        self.channel_manager = ControllerChannelManager(self.broker_id, config, self.cache, self.inter_broker, log)
        # delegation tokens, with a secret key
        self.tokens = TokenCache(self.zk, delegation_tokens.settings(config), log)
        # the controller's areas, each with what it reads and writes (active only on the controller)
        self.controller = controller_areas(self.zk, self.cache, self.election, self.channel_manager, self.tokens,
                                           config, log)
        self.authorizer = load_authorizer(config, self.zk, log)
        self.admin = self.controller.topics
        self.leadership = self.controller.leadership
        ControllerMetrics(self.metrics.registry, self.cache, lambda: self.election.active,
                          lambda: self.leadership.unclean_elections)
        self.reassignments = self.controller.reassignments  # KIP-455, on the controller
        self.features = self.controller.features  # /feature (KIP-584), on the controller
        # one connection to the controller, shared by envelopes and AlterPartition, producer ids, shutdown
        self.controller_link = ControllerLink(self.broker_id, self.cache, self.inter_broker, log)
        self.forwarding = ForwardingManager(self.controller_link, config["request.timeout.ms"], self.metrics,
                                            lambda: self.admin.active, handlers.handler, handlers.error_response)
        self.controller_channel = ControllerChannel(self.broker_id, config, self.cache, self.controller_link, log)
        self.quotas = Quotas(self.zk, config, log, self.metrics)  # client quotas, enforced
        self.dynamic_config = DynamicConfigApplier(config, self.cache, log)  # dynamic broker configs that take effect
        # injected faults (fauxka fault, fauxka.testing), from ZooKeeper
        self.faults = FaultInjector(self.zk, config, self.cache, self.metrics, self.leadership,
                                    lambda: self.election.active, handlers.error_response, log)
        self.metrics.server.offline_log_dirs = lambda: self.faults.failed_log_dirs(len(config["log.dirs"]))
        # partition logs, leader and follower roles (a log failed by a `storage` fault is not fetched)
        self.replicas = ReplicaManager(config, self.cache, self.admin.broker_layers, self.inter_broker,
                                       self.controller_channel, self.metrics.registry, log, self.faults.failed_logs)
        # the coordinators (fauxka/broker/coordination/): groups while we lead __consumer_offsets partitions,
        # transactions while we lead __transaction_state ones, one runtime each over one partition writer
        self.producer_ids = ProducerIdManager(self.controller_channel, log)  # in blocks from the controller
        self.coordinators = Coordinators(config, self.cache, self.replicas, self.producer_ids, self.inter_broker.connect,
                                         self.metrics.registry, log)
        # Metadata's and FindCoordinator's topics created on first need; the internal ones as their coordinators say
        self.auto_create = AutoTopicCreator(config, self.admin, self.forwarding, {
            GROUP_METADATA_TOPIC: self.coordinators.offsets_topic_spec,
            TRANSACTION_STATE_TOPIC: self.coordinators.transaction_topic_spec}, log)
        # what a request may use: the server hands it to every request's context (fauxka/broker/context.py)
        self.services = Services(
            broker_id=self.broker_id, config=config, cache=self.cache, metrics=self.metrics,
            entity_configs=EntityConfigReader(self.zk), v0_offsets=ZkConsumerOffsets(self.zk),
            authorizer=self.authorizer, tokens=self.tokens, quotas=self.quotas, replicas=self.replicas,
            groups=self.coordinators.groups, transactions=self.coordinators.transactions,
            partition_writer=self.coordinators.writer,
            producer_ids=self.producer_ids, controller=self.controller, auto_create=self.auto_create,
            forwarding=self.forwarding, faults=self.faults, bound=[])
        self.server = Server(self.services, log)
        self._stopped = asyncio.Event()
        self._fatal: BaseException | None = None
        self._tasks: set[asyncio.Task] = set()
        self.audit_publisher = None
        if config["audit.topic"]:  # the controller's audit trail, published to a topic as well
            from .audit_publisher import AuditPublisher

            self.audit_publisher = AuditPublisher(config["audit.topic"], config, self.cache, self.admin, log)
            self.controller.audit.sink = self.audit_publisher.offer

    @property
    def is_controller(self) -> bool:
        return self.election.active

    async def start(self) -> None:
        timeout_s = self.config["zookeeper.connection.timeout.ms"] / 1000
        await self.zk.start(timeout_s)
        self.zk.on_session(self._on_session)
        self.metrics.set_zk_state("connected")
        await self._ensure_cluster_layout()
        await self.authorizer.start(timeout_s)  # ACLs loaded before any request is served
        await self.tokens.start(timeout_s)
        self.faults.start()
        await self.server.start()
        self.cache.subscribe(self._on_cache_event)
        self.applied.start()
        self.cache.start()
        self.quotas.start()
        await self.cache.wait_synced(timeout_s)
        self.replicas.load()
        self.replicas.start()
        self.coordinators.start()
        await register(self.zk, self._registration())
        self.election.start()
        if self.audit_publisher is not None:
            self._spawn(self.audit_publisher.run(), "audit-publisher")
        self.metrics.serve(self.config["metrics.host"], self.config["metrics.port"])
        self.log.info("broker started", cluster_id=self.cache.cluster_id,
                      endpoints=[ep.uri() for ep in self._advertised()])

    async def _ensure_cluster_layout(self) -> None:
        # A fresh ZooKeeper: the whole layout and the cluster id in one multi-op (ZooKeeper writes
        # each transaction to its log: 17 creates at once took ~0.1 s). Else, or when another broker
        # was first, each path at once: one round trip's wait rather than 17 (ensure_path takes a
        # concurrent creation of the same node, by this call or by another broker, as done).
        await self.zk.ensure_path("/")  # the chroot of zookeeper.connect, if any
        try:
            await self.zk.multi([*(Op.create(path) for path in zp.layout_paths()),
                                 Op.create(zp.CLUSTER_ID, zp.encode_cluster_id(zp.new_cluster_id()))])
            return
        except MultiFailed:
            pass
        await asyncio.gather(*(self.zk.ensure_path(path) for path in zp.PERSISTENT_PATHS))
        try:
            await self.zk.create(zp.CLUSTER_ID, zp.encode_cluster_id(zp.new_cluster_id()), makepath=True)
        except NodeExists:
            pass  # created once, by the first broker ever

    def _advertised(self):
        """advertised.listeners with port 0 and empty hosts resolved to what we bound."""
        bound = {ep.listener: ep for ep in self.server.bound}
        resolved = []
        for ep in self.config.advertised:
            port = ep.port or (bound[ep.listener].port if ep.listener in bound else 0)
            resolved.append(type(ep)(ep.listener, ep.host or socket.getfqdn(), port, ep.security_protocol))
        return resolved

    def _registration(self) -> zp.BrokerRegistration:
        endpoints = tuple(zp.BrokerEndpoint(ep.listener, ep.host, ep.port, ep.security_protocol)
                          for ep in self._advertised())
        return zp.BrokerRegistration(self.broker_id, endpoints, self.config["broker.rack"],
                                     features.registration_features())

    def _on_cache_event(self, event: tuple) -> None:
        if event[0] == "applied_local":
            self.applied.publish(event[1])
        elif event[0] == "deleting" and self.admin.active:
            self._spawn(self.admin.resume_deletions(), "resume-deletions")

    def _controller_changed(self, active: bool) -> None:
        self.metrics.controller_epoch.set(self.election.epoch)
        if not active:
            self.cache.release_ownership()  # another controller may write from now on
            self.channel_manager.halt()
            self.leadership.halt()
            self.reassignments.halt()
        if active:
            self.cache.take_ownership()
            self.channel_manager.start(self.election.epoch)
            self.leadership.start()
            self.reassignments.start()
            self.faults.start_actions()  # leader faults written while there was no controller
            self._spawn(self.admin.resume_deletions(), "resume-deletions")
            self._spawn(self.features.ensure(), "feature-versioning")
            if self.tokens.enabled:
                settings = delegation_tokens.settings(self.config)
                self._spawn(self.controller.tokens.expire_periodically(settings),
                            "delete-expired-tokens")

    def _on_session(self, state: SessionState) -> None:
        self.metrics.set_zk_state(state.value)
        if state is SessionState.LOST and not self._stopped.is_set():  # our own close also reports LOST
            self.log.warning("zookeeper session expired")
        elif state is SessionState.CONNECTED:
            self._spawn(self._reregister(), "re-register")
            self.applied.session_renewed()
            self.faults.session_renewed()

    async def _reregister(self) -> None:
        try:
            await register(self.zk, self._registration())
        except BrokerIdTaken as exc:
            self.fail(exc)
        except ZkUnavailable as exc:
            self.log.warning("re-registration interrupted", error=str(exc))

    def _spawn(self, coro, name: str) -> None:
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def fail(self, exc: BaseException) -> None:
        self.log.error("fatal", error=str(exc))
        self._fatal = exc
        self._stopped.set()

    def request_stop(self) -> None:
        self._stopped.set()

    async def wait_stopped(self) -> None:
        await self._stopped.wait()
        if self._fatal is not None:
            raise self._fatal

    async def controlled_shutdown(self) -> None:
        """KafkaServer.controlledShutdown: before leaving, ask the controller to move this broker's
        leaderships to other in-sync replicas (controlled.shutdown.enable)."""
        if not self.config["controlled.shutdown.enable"] or not self.zk.connected:
            return
        try:
            await self.controller_channel.controlled_shutdown()
            self.log.info("controlled shutdown complete")
        except KafkaError as exc:
            self.log.warning("proceeding with an unclean shutdown", error=exc.message)

    async def stop(self) -> None:
        self.metrics.server.broker_state = SHUTTING_DOWN
        if self.audit_publisher is not None:
            await self.audit_publisher.flush()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.reassignments.stop()
        await self.leadership.stop()
        await self.channel_manager.stop()
        await self.election.stop()
        await self.server.stop()
        await self.faults.stop()
        await self.coordinators.stop()
        await self.replicas.stop()
        await self.auto_create.stop()
        await self.forwarding.stop()
        await self.controller_channel.close()
        await self.applied.stop()
        self.controller.purgatory.close()
        self.controller.topics.gate.close()
        self.controller.audit.close()
        self.authorizer.close()
        self.tokens.stop()
        self.quotas.stop()
        self.cache.stop()
        await self.zk.stop()  # closing the session removes our ephemeral nodes at once
        self.metrics.stop()
        self.log.info("broker stopped")


def controller_areas(zk: ZkStore, cache: MetadataCache, election: ControllerElection,
                     channel_manager: ControllerChannelManager, tokens: TokenCache, config: BrokerConfig,
                     log: Any) -> ControllerAreas:
    """The controller's areas, each given what it reads and writes; the parts they share (the fenced
    writer, the cache purgatory, the policies, the waits, the audit) are built once, here."""
    admin_log = log.bind(component="admin")
    writer = FencedWriter(zk, lambda: election.epoch_zk_version)
    purgatory = CachePurgatory(cache.subscribe)  # waits for writes to show in the cache
    gate = PolicyGate(load_policies(config.originals), cache, admin_log)
    waits = WriteWaits(config, cache, writer, purgatory, channel_manager.wait_delivered)
    audit = AuditLog(config["audit.log.file"], log)
    leadership = PartitionLeadership(zk, cache, writer, election, config, log)
    return ControllerAreas(
        election=election,
        topics=AdminController(zk, cache, election, config, admin_log, writer, purgatory, gate, waits, audit),
        partitions=PartitionCreation(cache, writer, election, purgatory, gate, waits, audit, admin_log),
        configs=ConfigWrites(config, cache, writer, election, purgatory, gate, waits, audit, admin_log),
        quotas=QuotaWrites(zk, writer, election, audit, admin_log),
        acls=AclWrites(zk, writer, election, waits, audit, admin_log),
        scram=ScramWrites(zk, writer, election, audit, admin_log),
        tokens=TokenWrites(zk, writer, election, tokens, audit, admin_log),
        producer_ids=ProducerIdBlocks(zk, writer, election),
        leadership=leadership,
        reassignments=Reassignments(zk, cache, writer, election, leadership, log),
        features=FeatureController(zk, cache, writer, election, purgatory, log),
        audit=audit, purgatory=purgatory)


async def run(config: BrokerConfig) -> int:
    log = logs.configure(config["log.level"], config["log.file"], broker_id=config.broker_id)
    for key, value in config.unknown.items():
        log.warning("unknown configuration key", key=key, value=value)
    try:
        if config.broker_id < 0:  # Kafka's default -1: found in meta.properties or generated
            config = await resolve_broker_id(config, log)
            log = log.bind(broker_id=config.broker_id)
            log.info("broker id resolved")
    except (NoBrokerId, ZkUnavailable, asyncio.TimeoutError) as exc:
        log.error("broker failed", error=str(exc) or type(exc).__name__)
        print(f"fauxka broker: {exc or type(exc).__name__}", file=sys.stderr)
        return 1
    try:
        broker = Broker(config, log)
    except (PolicyConfigError, AuthorizerConfigError) as exc:
        log.error("broker failed", error=str(exc))
        print(f"fauxka broker {config.broker_id}: {exc}", file=sys.stderr)
        return 2
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, broker.request_stop)
    try:
        await broker.start()
        await broker.wait_stopped()
        await broker.controlled_shutdown()
        return 0
    except (BrokerIdTaken, ZkUnavailable, OSError, asyncio.TimeoutError) as exc:
        log.error("broker failed", error=str(exc) or type(exc).__name__)
        print(f"fauxka broker {config.broker_id}: {exc or type(exc).__name__}", file=sys.stderr)
        return 1
    finally:
        await broker.stop()
