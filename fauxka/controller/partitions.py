"""CreatePartitions (KIP-195) on the controller, as Kafka's ZK-mode brokers answer it.

Sources (3.4.0): KafkaApis.handleCreatePartitionsRequest (duplicates, authorization, topics
queued for deletion), ZkAdminManager.createPartitions (existence, counts, manual assignments;
see assignment.add_partitions), AdminZkClient.createPartitionsWithAssignment (the topic znode
is set with the whole new assignment, same topic id) and DelayedCreatePartitions (done when
every partition of the topic has a leader; timeout <= 0: REQUEST_TIMED_OUT at once).
Kafka asks no policy here; fauxka's KIP-201 policy sees a MODIFY, for validate_only too.
"""

import time
from dataclasses import dataclass
from typing import Any, Callable

from fauxka.model.errors import ErrorCode, KafkaError
from fauxka.model.topic_names import java_string_hash, scala_set_order
from fauxka.zkstore import MultiFailed, NoNode, NodeExists, ZkUnavailable
from fauxka.zkstore import paths as zp
from fauxka.zkstore.fenced import ControllerMoved, FencedWriter
from fauxka.zkstore.store import Op

from .assignment import AssignmentError, BrokerMeta, add_partitions
from .audit import AuditLog, Caller
from .broker_parts import CacheWaits, Metadata
from .election import ControllerElection
from .policy import TopicAction, TopicState
from .policy_gate import PolicyGate
from .topics import initial_state
from .write_waits import WriteWaits

DUPLICATE = "Duplicate topic in request."
UNAUTHORIZED = "The topic authorization is failed."
QUEUED_FOR_DELETION = "The topic is queued for deletion."
CATCH_UP_S = 2.0  # how long a write that lost a race waits for the cache to show the winner
ATTEMPTS = 3


@dataclass(frozen=True)
class PartitionIncrease:
    name: str
    count: int
    assignments: list[list[int]] | None = None  # None: Kafka places the new partitions


@dataclass
class Outcome:
    name: str
    error_code: int = ErrorCode.none
    error_message: str | None = None
    new_partitions: dict[int, list[int]] | None = None  # the planned (or written) new partitions


def kafka_map_order(names: list[str]) -> list[str]:
    """Iteration order of the Scala Map[String, ApiError] Kafka builds its response from:
    first occurrences in order up to 4 names, CHAMP hash order from 5 on."""
    return scala_set_order(list(dict.fromkeys(names)), java_string_hash)


def triage(names: list[str], deleting: set[str]) -> tuple[list[str], list[str], list[str]]:
    """(duplicated, queued for deletion, to validate) names, as KafkaApis splits them. Its
    response Map is built as `(results of the valid) ++ dupes ++ unauthorized ++ queued`."""
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    dupes = [n for n in dict.fromkeys(names) if counts[n] > 1]
    rest = [n for n in names if counts[n] == 1]
    queued = [n for n in rest if n in deleting]
    valid = [n for n in rest if n not in deleting]
    return dupes, queued, valid


def mixed_racks(brokers: list[BrokerMeta]) -> bool:
    """getBrokerMetadatas(RackAwareMode.Enforced) refuses a cluster where only some brokers have a rack."""
    with_rack = sum(b.rack is not None for b in brokers)
    return 0 < with_rack < len(brokers)


def increase_ops(topic: str, topic_id, existing: dict[int, list[int]], new: dict[int, list[int]],
                 live_brokers: set[int], controller_epoch: int) -> list[Op]:
    """The topic znode set to the whole assignment (same id), then each new partition and its state."""
    combined = {**existing, **new}
    ops = [Op.set(zp.topic_path(topic), zp.encode_topic(zp.TopicAssignment(topic_id, combined)))]
    for partition, replicas in sorted(new.items()):
        ops.append(Op.create(zp.partition_path(topic, partition)))
        ops.append(Op.create(zp.partition_state_path(topic, partition),
                             zp.encode_partition_state(initial_state(replicas, live_brokers, controller_epoch))))
    return ops


def _led(cache: Metadata, topics: set[str], totals: dict[str, int]) -> set[str]:
    """Topics whose partitions 0..total-1 all have a leader in the cache (the new ones included:
    the cache may not show the new assignment yet right after the write)."""
    return {t for t in topics if all(
        (state := cache.partition_states.get((t, p))) is not None and state.leader >= 0
        for p in range(totals[t]))}


