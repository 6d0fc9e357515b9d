"""auto.create.topics.enable: Metadata for an unknown topic asks the controller to create it.

As Kafka 3.x's AutoTopicCreationManager: the active controller creates at once
(the client sees ErrorCode.leader_not_available and retries); another broker forwards a
CreateTopics to the controller in the background, inside an envelope carrying
the client's principal and address, so ACLs, policies and the audit see the
client (the client sees ErrorCode.unknown_topic_or_partition and retries). A topic
already asked for is not asked again.
"""

import asyncio
from typing import TYPE_CHECKING

from controller.topics import NewTopic
from model.errors import ErrorCode
from .config import inter_broker_credentials
from .context import RequestContext
from .handlers.admin_common import caller
from .protocol import api_table
from .protocol.build import build
from .protocol.codec import decode_request, encode_request, request_schema

if TYPE_CHECKING:
    from .app import Broker

_CREATE_TOPICS_VERSION = 7


def internal_topic_spec(broker, partitions_key: str, replication_key: str, configs) -> tuple[int, int, dict[str, str]]:
    """(partitions, replication factor, configs(replication)) of an internal topic created on first
    need, its replication factor capped by the live brokers (Kafka refuses until enough are alive)."""
    replication = min(broker.config[replication_key], max(len(broker.cache.brokers), 1))
    return broker.config[partitions_key], replication, configs(replication)


def _broker_principal(broker) -> str:
    """The principal this broker has on the inter-broker listener (User:ANONYMOUS over PLAINTEXT)."""
    credentials = inter_broker_credentials(broker.config)
    return f"User:{credentials[1]}" if credentials is not None else "User:ANONYMOUS"


class AutoTopicCreator:
    def __init__(self, broker: "Broker"):
        self._broker = broker
        self._in_flight: set[str] = set()
        self._tasks: set[asyncio.Task] = set()

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def request(self, names: list[str], ctx: RequestContext,
                spec: tuple[int, int, dict[str, str]] | None = None) -> int:
        """Ask for `names` to be created on behalf of the Metadata request `ctx`; the error code
        Metadata answers for them. `spec` (partitions, replication factor, configs) replaces the
        broker defaults, as for an internal topic (__consumer_offsets, GroupCoordinator.offsetsTopicConfigs)."""
        fresh = [n for n in names if n not in self._in_flight]
        self._in_flight.update(fresh)
        local = self._broker.admin.active
        if fresh:
            work = self._create_here(fresh, ctx, spec) if local else self._ask_controller(fresh, ctx, spec)
            task = asyncio.get_running_loop().create_task(work, name="auto-create-topics")
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            task.add_done_callback(lambda _t: self._in_flight.difference_update(fresh))
        return ErrorCode.leader_not_available if local else ErrorCode.unknown_topic_or_partition

    def _defaults(self) -> tuple[int, int]:
        config = self._broker.config
        return config["num.partitions"], config["default.replication.factor"]

    async def _create_here(self, names: list[str], ctx: RequestContext, spec=None) -> None:
        partitions, replication = self._defaults()
        configs: dict[str, str | None] = {}
        if spec is not None:
            partitions, replication, configs = spec
        await self._broker.admin.create_topics([NewTopic(n, partitions, replication, configs=dict(configs))
                                                for n in names],
                                               validate_only=False, timeout_ms=0, caller=caller(ctx))

    async def _ask_controller(self, names: list[str], ctx: RequestContext, spec=None) -> None:
        partitions, replication = self._defaults()
        configs: dict[str, str] = {}
        if spec is not None:
            partitions, replication, configs = spec
        request = build(request_schema(19, _CREATE_TOPICS_VERSION), {
            "topics": [{"name": n, "num_partitions": partitions, "replication_factor": replication,
                        "assignments": [], "configs": [{"name": k, "value": v} for k, v in configs.items()]}
                       for n in names],
            "timeout": 0, "validate_only": False})
        frame = encode_request(request, ctx.request.correlation_id, ctx.request.client_id)[4:]
        create = decode_request(frame, api_table.lookup(19), _CREATE_TOPICS_VERSION)
        # an internal topic is the broker's own request (Kafka's FindCoordinator passes no client
        # context to AutoTopicCreationManager): the controller authorizes the broker's principal
        principal = ctx.principal if spec is None else _broker_principal(self._broker)
        as_client = RequestContext(self._broker, create, ctx.listener, principal, ctx.client_host,
                                   ctx.log.bind(api="create_topics", auto_create=True), connection=ctx.connection)
        try:
            await self._broker.forwarding.forward(as_client)
        except Exception as exc:  # the client's next Metadata asks again
            self._broker.log.warning("auto topic creation request failed", topics=names, error=repr(exc))
