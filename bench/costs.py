"""Costs fauxka cannot cut, measured in the benchmark process on the same machine: kio encoding
a CreateTopics answer, and a TCP round trip over loopback."""

import os
import socket
import statistics
import time
import uuid

from fauxka.broker.handlers.create_topics import _config_entity
from fauxka.broker.protocol.build import build
from fauxka.broker.protocol.codec import encode_response, response_schema
from fauxka.model.topic_configs import effective_topic_configs


def answer(version: int):
    """The answer a single-topic validate_only CreateTopics gets with every config at its default."""
    entries = effective_topic_configs({}, {}, {}, {}, include_synonyms=False) if version >= 5 else []
    configs = [_config_entity(version, e.name, e.value, e.read_only, e.source, e.sensitive) for e in entries]
    return build(response_schema(19, version), {"throttle_time": 0, "topics": [{
        "name": "bench-1", "topic_id": uuid.UUID(int=0), "error_code": 0, "error_message": None,
        "topic_config_error_code": 0, "num_partitions": 1, "replication_factor": 1, "configs": configs}]})


def encode_ms(version: int, repeat: int = 7, number: int = 200) -> tuple[float, int]:
    """(median ms to encode the answer with kio, how many config entries it carries)."""
    response = answer(version)
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        for _ in range(number):
            encode_response(1, response)
        times.append((time.perf_counter() - started) / number * 1000)
    return statistics.median(times), len(response.topics[0].configs) if version >= 5 else 0


def loopback_round_trip_us(trips: int = 3000) -> tuple[float, float]:
    """(wall µs per 200-byte TCP round trip over loopback between two processes, this side's CPU
    µs per round trip): the floor of any extra hop, such as forwarding's broker -> controller."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    child = os.fork()
    if child == 0:  # the echoing peer
        peer = socket.create_connection(server.getsockname())
        peer.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for _ in range(trips):
            peer.sendall(peer.recv(4096))
        os._exit(0)
    conn, _ = server.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    message = b"x" * 200
    started, cpu = time.perf_counter(), time.process_time()
    for _ in range(trips):
        conn.sendall(message)
        conn.recv(4096)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    os.waitpid(child, 0)
    conn.close()
    server.close()
    return wall / trips * 1e6, cpu / trips * 1e6
