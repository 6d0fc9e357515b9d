"""Admin-request policies: Kafka's KIP-108 interfaces and fauxka's KIP-201 one.

Kafka (2.8 to 3.9, ZooKeeper mode, `ZkAdminManager`) knows two policies:

- `create.topic.policy.class.name` (CreateTopicPolicy) is asked by CreateTopics only, after
  Kafka's own validation and before the write, for validate_only requests too. Its
  RequestMetadata holds the request's configs only (no broker defaults) and either the counts
  (with -1 already resolved to `num.partitions` / `default.replication.factor`) and
  assignments None, or, when the client sent a manual assignment, the assignment and counts None.
  CreatePartitions and DeleteTopics ask no policy at all.
- `alter.config.policy.class.name` (AlterConfigPolicy) is asked by AlterConfigs and
  IncrementalAlterConfigs, for TOPIC and BROKER resources (a broker's id as a string, "" for the
  cluster default), with exactly the entries of the request (name -> value; a value may be None,
  e.g. an incremental DELETE), not the merged result; validate_only requests too.

A PolicyViolation becomes ErrorCode.policy_violation (44) with its message; any other exception becomes
ErrorCode.unknown_server_error (-1) without a message (`error_for`). Both policies receive every broker
config through `configure()` and are closed at shutdown.

fauxka adds `topic.actions.policy.class.name`: one TopicActionsPolicy (after KIP-201, never
shipped by Kafka) that sees CREATE, MODIFY (configs, partitions) and DELETE with the principal
and the topic's state before and after. It replaces the two legacy keys; setting it together with
either of them is a start-up error. Use sites only see `PolicySet`; the legacy policies are
wrapped in adapters that reproduce Kafka's calls exactly.
"""

from __future__ import annotations

import enum
import importlib
from dataclasses import dataclass, field
from typing import Any, Mapping

from fauxka.model.errors import ErrorCode

CREATE_TOPIC_POLICY = "create.topic.policy.class.name"
ALTER_CONFIG_POLICY = "alter.config.policy.class.name"
TOPIC_ACTIONS_POLICY = "topic.actions.policy.class.name"

_KAFKA_DEFAULT_MESSAGE = "Request parameters do not satisfy the configured policy."


class PolicyViolation(Exception):
    """Raised by a policy to refuse a request: ErrorCode.policy_violation with this message."""

    def __init__(self, message: str | None = None):
        super().__init__(message)
        self.message = message


class PolicyConfigError(Exception):
    """A policy cannot be loaded or configured: a start-up error."""


def error_for(exc: BaseException) -> tuple[int, str | None]:
    """The (error code, message) Kafka answers for an exception a policy raised."""
    if isinstance(exc, PolicyViolation):
        msg = exc.message or None
        return ErrorCode.policy_violation, None if msg == _KAFKA_DEFAULT_MESSAGE else msg
    return ErrorCode.unknown_server_error, None


# --- KIP-108: Kafka's interfaces ----------------------------------------------------------------


@dataclass(frozen=True)
class CreateTopicRequest:
    """CreateTopicPolicy.RequestMetadata."""

    topic: str
    num_partitions: int | None  # None when replicas_assignments is set
    replication_factor: int | None  # None when replicas_assignments is set
    replicas_assignments: dict[int, list[int]] | None  # None unless the client sent an assignment
    configs: dict[str, str]  # the request's configs, not broker defaults


class CreateTopicPolicy:
    def configure(self, configs: dict[str, str]) -> None:
        pass

    def validate(self, request: CreateTopicRequest) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class AlterConfigRequest:
    """AlterConfigPolicy.RequestMetadata."""

    resource_type: str  # "TOPIC" or "BROKER"
    resource_name: str  # topic name; broker id, or "" for the cluster-wide default
    configs: dict[str, str | None]  # the request's entries


class AlterConfigPolicy:
    def configure(self, configs: dict[str, str]) -> None:
        pass

    def validate(self, request: AlterConfigRequest) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass


# --- KIP-201: one policy for every topic action -------------------------------------------------


class TopicAction(enum.Enum):
    CREATE = "CREATE"
    MODIFY = "MODIFY"
    DELETE = "DELETE"


