"""Listeners and connections: frames in, handlers, responses out.

Each connection is one task that answers its requests in order, one at a time,
as a Kafka broker does (the channel is muted while a request is in flight).
Anything that cannot be parsed closes the connection with a log line.
"""

import asyncio
import time
from typing import TYPE_CHECKING, Any

from .auth.sasl import new_session
from .config import Endpoint
from .connection import Connection
from .context import RequestContext
from .dispatch import dispatch
from .handlers import api_versions
from .protocol import api_table
from .protocol.codec import RequestParseError, decode_request, encode_response, peek
from .protocol.framing import FrameError, read_frame, with_size_prefix

if TYPE_CHECKING:
    from .app import Broker

API_VERSIONS_KEY = 18


class Server:
    def __init__(self, broker: "Broker"):
        self._broker = broker
        self._log = broker.log.bind(component="server")
        self._servers: list[asyncio.base_events.Server] = []
        self._connections: set[asyncio.Task] = set()
        self.bound: list[Endpoint] = []  # listeners with the ports actually bound

    async def start(self) -> None:
        for endpoint in self._broker.config.listeners:
            server = await asyncio.start_server(
                lambda r, w, ep=endpoint: self._accept(ep, r, w),
                host=endpoint.host or None, port=endpoint.port, reuse_address=True)
            port = server.sockets[0].getsockname()[1]
            self._servers.append(server)
            self.bound.append(Endpoint(endpoint.listener, endpoint.host, port, endpoint.security_protocol))
            self._log.info("listening", listener=endpoint.listener, host=endpoint.host, port=port)

    async def stop(self) -> None:
        for server in self._servers:
            server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        for server in self._servers:
            await server.wait_closed()

    async def _accept(self, endpoint: Endpoint, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._connections.add(task)
        task.add_done_callback(self._connections.discard)
        await self._connection(endpoint, reader, writer)

    async def _connection(self, endpoint: Endpoint, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername") or ("?", 0)
        log = self._log.bind(listener=endpoint.listener, peer=f"{peer[0]}:{peer[1]}")
        gauge = self._broker.metrics.connections.labels(endpoint.listener)
        gauge.inc()
        conn = Connection(endpoint, peer[0])
        conn.sasl = new_session(self._broker, conn)  # None on a PLAINTEXT listener
        max_bytes = self._broker.config["socket.request.max.bytes"]
        try:
            while True:
                authenticating = conn.sasl is not None and not conn.sasl.complete
                frame = await read_frame(reader, conn.sasl.max_receive if authenticating else max_bytes)
                if frame is None:
                    break
                response = await self._answer(conn, frame, log)
                if response:
                    writer.write(response)
                    await writer.drain()
                if conn.close_after_response:
                    break
        except (FrameError, RequestParseError) as exc:
            log.warning("closing connection", reason=str(exc))
            self._broker.metrics.closed_connections.labels(type(exc).__name__).inc()
        except (ConnectionError, OSError):
            pass  # the peer went away
        except Exception as exc:  # a handler bug: log it, drop this connection, keep serving the others
            log.exception("request failed", error=repr(exc))
            self._broker.metrics.closed_connections.labels("handler_error").inc()
        finally:
            gauge.dec()
            writer.close()

    async def _answer(self, conn: Connection, frame: bytes, log: Any) -> bytes | None:
        """The framed response to one frame (None: nothing to send)."""
        started = time.perf_counter()
        if conn.sasl is not None and conn.sasl.expects_raw_token:  # after SaslHandshake v0: raw SASL tokens
            return await conn.sasl.raw_token(frame)
        api_key, version, correlation_id = peek(frame)
        api = api_table.lookup(api_key)
        if api is None:
            raise RequestParseError(f"unknown api key {api_key}")
        if conn.sasl is not None:  # before authentication only ApiVersions and the SASL requests pass
            conn.sasl.admit(api_key, api.name, api.supports(version))
        if not api.supports(version):
            if api_key == API_VERSIONS_KEY:  # answered in v0 so any client can read it
                return encode_response(correlation_id, api_versions.unsupported_version_response())
            raise RequestParseError(f"unsupported version {version} of {api.name}")
        request = decode_request(frame, api, version)
        log = log.bind(api=api.name, version=version, correlation_id=correlation_id, client_id=request.client_id)
        ctx = RequestContext(self._broker, request, conn.endpoint.listener, conn.principal, conn.peer_host, log,
                             connection=conn)
        response = await dispatch(ctx)
        if response is None:  # Produce with acks=0: no response at all
            return None
        forwarded = isinstance(response, bytes)  # the controller's answer, passed through as it came
        if response is None:  # no response at all (Produce acks=0): the next frame is read as usual
            error = "none"
        else:
            error = "forwarded" if forwarded else str(int(getattr(response, "error_code", 0)))
        elapsed = time.perf_counter() - started
        metrics = self._broker.metrics
        metrics.child(metrics.requests, api.name, str(version), error).inc()
        metrics.child(metrics.request_seconds, api.name, str(version)).observe(elapsed)
        log.debug("request", principal=ctx.principal, error=error, latency_ms=round(elapsed * 1000, 3))
        if response is None:
            return None
        return with_size_prefix(response) if forwarded else encode_response(correlation_id, response)
