"""The controller's audit trail published to a topic (`audit.topic`): one record per event, keyed
by principal, its value the same JSON line as `audit.log.file` holds, so `fauxka report --bootstrap
HOST:PORT --topic NAME` builds the same report as from the files.

Records go through aiokafka's producer (acks=all, idempotent) to the cluster's inter-broker
listener, secured and authenticated as this broker (as Kafka's own clients inside a broker do,
e.g. its metrics reporters). Recording never waits on the network: events queue here (at most
MAX_QUEUED; beyond that the oldest are dropped and counted in the log) and one task owned by the
broker sends them. The topic is the cluster's own, as Kafka's internal topics are: the controller
creates it at first need, before it publishes its first record (audit.topic.num.partitions,
audit.topic.replication.factor capped by the live brokers), whatever auto.create.topics.enable says.
"""

import asyncio
import collections
from typing import Any

from fauxka.controller.admin import AdminController
from fauxka.controller.audit import Caller
from fauxka.controller.topics import NewTopic
from fauxka.model.errors import ErrorCode

from .auto_create import CREATE_TOPICS_VERSION, broker_principal
from .config import BrokerConfig, internal_topic_spec
from .metadata_cache import MetadataCache

MAX_QUEUED = 100_000
RETRY_S = 1.0
FLUSH_S = 10.0


class AuditPublisher:
    def __init__(self, topic: str, config: BrokerConfig, cache: MetadataCache, admin: AdminController, log: Any):
        self.topic = topic
        self._broker_id = config.broker_id
        self._config = config
        self._cache = cache
        self._admin = admin
        self.log = log.bind(component="audit-publisher", topic=topic)
        self._queue: collections.deque[tuple[bytes, bytes]] = collections.deque()
        self._wake = asyncio.Event()
        self._producer = None
        self.dropped = 0
        self.sent = 0
        self._creating = asyncio.Lock()
        self._refused = False  # the creation met a lasting refusal (a policy, a bad config): not asked again

    def offer(self, key: bytes, value: bytes) -> None:
        """Queue one record (never blocks); the oldest is dropped when MAX_QUEUED are waiting."""
        if len(self._queue) >= MAX_QUEUED:
            self._queue.popleft()
            self.dropped += 1
        self._queue.append((key, value))
        self._wake.set()

    async def ensure_topic(self) -> None:
        """Create the topic if this broker is the controller and the topic is missing (Kafka's
        internal topics: at first need, by the broker itself, not by a client's auto-creation),
        waiting until its partitions have leaders (request.timeout.ms at most) so the first send
        finds them."""
        config, cache = self._config, self._cache
        async with self._creating:
            if self.topic in cache.topics or not self._admin.active or self._refused:
                return
            partitions, replication, _ = internal_topic_spec(
                config, len(cache.brokers), "audit.topic.num.partitions", "audit.topic.replication.factor",
                lambda _r: {})
            registration = cache.brokers.get(self._broker_id)
            endpoint = registration and registration.endpoint(config.inter_broker_listener)
            caller = Caller(principal=broker_principal(config), client_address=endpoint.host if endpoint else "",
                            receiving_broker=self._broker_id, forwarded_by=None, api="create_topics",
                            api_version=CREATE_TOPICS_VERSION)
            [outcome] = await self._admin.create_topics([NewTopic(self.topic, partitions, replication)],
                                                        validate_only=False, caller=caller,
                                                        timeout_ms=config["request.timeout.ms"])
            code = ErrorCode(outcome.error_code)
            if code not in (ErrorCode.none, ErrorCode.request_timed_out, ErrorCode.topic_already_exists):
                # each attempt is audited, hence published: retrying a lasting refusal would loop
                self._refused = not code.retriable
                self.log.warning("audit topic not created", error=code.name, message=outcome.error_message)
            else:
                self.log.info("audit topic created", partitions=partitions, replication_factor=replication)

    def _bootstrap(self) -> list[str]:
        listener = self._config.inter_broker_listener
        found = []
        for registration in self._cache.brokers.values():
            endpoint = registration.endpoint(listener)
            if endpoint is not None:
                found.append(f"{endpoint.host}:{endpoint.port}")
        return sorted(found)

    async def _connect(self):
        from aiokafka import AIOKafkaProducer

        settings: dict[str, Any] = {"acks": "all", "enable_idempotence": True, "linger_ms": 20,
                                    "client_id": f"fauxka-audit-{self._broker_id}",
                                    "request_timeout_ms": 30_000}
        tls = self._config.inter_broker_ssl
        credentials = self._config.inter_broker_credentials()
        if credentials is not None:
            mechanism, user, password = credentials
            settings.update(security_protocol="SASL_SSL" if tls else "SASL_PLAINTEXT", sasl_mechanism=mechanism,
                            sasl_plain_username=user, sasl_plain_password=password)
        elif tls is not None:
            settings["security_protocol"] = "SSL"
        if tls is not None:
            settings["ssl_context"] = tls
        producer = AIOKafkaProducer(bootstrap_servers=self._bootstrap(), **settings)
        async with asyncio.timeout(30):
            await producer.start()
        return producer

    async def run(self) -> None:
        """Send what is queued, in order, until cancelled; a failed send is retried after RETRY_S."""
        try:
            while True:
                if not self._queue:
                    self._wake.clear()
                    await self._wake.wait()
                try:
                    await self._send_queued()
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # the cluster is unreachable or the topic is not there yet
                    self.log.warning("audit records not published yet", error=repr(exc), queued=len(self._queue))
                    await self._close_producer()
                    await asyncio.sleep(RETRY_S)
        finally:
            await self._close_producer()

    async def _send_queued(self) -> None:
        await self.ensure_topic()
        if self._producer is None:
            self._producer = await self._connect()
        while self._queue:
            batch = [self._queue[i] for i in range(min(len(self._queue), 1000))]
            futures = [await self._producer.send(self.topic, value, key=key) for key, value in batch]
            async with asyncio.timeout(60):
                await asyncio.gather(*futures)
            for _ in batch:  # acknowledged: only now leave the queue
                self._queue.popleft()
            self.sent += len(batch)

    async def flush(self, timeout_s: float = FLUSH_S) -> None:
        """Wait (at most timeout_s) until every queued record is acknowledged: before shutdown."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while self._queue and loop.time() < deadline:
            await asyncio.sleep(0.05)
        if self._queue or self.dropped:
            self.log.warning("audit records not published", left=len(self._queue), dropped=self.dropped)

    async def _close_producer(self) -> None:
        producer, self._producer = self._producer, None
        if producer is not None:
            try:
                async with asyncio.timeout(10):
                    await producer.stop()
            except (asyncio.TimeoutError, Exception) as exc:
                self.log.info("audit producer closed uncleanly", error=repr(exc))