@dataclass(frozen=True)
class TopicState:
    num_partitions: int
    replication_factor: int  # replicas of partition 0, as Kafka reports it
    replica_assignments: dict[int, list[int]]
    configs: dict[str, str]  # the topic's overrides (/config/topics/<t>), not broker defaults

    @classmethod
    def of(cls, assignments: Mapping[int, list[int]], configs: Mapping[str, str]) -> TopicState:
        assignments = {int(p): list(r) for p, r in sorted(assignments.items())}
        first = assignments.get(0) or next(iter(assignments.values()), [])
        return cls(len(assignments), len(first), assignments, dict(configs))


@dataclass(frozen=True)
class TopicActionRequest:
    action: TopicAction
    topic: str
    principal: str  # "User:alice"
    client_address: str
    pre_state: TopicState | None  # None for CREATE
    post_state: TopicState | None  # None for DELETE
    validate_only: bool
    # AlterConfigs / IncrementalAlterConfigs: the request's entries (None: not a config change).
    requested_configs: dict[str, str | None] | None = None
    # CREATE: the client sent replica assignments rather than counts.
    manual_assignment: bool = False


class TopicActionsPolicy:
    def configure(self, configs: dict[str, str]) -> None:
        pass

    def validate(self, request: TopicActionRequest) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass


# --- adapters: legacy policies seen through the KIP-201 interface -------------------------------


class LegacyCreateTopicAdapter(TopicActionsPolicy):
    """Calls a CreateTopicPolicy on CREATE only, with Kafka's RequestMetadata."""

    def __init__(self, policy: CreateTopicPolicy):
        self.policy = policy

    def validate(self, request: TopicActionRequest) -> None:
        if request.action is not TopicAction.CREATE or request.post_state is None:
            return
        post = request.post_state
        configs = post.configs if request.requested_configs is None else request.requested_configs
        if request.manual_assignment:
            counts, assignments = (None, None), {p: list(r) for p, r in post.replica_assignments.items()}
        else:
            counts, assignments = (post.num_partitions, post.replication_factor), None
        self.policy.validate(CreateTopicRequest(request.topic, *counts, assignments, dict(configs)))

    def close(self) -> None:
        self.policy.close()


class LegacyAlterConfigAdapter(TopicActionsPolicy):
    """Calls an AlterConfigPolicy on topic config changes (MODIFY with requested_configs)."""

    def __init__(self, policy: AlterConfigPolicy):
        self.policy = policy

    def validate(self, request: TopicActionRequest) -> None:
        if request.action is not TopicAction.MODIFY or request.requested_configs is None:
            return
        self.policy.validate(AlterConfigRequest("TOPIC", request.topic, dict(request.requested_configs)))

    def validate_broker(self, broker_id_or_default: str, configs: Mapping[str, str | None]) -> None:
        self.policy.validate(AlterConfigRequest("BROKER", broker_id_or_default, dict(configs)))

    def close(self) -> None:
        self.policy.close()


# --- the set a broker loads at start-up ---------------------------------------------------------


@dataclass
class PolicySet:
    topic_policies: list[TopicActionsPolicy] = field(default_factory=list)
    alter_config: LegacyAlterConfigAdapter | None = None
    actions_policy: bool = False  # a TopicActionsPolicy (not adapters) is configured
    _closed: bool = field(default=False, init=False, repr=False)

    @property
    def empty(self) -> bool:
        return not self.topic_policies

    @property
    def has_create(self) -> bool:
        return self.actions_policy or any(isinstance(p, LegacyCreateTopicAdapter) for p in self.topic_policies)

    @property
    def has_config_modify(self) -> bool:
        """Topic AlterConfigs / IncrementalAlterConfigs are checked."""
        return self.actions_policy or self.alter_config is not None

    @property
    def has_partition_modify(self) -> bool:
        """CreatePartitions is checked (only a TopicActionsPolicy does; Kafka checks nothing)."""
        return self.actions_policy

    @property
    def has_delete(self) -> bool:
        return self.actions_policy

    @property
    def has_broker_configs(self) -> bool:
        return self.alter_config is not None

    def validate_topic(self, request: TopicActionRequest) -> None:
        """Raises PolicyViolation, or whatever else a policy raised (ErrorCode.unknown_server_error)."""
        for policy in self.topic_policies:
            policy.validate(request)

    def validate_broker_configs(self, broker_id_or_default: str, configs: Mapping[str, str | None]) -> None:
        """Broker AlterConfigs: only a legacy AlterConfigPolicy sees broker resources, as in Kafka."""
        if self.alter_config is not None:
            self.alter_config.validate_broker(broker_id_or_default, configs)

    def close(self) -> list[BaseException]:
        """Closes every policy once; returns the exceptions swallowed, for the caller to log."""
        if self._closed:
            return []
        self._closed = True
        errors = []
        for policy in self.topic_policies:
            try:
                policy.close()
            except Exception as e:  # Kafka: CoreUtils.swallow
                errors.append(e)
        return errors


