"""Free loopback ports for throw-away clusters (the tests and the benchmarks)."""

import contextlib
import socket

_handed_out: set[int] = set()


def free_ports(count: int = 1) -> int:
    """The first of `count` consecutive ports that are free now and that this process has not
    handed out before. Once a probe socket closes, the kernel may give its port to the next
    bind(0) again, so without the memory two brokers of one cluster could be told the same port."""
    while True:
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
