"""auto.create.topics.enable: Metadata for an unknown topic asks the controller to create it.

As Kafka 3.9's AutoTopicCreationManager in ZooKeeper mode (forwarding off, createTopicsInZk): any
broker creates the topic with timeout 0 and answers what that gave, LEADER_NOT_AVAILABLE for a
topic created (or already there, or "timed out" at timeout 0), the creation's own error otherwise
(INVALID_REPLICATION_FACTOR when too few brokers are alive, POLICY_VIOLATION, ...); the client
retries LEADER_NOT_AVAILABLE. fauxka writes topics only on the controller: the controller creates
at once, another broker sends it a CreateTopics (timeout 0) inside an envelope carrying the
client's principal and address, so ACLs, policies and the audit see the client, and waits for its
answer. A topic already being created answers UNKNOWN_TOPIC_OR_PARTITION, as in Kafka.
"""

import asyncio
import dataclasses
from typing import Any, Callable

from fauxka.controller.admin import AdminController
from fauxka.controller.topics import NewTopic
from fauxka.model.errors import ErrorCode
from .config import BrokerConfig
from .forwarding import ForwardingManager
from .handlers.admin_common import caller
from .metadata_cache import MetadataCache
from .protocol import api_table
from .protocol.build import build
from .protocol.codec import decode_request, decode_response, encode_request, request_schema

CREATE_TOPICS_VERSION = 7
TopicSpec = tuple[int, int, dict[str, str]]  # partitions, replication factor, configs
# what createTopicsInZk answers for these creation outcomes: the topic is there (or on its way)
_CREATED = frozenset({ErrorCode.none, ErrorCode.topic_already_exists, ErrorCode.request_timed_out})


def broker_principal(config: BrokerConfig) -> str:
    """The principal this broker has on the inter-broker listener (User:ANONYMOUS over PLAINTEXT)."""
    credentials = config.inter_broker_credentials()
    return f"User:{credentials[1]}" if credentials is not None else "User:ANONYMOUS"


class AutoTopicCreator:
    def __init__(self, config: BrokerConfig, admin: AdminController, forwarding: ForwardingManager,
                 internal_specs: dict[str, Callable[[], TopicSpec]], log: Any):
        """`internal_specs`: what the internal topics get (__consumer_offsets, __transaction_state:
        their coordinators say), by name."""
        self._config = config
        self._admin = admin
        self._forwarding = forwarding
        self._internal_specs = internal_specs
        self._log = log
        self._in_flight: set[str] = set()
        self._tasks: set[asyncio.Task] = set()

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def request(self, names: list[str], ctx,
                spec: TopicSpec | None = None) -> None:
        """Create `names` in the background as this broker's own request (FindCoordinator's internal
        topics: Kafka passes no client context; its client is answered COORDINATOR_NOT_AVAILABLE
        whatever the creation gives)."""
        task = asyncio.get_running_loop().create_task(self.create(names, ctx, spec, as_broker=True),
                                                      name="auto-create-topics")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def create(self, names: list[str], ctx,
                     spec: TopicSpec | None = None, as_broker: bool = False) -> dict[str, int]:
        """Create `names` on behalf of the request `ctx`; the error code Metadata answers for each.
        `spec` (partitions, replication factor, configs) replaces what each name gets otherwise:
        the internal topics' own (AutoTopicCreationManager.creatableTopic), else the broker defaults."""
        codes = {n: ErrorCode.unknown_topic_or_partition for n in names}
        fresh = [n for n in dict.fromkeys(names) if n not in self._in_flight]
        if not fresh:
            return codes
        self._in_flight.update(fresh)
        try:
            topics = [(n, *(spec or self._spec(n))) for n in fresh]
            if self._admin.active:
                outcomes = await self._create_here(topics, ctx)
            else:
                outcomes = await self._ask_controller(topics, ctx, as_broker)
        finally:
            self._in_flight.difference_update(fresh)
        for name, code in outcomes.items():
            if name in codes:
                codes[name] = ErrorCode.leader_not_available if code in _CREATED else code
        return codes

    def _spec(self, name: str) -> TopicSpec:
        internal = self._internal_specs.get(name)
        if internal is not None:
            return internal()
        config = self._config
        return config["num.partitions"], config["default.replication.factor"], {}

    async def _create_here(self, topics: list[tuple], ctx) -> dict[str, int]:
        outcomes = await self._admin.create_topics(
            [NewTopic(n, partitions, replication, configs=dict(configs)) for n, partitions, replication, configs in topics],
            validate_only=False, timeout_ms=0, caller=caller(ctx))
        return {o.name: int(o.error_code) for o in outcomes}

    async def _ask_controller(self, topics: list[tuple], ctx, as_broker: bool) -> dict[str, int]:
        """The controller's answer per topic; none (UNKNOWN_TOPIC_OR_PARTITION) if it gave none."""
        request = build(request_schema(19, CREATE_TOPICS_VERSION), {
            "topics": [{"name": n, "num_partitions": partitions, "replication_factor": replication,
                        "assignments": [], "configs": [{"name": k, "value": v} for k, v in configs.items()]}
                       for n, partitions, replication, configs in topics],
            "timeout": 0, "validate_only": False})
        frame = encode_request(request, ctx.request.correlation_id, ctx.request.client_id)[4:]
        create = decode_request(frame, api_table.lookup(19), CREATE_TOPICS_VERSION)
        # the broker's own request (FindCoordinator) is authorized as the broker's principal
        principal = broker_principal(self._config) if as_broker else ctx.principal
        as_client = dataclasses.replace(ctx, request=create, principal=principal, forwarded_by=None,
                                        log=ctx.log.bind(api="create_topics", auto_create=True))
        try:
            answer = await self._forwarding.forward(as_client)
            if isinstance(answer, (bytes, bytearray, memoryview)):  # the controller's response frame
                answer = decode_response(bytes(answer), request_schema(19, CREATE_TOPICS_VERSION))[1]
            return {t.name: int(t.error_code) for t in answer.topics}
        except Exception as exc:  # the client's next Metadata asks again
            self._log.warning("auto topic creation request failed", topics=[t[0] for t in topics],
                                     error=repr(exc))
            return {}
