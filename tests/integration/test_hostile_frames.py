"""Bad frames close the offending connection and nothing else."""

import socket
import struct

import pytest

from fauxka.broker.protocol.codec import decode_response, request_schema


def raw_exchange(address, payload: bytes, read: bool = True) -> bytes:
    """Send `payload`, then read until the broker closes the connection (or answers)."""
    with socket.create_connection(address, timeout=5) as sock:
        sock.sendall(payload)
        if not read:
            sock.shutdown(socket.SHUT_WR)
        chunks = []
        while True:
            try:
                chunk = sock.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not chunk:
                break
            chunks.append(chunk)
            if read:
                size = struct.unpack(">i", b"".join(chunks)[:4])[0] if len(b"".join(chunks)) >= 4 else None
                if size is not None and len(b"".join(chunks)) >= 4 + size:
                    break
        return b"".join(chunks)


def frame(body: bytes) -> bytes:
    return struct.pack(">i", len(body)) + body


HOSTILE = {
    "truncated header": frame(b"\x00\x12\x00"),
    "negative length": struct.pack(">i", -5) + b"abcde",
    "oversized length": struct.pack(">i", 2**31 - 1) + b"x" * 16,
    "unknown api key": frame(struct.pack(">hhi", 9999, 0, 1) + b"\xff\xff"),
    "unsupported metadata version": frame(struct.pack(">hhi", 3, 99, 1) + b"\xff\xff"),
    "garbage": b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
    "truncated metadata body": frame(struct.pack(">hhi", 3, 1, 1) + b"\xff\xff" + b"\x00\x00\x00\x05"),
    "huge array count": frame(struct.pack(">hhih", 3, 4, 1, -1) + struct.pack(">i", 2**31 - 1)),
    "invalid utf-8 client id": frame(struct.pack(">hhih", 18, 2, 1, 2) + b"\xff\xfe"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_frame_closes_the_connection_and_the_broker_keeps_serving(cluster, name):
    answer = raw_exchange(cluster.brokers[1].address, HOSTILE[name])
    assert answer == b"", f"{name}: the broker answered {answer[:40]!r} instead of closing"
    view = cluster.metadata(1)  # a fresh connection is served as before
    assert view.brokers == [1, 2, 3]


def test_oversized_frame_is_logged(cluster):
    raw_exchange(cluster.brokers[2].address, HOSTILE["oversized length"])
    log = cluster.brokers[2].log_file.read_text()
    assert "larger than socket.request.max.bytes" in log


def test_unsupported_api_versions_version_gets_a_v0_answer(cluster):
    # ApiVersions v99 with header v2 (client id "t", no tags): Kafka answers UNSUPPORTED_VERSION in v0.
    body = struct.pack(">hhih", 18, 99, 42, 1) + b"t" + b"\x00"
    answer = raw_exchange(cluster.brokers[3].address, frame(body))
    correlation_id, response = decode_response(answer[4:], request_schema(18, 0))
    assert correlation_id == 42
    assert int(response.error_code) == 35
    assert [(k.api_key, k.min_version, k.max_version) for k in response.api_keys] == [(18, 0, 4)]
