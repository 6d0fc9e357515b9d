"""The controller's admin plane: validate, ask the policy, write fenced, wait.

The handlers translate wire messages to and from the plain data used here;
nothing in this module knows a socket or a byte of Kafka's protocol.
"""

import asyncio
import collections
import random
import time
from typing import Any, Awaitable, Callable

from fauxka.model import broker_configs as bc
from fauxka.model.errors import ErrorCode, KafkaError
from fauxka.zkstore import MultiFailed, NodeExists, ZkUnavailable
from fauxka.zkstore import paths as zp
from fauxka.zkstore.fenced import ControllerMoved, FencedWriter
from fauxka.zkstore.store import Op

from .assignment import BrokerMeta, metadata_cache_broker_order
from .audit import AuditLog, Caller
from .policy import PolicyViolation, TopicAction, TopicActionRequest, TopicState, load_policies
from .topic_deletion import TopicDeletion
from .topics import ClusterView, NewTopic, TopicOutcome, TopicPlan, creation_ops, initial_states, plan_create

MAX_OPS_PER_MULTI = 2000  # well under ZooKeeper's 1 MB jute.maxbuffer
# The longest an admin write's answer waits for the brokers to be told of it (wait_pushed): a
# broker that does not answer the controller (paused, its connection lost) is waited for no longer.
PUSH_WAIT_S = 0.5


