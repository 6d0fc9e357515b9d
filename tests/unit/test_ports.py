"""The ports throw-away clusters listen on (fauxka/ports.py)."""

import socket

from fauxka.ports import _ephemeral_range_start, free_ports


def test_ports_are_never_handed_out_twice_and_stay_below_the_ephemeral_range():
    bases = [free_ports(3) for _ in range(200)]
    ports = [p for base in bases for p in range(base, base + 3)]
    assert len(ports) == len(set(ports))
    assert max(ports) < _ephemeral_range_start()


def test_every_port_of_a_range_can_be_bound():
    base = free_ports(4)
    sockets = [socket.socket() for _ in range(4)]
    try:
        for offset, sock in enumerate(sockets):
            sock.bind(("127.0.0.1", base + offset))
    finally:
        for sock in sockets:
            sock.close()
