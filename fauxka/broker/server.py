"""Listeners and connections: frames in, handlers, responses out.

Each connection is one task that answers its requests in order, one at a time,
as a Kafka broker does (the channel is muted while a request is in flight), with one exception:
an acks=all Produce whose appends are done only waits for the followers (Kafka's DelayedProduce),
so the connection reads on while it waits, as long as the next requests are Produces too (at most
PRODUCE_PIPELINE of them). Each still appends in the order sent and is answered in that order;
anything else waits until every earlier request is answered. Without this, a producer's
pipelined requests (librdkafka sends up to 1,000,000 per connection) each paid the whole
replication round trip in turn, and acks=all took a quarter of acks=1's rate. Throttled
connections (a quota configured) and injected faults keep the strict one at a time.
Anything that cannot be parsed closes the connection with a log line.
"""

import asyncio
import collections
import dataclasses
import datetime
import time
from typing import Any

from . import logs
from .auth.sasl import new_session
from .bind_errors import bind_error
from .config import Endpoint
from .connection import Connection
from .context import RequestContext
from .handlers import api_versions
from .handlers.table import dispatch
from .protocol import api_table
from .protocol.codec import RequestParseError, decode_request, encode_response, peek
from .protocol.framing import STREAM_LIMIT, FrameError, read_frame, with_size_prefix
from .request_metrics import FETCH_KEY, error_codes
from .context import Services
from .tls import handshake

API_VERSIONS_KEY = 18
# Not charged to request_percentage: version discovery, authentication, and brokers' envelopes
# (Kafka exempts ApiVersions before authentication and ClusterAction requests).
QUOTA_EXEMPT = frozenset((18, 17, 36, 58, 4, 5, 6))
PRODUCE_KEY = 0
PRODUCE_PIPELINE = 5  # acks=all Produces waiting for their replicas at once on one connection
STOP_TIMEOUT_S = 5.0  # how long stop() waits for the connections it cancelled


