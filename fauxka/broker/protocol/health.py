"""A broker's container healthcheck: it answers ApiVersions and Metadata lists it as registered.

Docker runs a healthcheck as a new process every few seconds for the container's whole life, so
this module imports nothing but the standard library (kio and the codec cost about 0.2 s of CPU
per run; this costs about 0.03 s) and writes the two requests by hand:

- ApiVersions v0 (request header v1, empty body). The response header is v0 for every version
  (KIP-511); body: error_code int16, api_keys [api_key int16, min int16, max int16].
- Metadata v1 with an empty topic array (v1+: no topics; null would be all of them). Body:
  brokers [node_id int32, host string, port int32, rack nullable string], controller_id int32,
  topics [...] (empty). The broker lists the ids registered under /brokers/ids as its metadata
  cache sees them, so its own id there means its registration is visible.

    python -m fauxka.broker.protocol.health [--address HOST:PORT] [--broker-id N]

Defaults come from the environment the image is configured by: the port of the first listener
in KAFKA_LISTENERS (else KAFKA_ADVERTISED_LISTENERS, else 9092) on 127.0.0.1, and KAFKA_BROKER_ID.
Exit 0 when healthy; otherwise one line on stdout saying why (docker inspect shows it) and exit 1.
"""

import argparse
import os
import re
import socket
import struct
import sys

API_VERSIONS, METADATA = 18, 3
_CLIENT_ID = b"fauxka-health"


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, fmt: str):
        values = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return values if len(values) > 1 else values[0]

    def string(self) -> str | None:
        length = self.take(">h")
        if length < 0:
            return None
        text = self.data[self.pos:self.pos + length].decode()
        self.pos += length
        return text


def _request(api_key: int, version: int, correlation_id: int, body: bytes) -> bytes:
    header = struct.pack(">hhih", api_key, version, correlation_id, len(_CLIENT_ID)) + _CLIENT_ID
    return struct.pack(">i", len(header) + len(body)) + header + body


def _exchange(sock: socket.socket, frame: bytes, correlation_id: int) -> _Reader:
    sock.sendall(frame)
    size = struct.unpack(">i", _receive(sock, 4))[0]
    reader = _Reader(_receive(sock, size))
    if reader.take(">i") != correlation_id:
        raise ValueError("correlation id mismatch")
    return reader


def _receive(sock: socket.socket, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(n - got)
        if not chunk:
            raise ConnectionError("connection closed by the broker")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def api_versions(sock: socket.socket) -> dict[int, tuple[int, int]]:
    """api key -> (min, max) version, from ApiVersions v0."""
    reader = _exchange(sock, _request(API_VERSIONS, 0, 1, b""), 1)
    error = reader.take(">h")
    if error:
        raise ValueError(f"ApiVersions error code {error}")
    return {key: (low, high) for key, low, high in (reader.take(">hhh") for _ in range(reader.take(">i")))}


def registered_brokers(sock: socket.socket) -> tuple[list[int], int]:
    """(broker ids, controller id) from Metadata v1 without topics."""
    reader = _exchange(sock, _request(METADATA, 1, 2, struct.pack(">i", 0)), 2)
    ids = []
    for _ in range(reader.take(">i")):
        ids.append(reader.take(">i"))
        reader.string()
        reader.take(">i")
        reader.string()
    return sorted(ids), reader.take(">i")


def check(host: str, port: int, broker_id: int | None, timeout_s: float = 2.0) -> str | None:
    """None when the broker at host:port answers ApiVersions and lists `broker_id` (if given) as
    registered; otherwise why not."""
    try:
        with socket.create_connection((host, port), timeout_s) as sock:
            sock.settimeout(timeout_s)
            versions = api_versions(sock)
            if METADATA not in versions:
                return "ApiVersions does not list Metadata"
            ids, controller = registered_brokers(sock)
    except (OSError, ValueError, struct.error) as exc:
        return f"no answer from {host}:{port}: {exc or type(exc).__name__}"
    if broker_id is not None and broker_id not in ids:
        return f"broker {broker_id} not registered yet (registered: {ids}, controller {controller})"
    return None


def _default_port(environ) -> int:
    for variable in ("KAFKA_LISTENERS", "KAFKA_ADVERTISED_LISTENERS"):
        match = re.search(r"://[^,]*?:(\d+)", environ.get(variable, ""))
        if match:
            return int(match.group(1))
    return 9092


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fauxka.broker.protocol.health", description=__doc__.split("\n")[0])
    parser.add_argument("--address", help="HOST:PORT (default 127.0.0.1 and the first listener's port)")
    parser.add_argument("--broker-id", type=int, help="default: KAFKA_BROKER_ID")
    parser.add_argument("--timeout", type=float, default=2.0)
    args = parser.parse_args(argv)
    host, port = "127.0.0.1", _default_port(os.environ)
    if args.address:
        host, _, text = args.address.rpartition(":")
        port = int(text)
    broker_id = args.broker_id
    if broker_id is None and os.environ.get("KAFKA_BROKER_ID", "").strip().lstrip("-").isdigit():
        broker_id = int(os.environ["KAFKA_BROKER_ID"])
    problem = check(host, port, broker_id, args.timeout)
    if problem:
        print(problem)
        return 1
    print(f"healthy: {host}:{port} answers ApiVersions" + (f", broker {broker_id} registered" if broker_id is not None else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
