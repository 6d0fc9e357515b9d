"""A minimal Kafka client over the same codec: used by the launcher and tests
to ask a broker for Metadata, and the base the forwarding manager will grow from."""

import asyncio
import itertools
from typing import Any

from .codec import decode_response, encode_request
from .framing import FrameError, read_frame

_MAX_RESPONSE = 1 << 30


class KafkaConnection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, client_id: str):
        self._reader, self._writer = reader, writer
        self._client_id = client_id
        self._ids = itertools.count(1)
        self._lock = asyncio.Lock()  # one request in flight: responses come back in order

    @classmethod
    async def open(cls, host: str, port: int, timeout: float, client_id: str = "fauxka") -> "KafkaConnection":
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
        return cls(reader, writer, client_id)

    async def send(self, request: Any, timeout: float) -> Any:
        async with self._lock:
            correlation_id = next(self._ids)
            self._writer.write(encode_request(request, correlation_id, self._client_id))
            await self._writer.drain()
            frame = await asyncio.wait_for(read_frame(self._reader, _MAX_RESPONSE), timeout)
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


async def request_once(host: str, port: int, request: Any, timeout: float) -> Any:
    conn = await KafkaConnection.open(host, port, timeout)
    try:
        return await conn.send(request, timeout)
    finally:
        await conn.close()