def load_policies(configs: Mapping[str, Any]) -> PolicySet:
    """Instantiates and configures the policies named in the broker configuration."""
    names = {k: str(configs[k]).strip() for k in (CREATE_TOPIC_POLICY, ALTER_CONFIG_POLICY, TOPIC_ACTIONS_POLICY)
             if configs.get(k) is not None and str(configs[k]).strip()}
    legacy = [k for k in (CREATE_TOPIC_POLICY, ALTER_CONFIG_POLICY) if k in names]
    if TOPIC_ACTIONS_POLICY in names and legacy:
        raise PolicyConfigError(
            f"{TOPIC_ACTIONS_POLICY} cannot be used together with {' and '.join(legacy)}: "
            f"a TopicActionsPolicy replaces the create topic and alter config policies; configure one or the other."
        )
    all_configs = {k: v if isinstance(v, str) else str(v) for k, v in configs.items()}
    policies = PolicySet()
    try:
        if TOPIC_ACTIONS_POLICY in names:
            policies.topic_policies.append(_instance(TOPIC_ACTIONS_POLICY, names, TopicActionsPolicy, all_configs))
            policies.actions_policy = True
        if CREATE_TOPIC_POLICY in names:
            create = _instance(CREATE_TOPIC_POLICY, names, CreateTopicPolicy, all_configs)
            policies.topic_policies.append(LegacyCreateTopicAdapter(create))
        if ALTER_CONFIG_POLICY in names:
            alter = LegacyAlterConfigAdapter(_instance(ALTER_CONFIG_POLICY, names, AlterConfigPolicy, all_configs))
            policies.topic_policies.append(alter)
            policies.alter_config = alter
    except BaseException:
        policies.close()
        raise
    return policies


def import_class(path: str) -> type:
    """`package.module:Class` (Class may be dotted) or `package.module.Class`."""
    if ":" in path:
        module_name, _, attr = path.partition(":")
    else:
        module_name, _, attr = path.rpartition(".")
    if not module_name or not attr:
        raise ImportError("expected package.module:Class or package.module.Class")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ImportError(f"module {module_name!r} has no attribute {attr!r}") from None
    return obj


def _instance(key: str, names: dict[str, str], interface: type, configs: dict[str, str]) -> Any:
    value = names[key]
    where = f"Invalid value {value} for configuration {key}"
    try:
        cls = import_class(value)
    except Exception as e:
        raise PolicyConfigError(f"{where}: class cannot be loaded: {e}") from e
    if not isinstance(cls, type) or not issubclass(cls, interface):
        raise PolicyConfigError(f"{where}: {value} is not a subclass of {interface.__module__}.{interface.__name__}")
    try:
        policy = cls()
    except Exception as e:
        raise PolicyConfigError(f"{where}: cannot instantiate: {e!r}") from e
    try:
        policy.configure(dict(configs))
    except PolicyConfigError:
        _close_quietly(policy)
        raise
    except Exception as e:
        _close_quietly(policy)
        raise PolicyConfigError(f"{where}: configure() failed: {e!r}") from e
    return policy


def _close_quietly(policy: Any) -> None:
    try:
        policy.close()
    except Exception:
        pass