class Server:
    def __init__(self, services: Services, log: Any):
        """`services`: what each request's context carries; the server itself reads the config, the
        metrics, the quotas, the faults and (SASL) the cache and tokens from it."""
        self._services = services
        self._config = services.config
        self._metrics = services.metrics
        self._quotas = services.quotas
        self._faults = services.faults
        self._log = log.bind(component="server")
        self._servers: list[asyncio.base_events.Server] = []
        self._connections: set[asyncio.Task] = set()
        self._stopping = False
        self.bound: list[Endpoint] = services.bound  # listeners with the ports actually bound

    async def start(self) -> None:
        for endpoint in self._config.listeners:
            try:
                server = await asyncio.start_server(
                    lambda r, w, ep=endpoint: self._accept(ep, r, w),
                    host=endpoint.host or None, port=endpoint.port, reuse_address=True, limit=STREAM_LIMIT)
            except OSError as exc:
                raise bind_error(exc, f"listener {endpoint.listener}", endpoint.host, endpoint.port) from None
            port = server.sockets[0].getsockname()[1]
            self._servers.append(server)
            self.bound.append(Endpoint(endpoint.listener, endpoint.host, port, endpoint.security_protocol))
            self._metrics.sockets.listener(endpoint.listener)
            self._log.info("listening", listener=endpoint.listener, host=endpoint.host, port=port)

    async def stop(self) -> None:
        """Stop listening and end every connection, at most STOP_TIMEOUT_S (a connection that
        does not end is left to the process exit rather than hanging the shutdown)."""
        self._stopping = True
        for server in self._servers:
            server.close()
        for task in list(self._connections):
            task.cancel()
        if self._connections:
            _, pending = await asyncio.wait(list(self._connections), timeout=STOP_TIMEOUT_S)
            if pending:
                self._log.warning("connections did not end", count=len(pending))
        try:  # Python 3.12+ waits here for the connections too
            async with asyncio.timeout(STOP_TIMEOUT_S):
                for server in self._servers:
                    await server.wait_closed()
        except TimeoutError:
            self._log.warning("listeners did not close in time")

    async def _accept(self, endpoint: Endpoint, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._stopping:  # accepted as the listeners closed: stop() has not seen this task
            writer.close()
            return
        task = asyncio.current_task()
        self._connections.add(task)
        task.add_done_callback(self._connections.discard)
        try:
            await self._connection(endpoint, reader, writer)
        except asyncio.CancelledError:
            # stop(): end quietly; asyncio's client_connected_cb callback would log a cancelled
            # connection task as an unhandled exception, traceback and all
            pass

    async def _connection(self, endpoint: Endpoint, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername") or ("?", 0)
        log = self._log.bind(listener=endpoint.listener, peer=f"{peer[0]}:{peer[1]}")
        sockets = self._metrics.sockets
        sockets.opened(endpoint.listener)
        # the listener as bound (the port a configured 0 became), which the connection's id names
        conn = Connection(next((ep for ep in self.bound if ep.listener == endpoint.listener), endpoint), peer[0])
        max_bytes = self._config["socket.request.max.bytes"]
        idle_ms = self._config["connections.max.idle.ms"]
        idle_s = idle_ms / 1000 if idle_ms >= 0 else None
        tls_settings = self._config.tls
        try:
            tls = tls_settings.listeners.get(endpoint.listener)
            if tls is not None:  # SSL / SASL_SSL: the handshake first, then the client certificate's principal
                reader = writer = handshake.TlsStream(tls.context, reader, writer)  # the plain stream underneath
                principal = await handshake.accept(tls, writer, tls_settings.handshake_timeout_s)
                if principal is not None and endpoint.security_protocol == "SSL":
                    conn.principal = principal
            services = self._services  # SASL: None on a PLAINTEXT or SSL listener
            conn.sasl = sasl = new_session(conn, self._config, services.cache, services.tokens)
            waiting: collections.deque[asyncio.Task] = collections.deque()  # Produces not answered yet, in order
            while True:
                muted = conn.muted_until - time.monotonic()
                if muted > 0:  # KIP-219: the response went out at once, the next request waits the throttle time
                    await asyncio.sleep(muted)
                authenticating = sasl is not None and not sasl.complete
                try:  # connections.max.idle.ms: Kafka's Selector closes a channel idle that long
                    async with asyncio.timeout(None if waiting else idle_s):
                        frame = await read_frame(reader, sasl.max_receive if authenticating else max_bytes)
                except TimeoutError:
                    log.debug("closing idle connection", idle_ms=idle_ms)
                    break
                if frame is None:
                    break
                if len(frame) >= 2 and frame[1] == PRODUCE_KEY and frame[0] == 0 and not authenticating \
                        and self._may_pipeline():
                    await self._produce(conn, frame, log, writer, waiting)
                else:
                    while waiting:  # every earlier answer is out before this request is looked at
                        await waiting.popleft()
                    response = await self._answer(conn, frame, log)
                    if response:
                        writer.write(response)
                        await writer.drain()
                if conn.close_after_response:
                    break
            while waiting:
                await waiting.popleft()
        except (FrameError, RequestParseError) as exc:
            log.warning("closing connection", reason=str(exc))
            self._metrics.closed_connections.labels(type(exc).__name__).inc()
        except handshake.TlsRejected as exc:
            log.warning("closing connection", reason=str(exc))
            self._metrics.closed_connections.labels(exc.kind).inc()
        except (ConnectionError, OSError):
            pass  # the peer went away
        except Exception as exc:  # a handler bug: log it, drop this connection, keep serving the others
            log.exception("request failed", error=repr(exc))
            self._metrics.closed_connections.labels("handler_error").inc()
        finally:
            for task in waiting:
                task.cancel()
            await asyncio.gather(*waiting, return_exceptions=True)
            sockets.closed(endpoint.listener, conn.client_software)
            writer.close()

    def _may_pipeline(self) -> bool:
        """Not with a quota configured (Kafka mutes a throttled connection before its next read) nor
        with faults injected (the fault kit delays, drops or rewrites answers one at a time)."""
        return not self._quotas.configured() and not self._faults.active

    async def _produce(self, conn: Connection, frame: bytes, log: Any, writer: Any,
                       waiting: "collections.deque[asyncio.Task]") -> None:
        """Start a Produce; return once it is answered, or once it only waits for its replicas
        (ctx.release_connection) with fewer than PRODUCE_PIPELINE such waits on the connection.
        Its answer is written after the ones before it."""
        loop = asyncio.get_running_loop()
        conn.release = release = loop.create_future()
        previous = waiting[-1] if waiting else None
        task = loop.create_task(self._answer_after(conn, frame, log, writer, previous), name="produce")
        task.add_done_callback(lambda _: release.done() or release.set_result(None))
        waiting.append(task)
        try:
            await release
        finally:
            conn.release = None
        if task.done():  # answered (acks 0 or 1, an error) or failed: the ones before it are done too
            while waiting:
                await waiting.popleft()  # raises what a task raised: the connection closes
        while waiting and (waiting[0].done() or len(waiting) > PRODUCE_PIPELINE):
            await waiting.popleft()

    async def _answer_after(self, conn: Connection, frame: bytes, log: Any, writer: Any,
                            previous: asyncio.Task | None) -> None:
        response = await self._answer(conn, frame, log)
        if previous is not None:
            await previous
        if response:
            writer.write(response)
            await writer.drain()

    async def _answer(self, conn: Connection, frame: bytes, log: Any) -> bytes | None:
        """The framed response to one frame (None: nothing to send)."""
        started = time.perf_counter()
        sasl = conn.sasl  # the connection's SASL exchange (None on a PLAINTEXT or SSL listener)
        if sasl is not None and sasl.expects_raw_token:  # after SaslHandshake v0: raw SASL tokens
            return await sasl.raw_token(frame)
        api_key, version, correlation_id = peek(frame)
        api = api_table.lookup(api_key)
        if api is None:
            raise RequestParseError(f"unknown api key {api_key}")
        if sasl is not None:  # before authentication only ApiVersions and the SASL requests pass
            sasl.admit(api_key, api.name, api.supports(version))
        if not api.supports(version):
            if api_key == API_VERSIONS_KEY:  # answered in v0 so any client can read it
                return encode_response(correlation_id, api_versions.unsupported_version_response())
            raise RequestParseError(f"unsupported version {version} of {api.name}")
        request = decode_request(frame, api, version)
        log = _BoundOnUse(log, api=api.name, version=version, correlation_id=correlation_id,
                          client_id=request.client_id)
        ctx = RequestContext.of(self._services, request, conn.listener, conn.principal,
                                conn.peer_host, log, connection=conn)
        response = await dispatch(ctx)
        if response is None:  # Produce with acks=0: no response at all
            return None
        forwarded = isinstance(response, bytes)  # the controller's answer, passed through as it came
        if response is None:  # no response at all (Produce acks=0): the next frame is read as usual
            error = "none"
        else:
            error = "forwarded" if forwarded else str(int(getattr(response, "error_code", 0)))
        elapsed = time.perf_counter() - started
        if response is not None and not forwarded and api_key not in QUOTA_EXEMPT:
            response = self._throttled(conn, ctx, response, elapsed)
        self._metrics.kafka_requests.record(api.name, version, None if forwarded else error_codes(api_key, response),
                                            elapsed * 1000, _throttle_ms(response), len(frame),
                                            _fetch_kind(request) if api_key == FETCH_KEY else None)
        if logs.enabled("debug"):
            log.debug("request", principal=ctx.principal, error=error, latency_ms=round(elapsed * 1000, 3))
        if response is None:
            return None
        return with_size_prefix(response) if forwarded else encode_response(correlation_id, response)

    def _throttled(self, conn: Connection, ctx: RequestContext, response: Any, elapsed_s: float) -> Any:
        """request_percentage: the handling time is charged as a percentage of one thread
        (ClientRequestQuotaManager); the response carries the larger of its throttle time and the one the
        handler set (controller mutations), and the connection is muted for it (KIP-219)."""
        throttle = self._quotas.record_request(ctx.principal, ctx.request.client_id or "", elapsed_s * 100,
                                              time.time() * 1000)
        current = getattr(response, "throttle_time", None)
        if current is None:
            return response
        current_ms = int(current.total_seconds() * 1000) if isinstance(current, datetime.timedelta) else int(current)
        throttle = max(throttle, current_ms)
        if throttle <= 0:
            return response
        conn.muted_until = time.monotonic() + throttle / 1000
        if throttle != current_ms:
            response = dataclasses.replace(response, throttle_time=datetime.timedelta(milliseconds=throttle))
        return response


class _BoundOnUse:
    """The request's logger, its keys bound when it is first used: most requests log nothing, and
    structlog's bind copies the context every time."""

    __slots__ = ("_log", "_keys", "_bound")

    def __init__(self, log: Any, **keys: Any):
        self._log, self._keys, self._bound = log, keys, None

    def __getattr__(self, name: str) -> Any:
        if self._bound is None:
            self._bound = self._log.bind(**self._keys)
        return getattr(self._bound, name)


def _throttle_ms(response: Any) -> float:
    """The throttle time a response carries, in ms (0 when none, or not known: forwarded bytes)."""
    throttle = getattr(response, "throttle_time", None)
    if throttle is None:
        return 0.0
    return throttle.total_seconds() * 1000 if isinstance(throttle, datetime.timedelta) else float(throttle)


def _fetch_kind(request: Any) -> str:
    """Kafka's FetchConsumer or FetchFollower (a replica id >= 0; Fetch v15+ in replica_state)."""
    body = request.body
    state = getattr(body, "replica_state", None)
    replica_id = state.replica_id if state is not None else getattr(body, "replica_id", -1)
    return "Follower" if replica_id >= 0 else "Consumer"
