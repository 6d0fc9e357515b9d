"""The controller's admin plane: validate, ask the policy, write fenced, wait.

The handlers translate wire messages to and from the plain data used here;
nothing in this module knows a socket or a byte of Kafka's protocol.
"""

import asyncio
import collections
import random
import time
from typing import Any

from fauxka.model import broker_configs as bc
from fauxka.model.errors import ErrorCode, KafkaError
from fauxka.zkstore import MultiFailed, NodeExists, ZkStore, ZkUnavailable
from fauxka.zkstore import paths as zp
from fauxka.zkstore.fenced import ControllerMoved, FencedWriter
from fauxka.zkstore.store import Op

from .assignment import BrokerMeta, metadata_cache_broker_order
from .audit import AuditLog, Caller
from .broker_parts import CacheWaits, Metadata, Settings
from .election import ControllerElection
from .policy import TopicAction, TopicState
from .policy_gate import PolicyGate
from .topic_deletion import TopicDeletion
from .topics import ClusterView, NewTopic, TopicOutcome, TopicPlan, creation_ops, initial_states, plan_create
from .write_waits import WriteWaits

MAX_OPS_PER_MULTI = 2000  # well under ZooKeeper's 1 MB jute.maxbuffer


class AdminController(TopicDeletion):
    """The controller's topics: CreateTopics here, DeleteTopics in topic_deletion.py. Built by the
    composition root (fauxka/broker/app.py) with the parts it shares with the other areas: the
    fenced writer, the policies, the waits and the audit."""

    def __init__(self, zk: ZkStore, cache: Metadata, election: ControllerElection, config: Settings, log: Any,
                 writer: FencedWriter, purgatory: CacheWaits, gate: PolicyGate, waits: WriteWaits, audit: AuditLog):
        self.zk = zk
        self.cache = cache
        self.election = election
        self.config = config
        self.log = log
        self.writer = writer
        self.gate = gate  # the policies (check_topic) and a topic's state as they see it
        self.waits = waits  # wait_pushed, wait_cluster
        self.audit = audit
        self.purgatory = purgatory  # waits for writes to show in the cache (fauxka/broker/cache_purgatory.py)
        self.rng = random.Random()
        self._completing: dict[str, asyncio.Future] = {}  # deletions under way here, each carried out once

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
                self.gate.check_topic(TopicAction.CREATE, outcome.plan.name, None, _state(outcome.plan), caller,
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
                await self.waits.wait_pushed()
        latency_ms = (time.perf_counter() - started) * 1000
        for outcome in outcomes:
            self.audit.record(caller, resource_type="TOPIC", resource_name=outcome.name, action="CREATE",
                              validate_only=validate_only, error_code=outcome.error_code,
                              error_message=outcome.error_message, latency_ms=latency_ms)
        return outcomes

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
        await self.waits.wait_cluster(names, deadline - time.monotonic(), by_name)

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
