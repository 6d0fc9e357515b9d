"""TLS over an accepted plain stream, through ssl.MemoryBIO: the broker reads the handshake itself.

Why not StreamWriter.start_tls: the plain stream starts reading as soon as a connection is accepted
(uvloop resumes reading after connection_made), so a ClientHello sent at once lands in the plain
reader's buffer and the TLS layer never sees it. Here every byte goes through the reader, buffered
ones included, and a failed, cut or plaintext handshake is an exception the server logs.
"""

import asyncio
import re
import ssl

_CHUNK = 65536
# a fatal alert in a plaintext TLS 1.0-1.2 record: content type 21, version 3.x, length 2, level 2
_PLAIN_FATAL_ALERT = re.compile(rb"\x15\x03[\x01-\x03]\x00\x02\x02.", re.S)
_BAD_CERTIFICATE = 42


def _as_jsse(pending: bytes) -> bytes:
    """A client sent no certificate where one is required: OpenSSL's TLS 1.2 answer is a
    handshake_failure alert, Java's (Kafka's) a bad_certificate one (JSSE's "Empty client certificate
    chain"), which clients report (librdkafka's 0097 checks for it). Before the server's Finished the
    alert is plaintext, so only its description byte changes. TLS 1.3 sends certificate_required,
    encrypted, in both: left as it is."""
    if _PLAIN_FATAL_ALERT.match(pending):
        return pending[:6] + bytes([_BAD_CERTIFICATE]) + pending[7:]
    return pending


class TlsStream:
    """Reader and writer in one: `readexactly` and `read` for the frame reader, `write` / `drain` /
    `close` / `get_extra_info` for the server."""

    def __init__(self, context: ssl.SSLContext, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self._reader, self._writer = reader, writer
        self._incoming, self._outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.ssl_object = context.wrap_bio(self._incoming, self._outgoing, server_side=True)
        self._buffer = bytearray()

    async def _fill(self) -> bool:
        """More ciphertext from the peer; False at its end of stream."""
        data = await self._reader.read(_CHUNK)
        if not data:
            self._incoming.write_eof()
            return False
        self._incoming.write(data)
        return True

    def _flush(self) -> None:
        pending = self._outgoing.read()
        if pending:
            self._writer.write(pending)

    async def handshake(self) -> None:
        """The server side of the handshake: ssl.SSLError, or ConnectionResetError at a cut."""
        while True:
            try:
                self.ssl_object.do_handshake()
                break
            except ssl.SSLWantReadError:
                self._flush()
                await self._writer.drain()
                if not await self._fill():
                    raise ConnectionResetError("the peer closed the connection during the TLS handshake") from None
            except ssl.SSLError as exc:
                pending = self._outgoing.read()  # the alert, when there is one
                if exc.reason == "PEER_DID_NOT_RETURN_A_CERTIFICATE":
                    pending = _as_jsse(pending)
                if pending:
                    self._writer.write(pending)
                raise
        self._flush()
        await self._writer.drain()

    async def _read_some(self) -> bool:
        while True:
            try:
                data = self.ssl_object.read(_CHUNK)
            except ssl.SSLWantReadError:
                self._flush()  # e.g. TLS 1.3 key updates
                if not await self._fill():
                    return False
                continue
            except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                return False
            if not data:
                return False
            self._buffer += data
            return True

    async def readexactly(self, n: int) -> bytes:
        while len(self._buffer) < n:
            if not await self._read_some():
                partial = bytes(self._buffer)
                self._buffer.clear()
                raise asyncio.IncompleteReadError(partial, n)
        data = bytes(self._buffer[:n])
        del self._buffer[:n]
        return data

    def write(self, data: bytes) -> None:
        self.ssl_object.write(data)
        self._flush()

    async def drain(self) -> None:
        await self._writer.drain()

    def get_extra_info(self, name: str, default=None):
        if name == "ssl_object":
            return self.ssl_object
        return self._writer.get_extra_info(name, default)

    def close(self) -> None:
        self._writer.close()
