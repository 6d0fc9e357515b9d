"""Hostile input, property-based: random frames and mutated requests of every supported api
and version. The broker must never crash, never hang a connection, and keep serving others.

Bounded (a fixed number of examples, each with a short socket timeout), loopback only; the
counts tried are printed (pytest -s).
"""

import socket
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fauxka.broker.protocol import api_table

SUPPORTED = sorted((api.key, v) for api in api_table.TABLE.values()
                   for v in range(api.min_version, api.max_version + 1))
TRIED = {"frames": 0}


@pytest.fixture(scope="module")
def target(make_cluster_module):
    cluster = make_cluster_module(1)
    return cluster


def exchange(address, payload: bytes, timeout_s: float = 1.0) -> None:
    """Send, then read until the broker answers or closes; a timeout means it waits for more bytes."""
    with socket.create_connection(address, timeout=timeout_s) as sock:
        try:
            sock.sendall(payload)
            sock.shutdown(socket.SHUT_WR)
            while sock.recv(65536):
                pass
        except (ConnectionResetError, BrokenPipeError, socket.timeout):
            pass
    TRIED["frames"] += 1


def header(key: int, version: int, correlation_id: int = 1) -> bytes:
    flexible = request_header_is_flexible(key, version)
    client_id = struct.pack(">h", 4) + b"fuzz"
    return struct.pack(">hhi", key, version, correlation_id) + client_id + (b"\x00" if flexible else b"")


def request_header_is_flexible(key: int, version: int) -> bool:
    from fauxka.broker.protocol.codec import request_schema
    return request_schema(key, version).__flexible__


def framed(body: bytes, declared: int | None = None) -> bytes:
    return struct.pack(">i", len(body) if declared is None else declared) + body


FUZZ = settings(max_examples=150, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@FUZZ
@given(payload=st.binary(max_size=256))
def test_random_frames(target, payload):
    exchange(target.brokers[1].address, framed(payload))


@FUZZ
@given(api=st.sampled_from(SUPPORTED), body=st.binary(max_size=200))
def test_random_bodies_for_every_api_and_version(target, api, body):
    exchange(target.brokers[1].address, framed(header(*api) + body))


@FUZZ
@given(api=st.sampled_from(SUPPORTED), count=st.sampled_from([-2, -1, 0x7FFFFFFF, 0x10000000, 65535]),
       tail=st.binary(max_size=16))
def test_huge_and_negative_counts(target, api, count, tail):
    exchange(target.brokers[1].address, framed(header(*api) + struct.pack(">i", count) + tail))


@FUZZ
@given(api=st.sampled_from(SUPPORTED), junk=st.binary(max_size=11).map(lambda b: b + b"\xff"))  # 0xff is never UTF-8
def test_invalid_utf8_strings(target, api, junk):
    body = struct.pack(">h", len(junk)) + junk + bytes([len(junk) + 1]) + junk
    exchange(target.brokers[1].address, framed(header(*api) + body))


@FUZZ
@given(declared=st.integers(min_value=-(2**31), max_value=2**31 - 1), sent=st.binary(max_size=64))
def test_lying_length_prefixes(target, declared, sent):
    exchange(target.brokers[1].address, framed(sent, declared), timeout_s=0.3)


def test_partial_frames_and_a_connection_flood_leave_the_broker_serving(target):
    address = target.brokers[1].address
    slow = [socket.create_connection(address, timeout=2) for _ in range(200)]
    for i, sock in enumerate(slow):
        sock.sendall(struct.pack(">i", 100)[: 1 + i % 4])  # size prefixes cut short
    view = target.metadata(1)  # another connection is served meanwhile
    assert view.brokers == [1]
    for sock in slow:
        sock.close()
    print(f"\nfuzz: {TRIED['frames']} hostile frames tried; 200 partial frames held open")
    assert target.brokers[1].process.poll() is None, "the broker died"
    assert target.metadata(1).brokers == [1]
