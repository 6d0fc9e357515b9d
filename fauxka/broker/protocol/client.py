"""A minimal Kafka client over the same codec: used by the launcher and tests
to ask a broker for Metadata, and the base the forwarding manager will grow from."""

import asyncio
import itertools
import ssl as ssl_module
from typing import Any, Callable

from .codec import decode_response, encode_request
from .framing import STREAM_LIMIT, FrameError, read_frame

_MAX_RESPONSE = 1 << 30


class KafkaConnection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, client_id: str):
        self._reader, self._writer = reader, writer
        self._client_id = client_id
        self._ids = itertools.count(1)
        self._lock = asyncio.Lock()  # one request in flight: responses come back in order

    @classmethod
    async def open(cls, host: str, port: int, timeout: float, client_id: str = "fauxka",
                   ssl: ssl_module.SSLContext | None = None) -> "KafkaConnection":
        return cls(*await _open(host, port, timeout, ssl), client_id)

    async def send(self, request: Any, timeout: float) -> Any:
        async with self._lock:
            correlation_id = next(self._ids)
            self._writer.write(encode_request(request, correlation_id, self._client_id))
            await self._writer.drain()
            async with asyncio.timeout(timeout):
                frame = await read_frame(self._reader, _MAX_RESPONSE)
            if frame is None:
                raise FrameError("connection closed before the response")
            got, response = decode_response(frame, type(request))
            if got != correlation_id:
                raise FrameError(f"correlation id {got}, expected {correlation_id}")
            return response

    async def close(self) -> None:
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except (ConnectionError, OSError):
            pass


async def _open(host: str, port: int, timeout: float, ssl: ssl_module.SSLContext | None):
    """TCP, or TLS when `ssl` is given (host names checked against `host` if the context says so)."""
    async with asyncio.timeout(timeout):
        if ssl is None:
            return await asyncio.open_connection(host, port, limit=STREAM_LIMIT)
        return await asyncio.open_connection(host, port, ssl=ssl, server_hostname=host, ssl_handshake_timeout=timeout,
                                             limit=STREAM_LIMIT)


async def request_once(host: str, port: int, request: Any, timeout: float,
                       ssl: ssl_module.SSLContext | None = None) -> Any:
    conn = await KafkaConnection.open(host, port, timeout, ssl=ssl)
    try:
        return await conn.send(request, timeout)
    finally:
        await conn.close()


def _expire(future: asyncio.Future) -> None:
    if not future.done():
        future.set_exception(asyncio.TimeoutError())


class PipelinedConnection:
    """Many requests in flight on one connection; responses matched by correlation id.

    The reader task belongs to the connection and ends with it. Used for the
    forwarding channel to the controller, where clients must not wait behind each other.
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, client_id: str):
        self._reader, self._writer = reader, writer
        self._client_id = client_id
        self._ids = itertools.count(1)
        self._waiting: dict[int, tuple[asyncio.Future, type]] = {}
        self._reading = asyncio.get_running_loop().create_task(self._read_responses(), name="pipelined-reader")
        self.closed = False

    @classmethod
    async def open(cls, host: str, port: int, timeout: float, client_id: str,
                   ssl: ssl_module.SSLContext | None = None) -> "PipelinedConnection":
        return cls(*await _open(host, port, timeout, ssl), client_id)

    async def send(self, request: Any, timeout: float) -> Any:
        return await self.send_encoded(lambda correlation_id, client_id: encode_request(request, correlation_id, client_id),
                                       type(request), timeout)

    async def send_encoded(self, encode: Callable[[int, str], bytes], request_cls: type, timeout: float) -> Any:
        """As send, for a request already written by `encode(correlation_id, client_id)` (the
        follower's fetch: fauxka/broker/protocol/replica_fetch.py); answered as a `request_cls`."""
        if self.closed:
            raise ConnectionError("connection closed")
        correlation_id = next(self._ids) & 0x7FFFFFFF
        future = asyncio.get_running_loop().create_future()
        self._waiting[correlation_id] = (future, request_cls)
        # A plain timer instead of wait_for: no extra task per request on the forwarding path.
        timer = asyncio.get_running_loop().call_later(timeout, _expire, future)
        try:
            self._writer.write(encode(correlation_id, self._client_id))
            await self._writer.drain()
            return await future
        finally:
            timer.cancel()
            self._waiting.pop(correlation_id, None)

    async def _read_responses(self) -> None:
        error: BaseException = ConnectionError("connection closed by the peer")
        try:
            while True:
                frame = await read_frame(self._reader, _MAX_RESPONSE)
                if frame is None:
                    break
                correlation_id = int.from_bytes(frame[:4], "big", signed=True)
                waiting = self._waiting.pop(correlation_id, None)
                if waiting is None:
                    continue  # its sender gave up (timeout)
                future, request_cls = waiting
                try:
                    _, response = decode_response(frame, request_cls)
                except Exception as exc:
                    if not future.done():
                        future.set_exception(exc)
                    continue
                if not future.done():
                    future.set_result(response)
        except (OSError, FrameError, asyncio.IncompleteReadError) as exc:
            error = ConnectionError(f"connection lost: {exc}")
        finally:
            self.closed = True
            for future, _ in self._waiting.values():
                if not future.done():
                    future.set_exception(error)
            self._waiting.clear()

    def abort(self, error: BaseException) -> None:
        """Close at once, from code that cannot wait: every request in flight raises `error`
        (close() may follow, to wait for the connection's end)."""
        self.closed = True
        self._reading.cancel()
        self._writer.close()
        for future, _ in self._waiting.values():
            if not future.done():
                future.set_exception(error)
        self._waiting.clear()

    async def close(self) -> None:
        self.closed = True
        self._reading.cancel()
        await asyncio.gather(self._reading, return_exceptions=True)
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except (ConnectionError, OSError):
            pass
