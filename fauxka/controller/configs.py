"""AlterConfigs and IncrementalAlterConfigs on the controller, as Kafka 3.4 (ZooKeeper mode) does them.

Per resource, in Kafka's order: ConfigAdminManager.preprocess on the receiving broker (duplicate
resources and keys, null values, BROKER_LOGGER, broker id and DynamicBrokerConfig checks), then
ZkAdminManager (default topic resource, incremental operations, topic existence, LogConfig
validation, the AlterConfigPolicy / TopicActionsPolicy, the write). The write is
AdminZkClient.changeTopicConfig / changeBrokerConfig: the whole config znode set (or created) and a
`/config/changes/config_change_` notification, here in one fenced multi-op. Kafka answers right after
the write; fauxka also waits (briefly) until its own metadata cache shows the new config, so a
DescribeConfigs on the controller right after sees it, and with fauxka.admin.blocking=cluster until
every live broker's cache does (REQUEST_TIMED_OUT if they do not within CACHE_WAIT_S).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from fauxka.model import broker_configs as bc
from fauxka.model.config_resources import BROKER, BROKER_LOGGER, RESOURCE_TYPES, TOPIC, java_int
from fauxka.model.errors import ErrorCode, KafkaError
from fauxka.model.topic_configs import TOPIC_CONFIGS, ConfigValidationError, validate_topic_configs
from fauxka.zkstore import MultiFailed, NodeExists, NoNode, ZkUnavailable
from fauxka.zkstore import paths as zp
from fauxka.zkstore.fenced import ControllerMoved, FencedWriter
from fauxka.zkstore.store import Op

from .audit import AuditLog, Caller
from .broker_parts import CacheWaits, Metadata, Settings
from .election import ControllerElection
from .policy import TopicAction
from .policy_gate import PolicyGate
from .write_waits import WriteWaits

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
OP_NAMES = {SET: "SET", DELETE: "DELETE", APPEND: "APPEND", SUBTRACT: "SUBTRACT"}
CACHE_WAIT_S = 5.0
HIDDEN = "[hidden]"  # Password.HIDDEN, how Kafka logs a sensitive value


@dataclass
class AlterOp:
    name: str
    value: str | None
    op: int = SET  # AlterConfigs (legacy) entries are SETs of the whole config


@dataclass
class ResourceChange:
    resource_type: int
    name: str
    ops: list[AlterOp] = field(default_factory=list)


@dataclass
class ResourceOutcome:
    resource_type: int
    name: str
    error_code: int = ErrorCode.none
    error_message: str | None = None


# --- incremental operations (ConfigAdminManager.prepareIncrementalConfigs) ----------------------------

def java_split(text: str) -> list[str]:
    """String.split(","): trailing empty strings dropped; "" gives [""]."""
    if text == "":
        return [""]
    parts = text.split(",")
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def apply_incremental(current: Mapping[str, str], ops: list[AlterOp], is_list: Callable[[str], bool | None],
                      default_of: Callable[[str], str | None]) -> dict[str, str]:
    """The resource's new config after `ops`, in order. `is_list(name)` is None for a key the config
    definition lacks (Kafka's map lookup throws: UNKNOWN_SERVER_ERROR); APPEND and SUBTRACT need a
    LIST key (INVALID_CONFIG otherwise); an unknown operation is a MatchError (UNKNOWN_SERVER_ERROR)."""
    props = dict(current)
    for op in ops:
        if op.op == SET:
            props[op.name] = op.value
        elif op.op == DELETE:
            props.pop(op.name, None)
        elif op.op in (APPEND, SUBTRACT):
            listed = is_list(op.name)
            if listed is None:
                raise KafkaError(ErrorCode.unknown_server_error, None)
            if not listed:
                verb = "append" if op.op == APPEND else "subtract"
                raise KafkaError(ErrorCode.invalid_config, f"Config value {verb} is not allowed for config key: {op.name}")
            old = props.get(op.name, default_of(op.name))
            if op.op == APPEND:
                old_list = java_split(old) if old else []
                added = [v for v in java_split(op.value) if v not in old_list]
                props[op.name] = ",".join(old_list + added)
            else:
                remaining = java_split(old or "")
                for v in java_split(op.value):  # Scala's diff: one occurrence per subtracted element
                    if v in remaining:
                        remaining.remove(v)
                props[op.name] = ",".join(remaining)
        else:
            raise KafkaError(ErrorCode.unknown_server_error, None)
    return props


# --- the request ---------------------------------------------------------------------------------------

def _loggable(change: ResourceChange, incremental: bool) -> list[dict[str, Any]]:
    def shown(op: AlterOp) -> str | None:
        if change.resource_type == TOPIC:
            d = TOPIC_CONFIGS.get(op.name)
            hidden = d is None or d.type == "PASSWORD"
        else:
            hidden = change.resource_type == BROKER and bc.is_sensitive(op.name)
        return HIDDEN if hidden and op.value is not None else op.value
    return [{"name": op.name, "value": shown(op), **({"op": OP_NAMES.get(op.op, op.op)} if incremental else {})}
            for op in change.ops]


def check_node_id(name: str, broker_id: int) -> None:
    """ConfigAdminManager.validateResourceNameIsCurrentNodeId."""
    if not java_int(name):
        raise KafkaError(ErrorCode.invalid_request, f"Node id must be an integer, but it is: {name}")
    if int(name) != broker_id:
        raise KafkaError(ErrorCode.invalid_request, f"Unexpected broker id, expected {broker_id}, but received {name}")


def _authorize(authorize: Callable[[int, str], bool], change: ResourceChange) -> None:
    if not authorize(change.resource_type, change.name):  # KafkaApis.configsAuthorizationApiError: no message
        raise KafkaError(ErrorCode.cluster_authorization_failed if change.resource_type != TOPIC else ErrorCode.topic_authorization_failed)


@dataclass(eq=False)
class ConfigWrites:
    """The controller's config writes (topics, brokers) and this broker's logger levels: what they read
    (the broker's config, the metadata cache, the policies) and write (fenced), then wait for."""

    config: Settings
    cache: Metadata
    writer: FencedWriter
    election: ControllerElection
    purgatory: CacheWaits
    gate: PolicyGate
    waits: WriteWaits
    audit: AuditLog
    log: Any

    async def alter(self, changes: list[ResourceChange], validate_only: bool, incremental: bool,
                    caller: Caller, authorize=lambda resource_type, name: True) -> list[ResourceOutcome]:
        """Outcomes in request order. `authorize(type, name)`: ACLs."""
        started = time.perf_counter()
        counts: dict[tuple[int, str], int] = {}
        for change in changes:
            counts[(change.resource_type, change.name)] = counts.get((change.resource_type, change.name), 0) + 1
        outcomes = [ResourceOutcome(c.resource_type, c.name) for c in changes]
        written: dict[str, ResourceOutcome] = {}
        for index, (change, outcome) in enumerate(zip(changes, outcomes)):
            try:
                if counts[(change.resource_type, change.name)] > 1:
                    raise KafkaError(ErrorCode.invalid_request, "Each resource must appear at most once.")
                if await self._alter_one(change, validate_only, incremental, caller, authorize):
                    written[str(index)] = outcome
            except KafkaError as exc:
                outcome.error_code, outcome.error_message = exc.code, exc.message
            except ControllerMoved as exc:
                self.election.resign(str(exc))
                outcome.error_code = ErrorCode.not_controller
            except ZkUnavailable as exc:
                self.log.warning("config write interrupted", resource=change.name, error=str(exc))
                outcome.error_code = ErrorCode.request_timed_out
        await self.waits.wait_cluster(list(written), CACHE_WAIT_S, written)  # fauxka.admin.blocking=cluster
        latency_ms = (time.perf_counter() - started) * 1000
        action = "INCREMENTAL_ALTER_CONFIGS" if incremental else "ALTER_CONFIGS"
        for change, outcome in zip(changes, outcomes):
            self.audit.record(caller, resource_type=RESOURCE_TYPES.get(change.resource_type, str(change.resource_type)),
                              resource_name=change.name, action=action, validate_only=validate_only,
                              error_code=outcome.error_code, error_message=outcome.error_message,
                              latency_ms=latency_ms, configs=_loggable(change, incremental))
        return outcomes

    async def _alter_one(self, change: ResourceChange, validate_only: bool, incremental: bool, caller, authorize) -> bool:
        """Whether ZooKeeper was written."""
        names = [op.name for op in change.ops]
        if len(set(names)) != len(names):
            raise KafkaError(ErrorCode.invalid_request, "Error due to duplicate config keys")
        nulls = [op.name for op in change.ops if op.value is None and not (incremental and op.op == DELETE)]
        if nulls:
            raise KafkaError(ErrorCode.invalid_request, "Null value not supported for : " + ", ".join(nulls))
        if change.resource_type == BROKER_LOGGER and incremental:
            _authorize(authorize, change)
            self._alter_loggers(change, validate_only)
            return False
        if change.resource_type == BROKER:
            return await self._alter_broker(change, validate_only, incremental, authorize, self._receiving_broker(caller))
        if change.resource_type == TOPIC:
            _authorize(authorize, change)
            return await self._alter_topic(change, validate_only, incremental, caller)
        raise KafkaError(ErrorCode.invalid_request, f"Unknown resource type {change.resource_type}")

    def _alter_loggers(self, change: ResourceChange, validate_only: bool) -> None:
        check_node_id(change.name, self.config.broker_id)
        known = bc.loggers(self.config["log.level"])
        for op in change.ops:
            if op.op in (SET, DELETE) and op.name not in known:
                raise KafkaError(ErrorCode.invalid_config, f"Logger {op.name} does not exist!")
            if op.op == SET and op.value not in bc.VALID_LOG_LEVELS:
                raise KafkaError(ErrorCode.invalid_config,
                                 f"Cannot set the log level of {op.name} to {op.value} as it is not a supported log "
                                 f"level. Valid log levels are {', '.join(bc.VALID_LOG_LEVELS)}")
            if op.op == DELETE and op.name == bc.ROOT_LOGGER:
                raise KafkaError(ErrorCode.invalid_request, f"Removing the log level of the {bc.ROOT_LOGGER} logger is not allowed")
            if op.op in (APPEND, SUBTRACT):
                raise KafkaError(ErrorCode.invalid_request,
                                 f"{OP_NAMES[op.op]} operation is not allowed for the BROKER_LOGGER resource")
            if op.op not in OP_NAMES:
                raise KafkaError(ErrorCode.invalid_request,
                                 f"Unknown operation type {op.op} is not allowed for the BROKER_LOGGER resource")
        if not validate_only:
            for op in change.ops:
                if op.op == SET:
                    bc.logger_levels[op.name] = op.value

    def _receiving_broker(self, caller: Caller) -> int:
        """The broker the client sent the request to: a BROKER resource must name it. Kafka checks the id
        there (ConfigAdminManager.preprocess) and never again on the forwarded request, so a request
        forwarded in an envelope is checked against the broker that forwarded it."""
        return caller.forwarded_by if caller.forwarded_by is not None else self.config.broker_id

    async def _alter_broker(self, change: ResourceChange, validate_only: bool, incremental: bool,
                            authorize: Callable[[int, str], bool], receiving_broker: int) -> bool:
        per_broker = change.name != ""
        if per_broker:
            check_node_id(change.name, receiving_broker)
        entity = change.name if per_broker else bc.DEFAULT_ENTITY
        cache = self.cache
        dynamic_default = cache.broker_configs.get(bc.DEFAULT_ENTITY, {})
        dynamic_broker = cache.broker_configs.get(str(receiving_broker), {})
        if incremental:
            unknown = next((op.op for op in change.ops if op.op not in OP_NAMES), None)
            if unknown is not None:
                raise KafkaError(ErrorCode.invalid_request, f"Unknown operations type {unknown}")
            current = bc.effective_dynamic(cache.broker_configs.get(entity, {}), per_broker)
            props = apply_incremental(current, change.ops, bc.is_list, lambda n: bc.BROKER_KEYS[n].default)
        else:
            props = {op.name: op.value for op in change.ops}
        try:
            bc.validate_dynamic_change(props, per_broker, self.config.originals, dynamic_default, dynamic_broker)
        except bc.BrokerConfigError as exc:
            raise KafkaError(ErrorCode.invalid_request, exc.message) from None
        _authorize(authorize, change)  # after ConfigAdminManager.preprocess, as Kafka asks
        self.gate.check_broker(change.name, {op.name: op.value for op in change.ops})
        if validate_only:
            return False
        await self._write("brokers", entity, props, shown=lambda: cache.broker_configs.get(entity))
        return True

    async def _alter_topic(self, change: ResourceChange, validate_only: bool, incremental: bool, caller: Caller) -> bool:
        topic = change.name
        if topic == "":
            raise KafkaError(ErrorCode.invalid_request, "Default topic resources are not allowed.")
        cache = self.cache
        if incremental:
            props = apply_incremental(cache.topic_configs.get(topic, {}), change.ops,
                                      lambda n: TOPIC_CONFIGS[n].type == "LIST" if n in TOPIC_CONFIGS else None,
                                      lambda n: TOPIC_CONFIGS[n].default)
        else:
            props = {op.name: op.value for op in change.ops}
        if topic not in cache.all_topics:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"The topic '{topic}' does not exist.")
        try:
            validate_topic_configs(props)
        except ConfigValidationError as exc:
            # ZkAdminManager's ConfigException handler names the resource (ConfigResource.toString)
            prefix = f"Invalid config value for resource ConfigResource(type=TOPIC, name='{topic}'): "
            prefix = prefix if exc.config_exception else ""
            raise KafkaError(ErrorCode.invalid_config, prefix + exc.message) from None
        pre = self.gate.state_of(topic)
        post = dataclasses.replace(pre, configs=dict(props)) if pre is not None else None
        self.gate.check_topic(TopicAction.MODIFY, topic, pre, post, caller, validate_only,
                              requested_configs={op.name: op.value for op in change.ops})
        if validate_only:
            return False
        cache.watch_owned([topic])  # the wait below needs the config znode's watch
        await self._write("topics", topic, props, shown=lambda: cache.topic_configs.get(topic))
        return True

    async def _write(self, entity_type: str, entity: str, config: dict[str, str], shown: Callable[[], Any]) -> None:
        """AdminZkClient.changeEntityConfig: set (or create) the config znode, then the change notification;
        then wait (bounded) until the controller's cache, as `shown()` reads it, has the new config."""
        path = zp.entity_config_path(entity_type, entity)
        data = zp.encode_entity_config(config)
        notification = Op.create(zp.CONFIG_CHANGE_PREFIX, zp.encode_config_change(f"{entity_type}/{entity}"),
                                 sequence=True)
        for first in (Op.set(path, data), Op.create(path, data), Op.set(path, data)):
            try:
                await self.writer.write([first, notification])
                await self.purgatory.wait({entity}, lambda keys: keys if shown() == config else set(), CACHE_WAIT_S)
                return
            except MultiFailed as failed:
                if failed.index == 0 and isinstance(failed.cause, (NoNode, NodeExists)):
                    continue  # created or deleted meanwhile: try the other way
                self.log.error("config write failed", path=path, error=repr(failed.cause))
                raise KafkaError(ErrorCode.unknown_server_error, None) from None
        raise KafkaError(ErrorCode.unknown_server_error, None)
