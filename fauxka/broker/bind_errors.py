"""A port that cannot be bound, said with what wanted it and who holds it: `[Errno 98] Address
already in use` alone names neither the listener (or metrics port) nor the process in the way."""

import errno


def bind_error(exc: OSError, what: str, host: str | None, port: int) -> OSError:
    """`exc` from binding `what` (e.g. "listener PLAINTEXT", "metrics.port") to host:port, reworded when
    the address is in use; other errors as they are."""
    if exc.errno != errno.EADDRINUSE:
        return exc
    holder = port_holder(port)
    held = f"held by pid {holder[0]} ({holder[1]})" if holder else "its holder is not visible to this user"
    return OSError(exc.errno, f"{what} cannot bind {host or '*'}:{port}: address already in use, {held}")


def port_holder(port: int) -> tuple[int, str] | None:
    """(pid, command line) of a process listening on the TCP port, where this user may see it."""
    try:
        import psutil  # only on this error path
    except ImportError:  # a broker installed without its dependencies: the bind error still says the rest
        return None
    try:
        for conn in psutil.net_connections(kind="tcp"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port and conn.pid:
                try:
                    command = " ".join(psutil.Process(conn.pid).cmdline()) or "?"
                except psutil.Error:
                    command = "?"
                return conn.pid, command[:160]
    except psutil.Error:
        return None
    return None
