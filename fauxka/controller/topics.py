"""The rules of CreateTopics, in Kafka's order (ZkAdminManager.createTopics and
AdminZkClient.validateTopicCreate), and the znodes a new topic is made of.

Plain data in, plain data out: no sockets, no ZooKeeper.
"""

import random
import uuid
from collections.abc import Collection
from dataclasses import dataclass, field

from fauxka.model.errors import ErrorCode, KafkaError
from fauxka.model.topic_configs import ConfigValidationError, effective_topic_configs, validate_topic_configs
from fauxka.model.topic_names import colliding_topics, has_collision_chars, validate_topic_name
from fauxka.zkstore import Op
from fauxka.zkstore import paths as zp

from .assignment import AssignmentError, BrokerMeta, assign_replicas, validate_create_assignment

NO_NUM_PARTITIONS = -1
NO_REPLICATION_FACTOR = -1


@dataclass(frozen=True)
class ClusterView:
    """What the rules may look at: the controller's metadata cache, flattened."""

    brokers: list[BrokerMeta]
    topics: Collection[str]  # existing topics (and those planned earlier in the same request)
    deleting: set[str]
    default_partitions: int
    default_replication_factor: int
    broker_layers: tuple[dict, dict, dict] = ({}, {}, {})  # dynamic, dynamic default, static


@dataclass
class NewTopic:
    name: str
    num_partitions: int = NO_NUM_PARTITIONS
    replication_factor: int = NO_REPLICATION_FACTOR
    assignments: dict[int, list[int]] = field(default_factory=dict)
    configs: dict[str, str | None] = field(default_factory=dict)


@dataclass
class TopicPlan:
    name: str
    assignment: dict[int, list[int]]
    configs: dict[str, str]
    topic_id: uuid.UUID

    @property
    def replication_factor(self) -> int:
        return len(self.assignment.get(0) or next(iter(self.assignment.values()), []))


@dataclass
class TopicOutcome:
    """What a CreateTopics or DeleteTopics answers for one topic (its plan, for a creation)."""
    name: str
    error_code: int = ErrorCode.none
    error_message: str | None = None
    plan: TopicPlan | None = None


def plan_create(topic: NewTopic, view: ClusterView, rng: random.Random | None = None) -> TopicPlan:
    """Validate one topic of a CreateTopics request; raises KafkaError."""
    name = topic.name
    if name in view.topics:
        raise KafkaError(ErrorCode.topic_already_exists, f"Topic '{name}' already exists.")
    null_configs = [k for k, v in topic.configs.items() if v is None]
    if null_configs:
        raise KafkaError(ErrorCode.invalid_config, f"Null value not supported for topic configs: {','.join(null_configs)}")
    counts_given = topic.num_partitions != NO_NUM_PARTITIONS or topic.replication_factor != NO_REPLICATION_FACTOR
    if counts_given and topic.assignments:
        raise KafkaError(ErrorCode.invalid_request, "Both numPartitions or replicationFactor and replicasAssignments were "
                                            "set. Both cannot be used at the same time.")
    try:
        if topic.assignments:
            assignment = {p: list(r) for p, r in topic.assignments.items()}
        else:
            partitions = view.default_partitions if topic.num_partitions == NO_NUM_PARTITIONS else topic.num_partitions
            factor = (view.default_replication_factor if topic.replication_factor == NO_REPLICATION_FACTOR
                      else topic.replication_factor)
            assignment = assign_replicas(view.brokers, partitions, factor, rng=rng)
        _validate_topic_create(name, assignment, topic.configs, view)
    except AssignmentError as exc:
        raise KafkaError(exc.error_code, exc.client_message) from None
    return TopicPlan(name, assignment, dict(topic.configs), uuid.uuid4())


def _validate_topic_create(name: str, assignment: dict[int, list[int]], configs: dict, view: ClusterView) -> None:
    problem = validate_topic_name(name)
    if problem:
        raise KafkaError(ErrorCode.invalid_topic_exception, problem)
    if name in view.deleting:
        raise KafkaError(ErrorCode.topic_already_exists, f"Topic '{name}' is marked for deletion.")
    if name in view.topics:
        raise KafkaError(ErrorCode.topic_already_exists, f"Topic '{name}' already exists.")
    if has_collision_chars(name):
        collisions = colliding_topics(name, sorted(view.topics))
        if collisions:
            raise KafkaError(ErrorCode.invalid_topic_exception,
                             f"Topic '{name}' collides with existing topics: {', '.join(collisions)}")
    validate_create_assignment(assignment)
    try:
        validate_topic_configs(configs)
        # Kafka builds the topic's full config before answering (v5+ responses); what only
        # that build checks (local vs total retention) fails the topic here, as there.
        effective_topic_configs(configs, *view.broker_layers, include_synonyms=False)
    except ConfigValidationError as exc:
        raise KafkaError(ErrorCode.invalid_config, exc.message) from None


def initial_states(plan: TopicPlan, live_brokers: set[int], controller_epoch: int) -> dict[int, zp.PartitionState]:
    """The partition states a new topic starts with, by partition."""
    return {p: initial_state(replicas, live_brokers, controller_epoch) for p, replicas in sorted(plan.assignment.items())}


def creation_ops(plan: TopicPlan, states: dict[int, zp.PartitionState]) -> list[Op]:
    """Config, topic, and partition state znodes of a new topic (`states` from initial_states)."""
    name = plan.name
    ops = [
        Op.create(zp.entity_config_path("topics", name), zp.encode_entity_config(plan.configs)),
        Op.create(zp.topic_path(name), zp.encode_topic(zp.TopicAssignment(plan.topic_id, plan.assignment))),
        Op.create(zp.partitions_path(name)),
    ]
    for partition, state in states.items():
        ops.append(Op.create(zp.partition_path(name, partition)))
        ops.append(Op.create(zp.partition_state_path(name, partition), zp.encode_partition_state(state)))
    return ops


def initial_state(replicas: list[int], live_brokers: set[int], controller_epoch: int) -> zp.PartitionState:
    live = [r for r in replicas if r in live_brokers]
    return zp.PartitionState(leader=live[0] if live else -1, leader_epoch=0,
                             controller_epoch=controller_epoch, isr=live)