class AdminController(TopicDeletion):
    """Shared by every admin api of the controller (topics here; partitions.py, configs.py,
    quotas.py use its cache, writer, purgatory, policies and audit)."""

    def __init__(self, zk, cache, election, config, log: Any, purgatory,
                 pushed: Callable[[float], Awaitable[bool]] | None = None):
        """`pushed(timeout_s)`: until every broker has been told of this controller's writes so far
        (fauxka/broker/controller_channel_manager.py), at most timeout_s."""
        self.zk = zk
        self.cache = cache
        self.election = election
        self.config = config
        self.log = log.bind(component="admin")
        self.writer = FencedWriter(zk, lambda: election.epoch_zk_version)
        self.policies = load_policies(config.originals)
        self.audit = AuditLog(config["audit.log.file"], log)
        self.purgatory = purgatory  # waits for writes to show in the cache (fauxka/broker/cache_purgatory.py); closed here
        self.rng = random.Random()
        self._completing: dict[str, asyncio.Future] = {}  # deletions under way here, each carried out once
        self._pushed = pushed

    async def wait_pushed(self) -> None:
        """Until the brokers have been told of what this controller wrote, at most PUSH_WAIT_S, whatever
        the request's timeout (0 included: the answer's code is not changed by it). Kafka answers once
        its own metadata cache has a write; a client whose next request went to another broker then
        met a topic that broker did not know yet (LEADER_NOT_AVAILABLE, retried ~100 ms later). For
        new topics and partitions only: a deletion is answered as Kafka's (the wait cost a DeleteTopics
        ~30 ms, and nothing a client does next needs the other brokers to have dropped the topic)."""
        if self._pushed is not None:
            await self._pushed(PUSH_WAIT_S)

    def audit_to(self, sink: Callable[[bytes, bytes], None]) -> None:
        """Also hand every audit line to `sink` (key: the principal): fauxka/broker/audit_publisher.py."""
        self.audit.sink = sink

    def close(self) -> None:
        self.purgatory.close()
        self.policies.close()
        self.audit.close()

    @property
    def active(self) -> bool:
        return self.election.active

    def resign(self, reason: str) -> None:
        """Give up the controller role (a write found the controller epoch moved on)."""
        self.election.resign(reason)

    def broker_layers(self) -> tuple[dict, dict, dict]:
        """This broker's config as topics inherit it: dynamic per-broker, dynamic default, static."""
        configs = self.cache.broker_configs
        return (bc.effective_dynamic(configs.get(str(self.config.broker_id), {}), True),
                bc.effective_dynamic(configs.get(bc.DEFAULT_ENTITY, {}), False),
                self.config.originals)

    def view(self) -> ClusterView:
        cache = self.cache
        return ClusterView(
            # Kafka hands CreateTopics its live brokers in its metadata cache's (hash) order
            brokers=[BrokerMeta(b, cache.brokers[b].rack) for b in metadata_cache_broker_order(list(cache.brokers))],
            topics=collections.ChainMap({}, cache.all_topics), deleting=frozenset(cache.deleting),  # no copy of every name
            default_partitions=self.config["num.partitions"],
            default_replication_factor=self.config["default.replication.factor"],
            broker_layers=self.broker_layers(),
        )

    def state_of(self, name: str) -> TopicState | None:
        partitions = self.cache.partitions_of(name)
        if not partitions:
            return None
        replicas = partitions.get(0) or next(iter(partitions.values()))
        return TopicState(num_partitions=len(partitions), replication_factor=len(replicas),
                          replica_assignments={p: list(r) for p, r in partitions.items()},
                          configs=dict(self.cache.topic_configs.get(name, {})))

    # --- CreateTopics ------------------------------------------------------------

    async def create_topics(self, topics: list[NewTopic], validate_only: bool, timeout_ms: int,
                            caller: Caller) -> list[TopicOutcome]:
        started = time.perf_counter()
        counts: dict[str, int] = {}
        for topic in topics:
            counts[topic.name] = counts.get(topic.name, 0) + 1
        outcomes = [TopicOutcome(t.name) for t in topics]
        by_name: dict[str, TopicOutcome] = {}
        view = self.view()
        for topic, outcome in zip(topics, outcomes):
            if counts[topic.name] > 1:
                outcome.error_code, outcome.error_message = ErrorCode.invalid_request, "Found multiple entries for this topic."
                continue
            by_name[topic.name] = outcome
            try:
                outcome.plan = plan_create(topic, view, self.rng)
                self.check_policy(TopicAction.CREATE, outcome.plan.name, None, _state(outcome.plan), caller,
                                   validate_only, manual_assignment=bool(topic.assignments))
            except KafkaError as exc:
                outcome.plan = None
                outcome.error_code, outcome.error_message = exc.code, exc.message
                continue
            if not validate_only:
                view.topics[topic.name] = None  # later topics of this request see it, as in Kafka
        planned = [o.plan for o in by_name.values() if o.plan is not None]
        if not validate_only and planned:
            await self._write_topics(planned, by_name)
            created = [p.name for p in planned if by_name[p.name].error_code == ErrorCode.none]
            await self._wait_created(created, timeout_ms, by_name)
            if created:
                await self.wait_pushed()
        latency_ms = (time.perf_counter() - started) * 1000
        for outcome in outcomes:
            self.audit.record(caller, resource_type="TOPIC", resource_name=outcome.name, action="CREATE",
                              validate_only=validate_only, error_code=outcome.error_code,
                              error_message=outcome.error_message, latency_ms=latency_ms)
        return outcomes

    def check_policy(self, action, topic: str, pre: TopicState | None, post: TopicState | None,
                      caller: Caller, validate_only: bool, **details: Any) -> None:
        request = TopicActionRequest(action=action, topic=topic, principal=caller.principal,
                                     client_address=caller.client_address, pre_state=pre, post_state=post,
                                     validate_only=validate_only, **details)
        self._run_policy(lambda: self.policies.validate_topic(request), topic=topic, action=action.name)

    def check_broker_policy(self, broker: str, requested: dict[str, str | None]) -> None:
        """The legacy AlterConfigPolicy on a broker resource ('' for the cluster default)."""
        self._run_policy(lambda: self.policies.validate_broker_configs(broker, requested), broker=broker)

    def _run_policy(self, validate, **context: Any) -> None:
        try:
            validate()
        except PolicyViolation as exc:
            raise KafkaError(ErrorCode.policy_violation, exc.message) from None
        except Exception as exc:  # a policy bug: Kafka answers UNKNOWN_SERVER_ERROR and logs it
            self.log.exception("policy failed", error=repr(exc), **context)
            raise KafkaError(ErrorCode.unknown_server_error, None) from None

    async def _write_topics(self, plans: list[TopicPlan], by_name: dict[str, TopicOutcome]) -> None:
        """Every topic's znodes in multi-ops of at most MAX_OPS_PER_MULTI operations, all sent at
        once: ZooKeeper applies them in order, and each batch settles its own failures."""
        live = set(self.cache.brokers)
        epoch = self.election.epoch
        batches: list[dict[str, tuple[TopicPlan, dict, list[Op]]]] = []
        size = MAX_OPS_PER_MULTI
        for plan in plans:
            states = initial_states(plan, live, epoch)
            ops = creation_ops(plan, states)
            if size + len(ops) > MAX_OPS_PER_MULTI:
                batches.append({})
                size = 0
            batches[-1][plan.name] = (plan, states, ops)
            size += len(ops)
        async with asyncio.TaskGroup() as group:
            for batch in batches:
                group.create_task(self._write_batch(batch, by_name))

    async def _write_batch(self, batch: dict[str, tuple[TopicPlan, dict, list[Op]]],
                           by_name: dict[str, TopicOutcome]) -> None:
        pending = {name: ops for name, (_, _, ops) in batch.items()}
        while pending:
            names = list(pending)
            self.cache.expect_written_topics(names)
            written = False
            try:
                await self.writer.write([op for name in names for op in pending[name]])
                written = True
            except MultiFailed as failed:
                self._blame(failed, names, pending, by_name)
                continue
            except ControllerMoved as exc:
                self.election.resign(str(exc))
                self._fail(pending, by_name, ErrorCode.not_controller, None)
                return
            except ZkUnavailable as exc:
                self.log.warning("topic write interrupted", error=str(exc))
                self._fail(pending, by_name, ErrorCode.request_timed_out, None)
                return
            finally:
                if not written:
                    self.cache.watch_owned(names)
            for name in names:
                plan, states, _ = batch[name]
                self.cache.record_written_topic(name, zp.TopicAssignment(plan.topic_id, plan.assignment),
                                                plan.configs, states)
            pending.clear()

    def _blame(self, failed: MultiFailed, batch: list[str], pending: dict, by_name: dict) -> None:
        """Find the topic whose operation failed, settle it, and let the rest of the batch retry."""
        offset = 0
        for name in batch:
            ops = pending[name]
            if failed.index < offset + len(ops):
                op = ops[failed.index - offset]
                if isinstance(failed.cause, NodeExists) and op.path == zp.entity_config_path("topics", name):
                    ops[0] = Op.set(op.path, op.data)  # a config left from an earlier topic: overwrite, as Kafka
                    return
                del pending[name]
                outcome = by_name[name]
                if isinstance(failed.cause, NodeExists):
                    outcome.error_code, outcome.error_message = ErrorCode.topic_already_exists, f"Topic '{name}' already exists."
                else:
                    outcome.error_code, outcome.error_message = ErrorCode.unknown_server_error, None
                    self.log.error("topic write failed", topic=name, error=repr(failed.cause))
                outcome.plan = None
                return
            offset += len(ops)
        raise AssertionError(f"multi-op failure index {failed.index} outside the batch")

    @staticmethod
    def _fail(pending: dict, by_name: dict, code: int, message: str | None) -> None:
        for name in pending:
            by_name[name].error_code, by_name[name].error_message = code, message
        pending.clear()

    async def _wait_created(self, names: list[str], timeout_ms: int, by_name: dict[str, TopicOutcome]) -> None:
        if not names:
            return
        deadline = time.monotonic() + timeout_ms / 1000
        done = set()
        if timeout_ms > 0:
            done = await self.purgatory.wait(set(names), self.have_leaders, timeout_ms / 1000)
        for name in names:
            if name not in done:
                by_name[name].error_code, by_name[name].error_message = ErrorCode.request_timed_out, None
        await self.wait_cluster(names, deadline - time.monotonic(), by_name)

    async def wait_cluster(self, names: list[str], timeout_s: float, outcomes: dict[str, TopicOutcome]) -> None:
        """fauxka.admin.blocking=cluster: also wait until every live broker has applied our
        newest write; topics still successful at the deadline get REQUEST_TIMED_OUT."""
        waiting = [n for n in names if outcomes[n].error_code == ErrorCode.none]
        if self.config["fauxka.admin.blocking"] != "cluster" or not waiting:
            return
        version = self.writer.last_version

        def everyone_applied(keys: set[str]) -> set[str]:
            applied = self.cache.applied_by_broker
            return keys if all(applied.get(b, -1) >= version for b in self.cache.brokers) else set()

        if not await self.purgatory.wait({"*cluster*"}, everyone_applied, max(timeout_s, 0)):
            for name in waiting:
                outcomes[name].error_code, outcomes[name].error_message = ErrorCode.request_timed_out, None

    def have_leaders(self, topics: set[str]) -> set[str]:
        cache = self.cache
        complete = set()
        for topic in topics:
            partitions = cache.partitions_of(topic)
            if partitions and all(
                (state := cache.partition_states.get((topic, p))) is not None and state.leader >= 0
                for p in partitions
            ):
                complete.add(topic)
        return complete


def _state(plan: TopicPlan) -> TopicState:
    return TopicState(num_partitions=len(plan.assignment), replication_factor=plan.replication_factor,
                      replica_assignments=plan.assignment, configs=dict(plan.configs))