@dataclass(eq=False)
class PartitionCreation:
    """CreatePartitions on the controller: what it reads (the metadata cache, the policies) and writes
    (fenced), then waits for."""

    cache: Metadata
    writer: FencedWriter
    election: ControllerElection
    purgatory: CacheWaits
    gate: PolicyGate
    waits: WriteWaits
    audit: AuditLog
    log: Any

    async def create(self, requests: list[PartitionIncrease], validate_only: bool, timeout_ms: int,
                     caller: Caller, authorized: Callable[[str], bool] = lambda name: True) -> list[Outcome]:
        """Outcomes in Kafka's response order (one per distinct name). `authorized(name)`: Alter on the topic."""
        started = time.perf_counter()
        cache = self.cache
        dupes, queued, valid = triage([r.name for r in requests], set(cache.deleting))
        refused = {n for n in queued + valid if not authorized(n)}
        unauthorized = [r.name for r in requests if r.name in refused]
        queued, valid = [n for n in queued if n not in refused], [n for n in valid if n not in refused]
        outcomes = {n: Outcome(n, ErrorCode.invalid_request, DUPLICATE) for n in dupes}
        outcomes.update({n: Outcome(n, ErrorCode.topic_authorization_failed, UNAUTHORIZED) for n in unauthorized})
        outcomes.update({n: Outcome(n, ErrorCode.invalid_topic_exception, QUEUED_FOR_DELETION) for n in queued})
        brokers = [BrokerMeta(b, reg.rack) for b, reg in cache.brokers.items()]
        if mixed_racks(brokers):
            # Thrown before any topic: the whole request fails, every requested topic -1 and no message.
            failed = [Outcome(r.name, ErrorCode.unknown_server_error) for r in requests]
            self._audit(caller, {o.name: o for o in failed}.values(), validate_only, started)
            return failed
        totals: dict[str, int] = {}
        moved = False
        by_name = {r.name: r for r in requests}
        for name in valid:
            outcome = outcomes[name] = Outcome(name)
            if moved:
                outcome.error_code = ErrorCode.not_controller
                continue
            try:
                outcome.new_partitions = await self._increase(by_name[name], brokers, validate_only, caller)
                totals[name] = by_name[name].count
            except KafkaError as exc:
                outcome.error_code, outcome.error_message = exc.code, exc.message
            except ControllerMoved as exc:
                self.election.resign(str(exc))
                outcome.error_code, moved = ErrorCode.not_controller, True
            except ZkUnavailable as exc:
                self.log.warning("partition write interrupted", topic=name, error=str(exc))
                outcome.error_code = ErrorCode.request_timed_out
        if totals and not validate_only:
            done: set[str] = set()
            if timeout_ms > 0:
                done = await self.purgatory.wait(set(totals), lambda topics: _led(cache, topics, totals),
                                                 timeout_ms / 1000)
            for name in totals:
                if name not in done:
                    outcomes[name].error_code, outcomes[name].error_message = ErrorCode.request_timed_out, None
            await self.waits.wait_pushed()
        ordered = [outcomes[n] for n in kafka_map_order(valid + dupes + unauthorized + queued)]
        self._audit(caller, ordered, validate_only, started)
        return ordered

    async def _increase(self, request: PartitionIncrease, brokers: list[BrokerMeta], validate_only: bool,
                        caller: Caller) -> dict[int, list[int]]:
        """Validate, ask the policy, write: the new partitions. Raises KafkaError, ControllerMoved, ZkUnavailable."""
        name, cache = request.name, self.cache
        for _ in range(ATTEMPTS):
            existing = {p: list(r) for p, r in cache.partitions_of(name).items()}
            if existing and cache.all_topics[name].reassigning():
                # Kafka refuses it so as not to race the controller's reassignment writes
                raise KafkaError(ErrorCode.reassignment_in_progress,
                                 f"A partition reassignment is in progress for the topic '{name}'.")
            if not existing:
                raise KafkaError(ErrorCode.unknown_topic_or_partition, f"The topic '{name}' does not exist.")
            try:
                new = add_partitions(brokers, existing, request.count, request.assignments, topic=name)
            except AssignmentError as exc:
                raise KafkaError(exc.error_code, exc.client_message) from None
            pre = self.gate.state_of(name)
            post = TopicState.of({**existing, **new}, pre.configs if pre else {})
            self.gate.check_topic(TopicAction.MODIFY, name, pre, post, caller, validate_only,
                                  manual_assignment=request.assignments is not None)
            if validate_only:
                return new
            topic_id = cache.all_topics[name].topic_id
            cache.watch_owned([name])  # waiting for the new partitions needs the topic's watches
            try:
                await self.writer.write(increase_ops(name, topic_id, existing, new, set(cache.brokers),
                                                     self.election.epoch))
                return new
            except MultiFailed as failed:
                if isinstance(failed.cause, NoNode) and failed.index == 0:  # deleted meanwhile
                    raise KafkaError(ErrorCode.unknown_topic_or_partition, f"The topic '{name}' does not exist.") from None
                if not isinstance(failed.cause, NodeExists) or not await self._caught_up(name, len(existing)):
                    self.log.error("partition write failed", topic=name, error=repr(failed.cause))
                    raise KafkaError(ErrorCode.unknown_server_error, None) from None
                # another increase won the race: validate again against what it wrote
        raise KafkaError(ErrorCode.unknown_server_error, None)

    async def _caught_up(self, name: str, seen: int) -> bool:
        """Wait until the cache shows a partition count other than `seen` (a concurrent write landed)."""
        changed = await self.purgatory.wait(
            {name}, lambda topics: {t for t in topics if len(self.cache.partitions_of(t)) != seen}, CATCH_UP_S)
        return name in changed

    def _audit(self, caller: Caller, outcomes, validate_only: bool, started: float) -> None:
        latency_ms = (time.perf_counter() - started) * 1000
        for outcome in outcomes:
            extra = {}
            if outcome.new_partitions:
                extra["new_partitions"] = {str(p): r for p, r in sorted(outcome.new_partitions.items())}
            self.audit.record(caller, resource_type="TOPIC", resource_name=outcome.name,
                              action="CREATE_PARTITIONS", validate_only=validate_only,
                              error_code=outcome.error_code, error_message=outcome.error_message,
                              latency_ms=latency_ms, **extra)
