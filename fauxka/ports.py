"""Free loopback ports for throw-away clusters (the tests and the benchmarks)."""

import contextlib
import random
import socket
from pathlib import Path

_FLOOR = 10000  # below: well-known and registered services
_handed_out: set[int] = set()


def _ephemeral_range_start() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_ports(count: int = 1) -> int:
    """The first of `count` consecutive ports that are free now and that this process has not
    handed out before.

    They lie below the kernel's ephemeral range: a port from bind(0) is in that range, and every
    outgoing connection (a broker's to ZooKeeper, a readiness probe's) takes its local port from
    it too, so one could take the port between the pick and the listener's bind. Remembering
    what was handed out keeps two brokers of one cluster from being told the same port."""
    ceiling = _ephemeral_range_start()
    while True:
        if ceiling - count > _FLOOR:
            base = random.randrange(_FLOOR, ceiling - count)
        else:  # an unusual ephemeral range: take what bind(0) gives
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                base = sock.getsockname()[1]
        ports = set(range(base, base + count))
        if ports & _handed_out or base + count > 65536:
            continue
        try:
            with contextlib.ExitStack() as stack:
                for port in ports:
                    stack.enter_context(socket.socket()).bind(("127.0.0.1", port))
        except OSError:
            continue
        _handed_out.update(ports)
        return base
