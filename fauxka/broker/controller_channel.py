"""This broker's client of the controller role (Kafka's NodeToControllerChannelManager users:
AlterPartitionManager, RPCProducerIdManager, KafkaServer.controlledShutdown).

Requests go on the shared controller link (fauxka/broker/controller_link.py). NOT_CONTROLLER or a lost
connection: forget the connection, wait for the cache to name the controller (or a short
backoff), and retry until the call's deadline. When this broker is itself the controller the
request still goes over the wire to itself, so one path is tested.
"""

import asyncio
import time
import uuid
from dataclasses import dataclass
from typing import Any

from fauxka.model.errors import ErrorCode, KafkaError

from .config import BrokerConfig
from .controller_link import ControllerLink
from .metadata_cache import MetadataCache
from .protocol.build import build
from .protocol.codec import RequestParseError, request_schema

DEFAULT_TIMEOUT_S = 30.0  # request.timeout.ms's default; callers with their own deadline pass it


@dataclass
class IsrResult:
    error: ErrorCode
    leader: int
    leader_epoch: int
    isr: list[int]
    partition_epoch: int


class ControllerChannel:
    def __init__(self, broker_id: int, config: BrokerConfig, cache: MetadataCache, link: ControllerLink, log: Any):
        self._broker_id = broker_id
        self._config = config
        self._cache = cache
        self._link = link
        self._log = log

    async def close(self) -> None:
        await self._link.close()

    def _broker_epoch(self) -> int:
        return self._cache.broker_epochs.get(self._broker_id, -1)

    def _timeout_s(self) -> float:
        return self._config["request.timeout.ms"] / 1000

    async def send(self, request: Any, deadline: float, retriable: frozenset = frozenset()) -> Any:
        """The controller's response to `request`, retried on NOT_CONTROLLER (top level), on any
        top-level error in `retriable`, and on disconnects, until `deadline` (monotonic);
        KafkaError(REQUEST_TIMED_OUT) past it."""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise KafkaError(ErrorCode.request_timed_out, "no answer from the controller in time")
            channel = await self._link.connection(remaining)
            if channel is None:
                await self._link.wait_for_news(deadline)
                continue
            try:
                response = await channel.send(request, max(deadline - time.monotonic(), 0.001))
            except (ConnectionError, OSError, asyncio.TimeoutError, RequestParseError):
                await self._link.drop(channel)
                await self._link.wait_for_news(deadline)
                continue
            code = ErrorCode(int(getattr(response, "error_code", 0)))
            if code == ErrorCode.not_controller or code in retriable:
                if code == ErrorCode.not_controller:
                    await self._link.drop(channel)
                await self._link.wait_for_news(deadline)
                continue
            return response

    async def alter_partition(self, topic: str, topic_id: uuid.UUID, partition: int, leader_epoch: int,
                              new_isr: list[int], partition_epoch: int) -> IsrResult:
        """AlterPartition v3 for one partition; the controller's per-partition answer. A top-level
        error other than NOT_CONTROLLER comes back as the result's error."""
        request = build(request_schema(56, 3), {
            "broker_id": self._broker_id, "broker_epoch": self._broker_epoch(),
            "topics": [{"topic_id": topic_id, "partitions": [{
                "partition_index": partition, "leader_epoch": leader_epoch,
                "new_isr_with_epochs": [{"broker_id": b, "broker_epoch": -1} for b in new_isr],
                "leader_recovery_state": 0, "partition_epoch": partition_epoch}]}]})
        response = await self.send(request, time.monotonic() + self._timeout_s())
        if int(response.error_code) != 0:
            return IsrResult(ErrorCode(int(response.error_code)), -1, -1, [], -1)
        for t in response.topics:
            for p in t.partitions:
                if p.partition_index == partition:
                    return IsrResult(ErrorCode(int(p.error_code)), p.leader_id, p.leader_epoch, list(p.isr),
                                     p.partition_epoch)
        return IsrResult(ErrorCode.unknown_server_error, -1, -1, [], -1)

    async def allocate_producer_ids(self) -> tuple[int, int]:
        """AllocateProducerIds v0: (first id, count) of a new block for this broker."""
        request = build(request_schema(67, 0), {"broker_id": self._broker_id,
                                                "broker_epoch": self._broker_epoch()})
        response = await self.send(request, time.monotonic() + self._timeout_s())
        if int(response.error_code) != 0:
            raise KafkaError(ErrorCode(int(response.error_code)), "AllocateProducerIds failed")
        return int(response.producer_id_start), int(response.producer_id_len)

    async def controlled_shutdown(self) -> None:
        """ControlledShutdown v3 as KafkaServer.controlledShutdown: up to controlled.shutdown.max.retries
        attempts, each until request.timeout.ms, controlled.shutdown.retry.backoff.ms apart, until
        the controller answers NONE with no remaining partitions. KafkaError when it never does."""
        config = self._config
        attempts = max(1, config["controlled.shutdown.max.retries"])
        backoff_s = config["controlled.shutdown.retry.backoff.ms"] / 1000
        last = "no answer"
        for attempt in range(attempts):
            request = build(request_schema(7, 3), {"broker_id": self._broker_id,
                                                   "broker_epoch": self._broker_epoch()})
            try:
                response = await self.send(request, time.monotonic() + self._timeout_s())
            except KafkaError as exc:
                last = exc.message or exc.code.name
            else:
                remaining = [(p.topic_name, p.partition_index) for p in response.remaining_partitions]
                if int(response.error_code) == 0 and not remaining:
                    return
                last = f"error {ErrorCode(int(response.error_code)).name}, remaining partitions {remaining}"
            self._log.warning("controlled shutdown attempt failed", attempt=attempt + 1, reason=last)
            if attempt + 1 < attempts:
                await asyncio.sleep(backoff_s)
        raise KafkaError(ErrorCode.request_timed_out, f"controlled shutdown did not complete: {last}")
