"""Size-prefixed frames: a big-endian int32 length, then that many bytes."""

import asyncio
import struct

FRAME_SIZE = _SIZE = struct.Struct(">i")
# asyncio's StreamReader stops reading the socket once it buffers twice its limit (64 KiB by
# default) and starts again when read from: a 1 MB Produce or replica Fetch took about 16 of those
# pauses and resumes. Buffering up to 2 MiB lets a frame of librdkafka's default batch size
# (1 MB) and replica.fetch.max.bytes (1 MiB) arrive in one go.
STREAM_LIMIT = 1 << 20


class FrameError(Exception):
    """The peer sent a frame we refuse; the connection must be closed."""


async def read_frame(reader: asyncio.StreamReader, max_bytes: int) -> bytes | None:
    """Read one frame; None on a clean end of stream between frames.

    The length is checked before anything is allocated for the body, so a
    hostile length costs nothing (Kafka's socket.request.max.bytes).
    """
    try:
        prefix = await reader.readexactly(4)
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        raise FrameError("connection closed inside a size prefix") from None
    (size,) = _SIZE.unpack(prefix)
    if size < 0:
        raise FrameError(f"negative frame size {size}")
    if size > max_bytes:
        raise FrameError(f"frame size {size} larger than socket.request.max.bytes {max_bytes}")
    try:
        return await reader.readexactly(size)
    except asyncio.IncompleteReadError:
        raise FrameError(f"connection closed inside a frame of {size} bytes") from None


def with_size_prefix(payload: bytes) -> bytes:
    return _SIZE.pack(len(payload)) + payload
