"""Debian's ZooKeeper server, started without its service wrapper."""

import hashlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from .ports import free_ports

ZOOKEEPER_JAR = Path("/usr/share/java/zookeeper.jar")
# zookeeper.jar's manifest brings its dependencies; the log4j binding gives us its log. Jars only:
# Debian's log4j.properties is named by a property, not found through a directory on the class path,
# which a class-data archive (below) does not allow.
CLASSPATH = ":".join([str(ZOOKEEPER_JAR), "/usr/share/java/slf4j-log4j12.jar", "/usr/share/java/log4j-1.2.jar"])
LOG4J_CONFIG = Path("/etc/zookeeper/conf/log4j.properties")
MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
# A small server on a small machine: the client JIT and the serial collector start it in about
# 3/4 of the CPU time of the defaults (and bench.bulk_create is no slower: no C2 or G1 threads
# compete with the brokers). Log4j's JMX beans are not registered: nobody reads them here.
JVM_FLAGS = ["-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:-UsePerfData",
             "-Dzookeeper.jmx.log4j.disable=true"]


class ZooKeeperError(Exception):
    pass


def archive_path() -> Path | None:
    """Where the class-data archive (AppCDS) of this JDK and ZooKeeper lives: ZooKeeper's classes
    mapped ready-parsed start it sooner (0.32 against 0.38 s to serving, paired, load ~1.5). None
    without a java on PATH. The name holds what the archive depends on; a JVM that finds it
    unusable runs without it."""
    java = shutil.which("java")
    if java is None or not ZOOKEEPER_JAR.exists():
        return None
    java = os.path.realpath(java)
    key = f"{java}:{os.stat(java).st_mtime_ns}:{ZOOKEEPER_JAR.stat().st_mtime_ns}:{' '.join(JVM_FLAGS)}"
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fauxka"
    return cache / f"zookeeper-{hashlib.sha256(key.encode()).hexdigest()[:16]}.jsa"


def make_archive(timeout_s: float = 60.0) -> Path | None:
    """Write the class-data archive (scripts/install does, once): a ZooKeeper started with
    -XX:ArchiveClassesAtExit, stopped once it serves, its archive moved into place. None when it
    could not be made (ZooKeeper still starts, without it)."""
    target = archive_path()
    if target is None or target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="fauxka-zookeeper-archive-") as tmp:
        written = Path(tmp) / "zookeeper.jsa"
        port = free_ports()
        process = _spawn(Path(tmp), port, "127.0.0.1", [f"-XX:ArchiveClassesAtExit={written}"])
        try:
            wait_serving("127.0.0.1", port, timeout_s, process)
        finally:
            stop(process, timeout_s)
        if not written.exists():
            return None
        os.replace(written, target)
    return target


def zoo_cfg(data_dir: Path, port: int, host: str = "127.0.0.1") -> str:
    # tickTime 500 ms lets sessions be as short as 1 s (tests use ~2 s).
    return "\n".join([
        "tickTime=500",
        f"dataDir={data_dir}",
        f"clientPort={port}",
        f"clientPortAddress={host}",
        "maxClientCnxns=0",
        "minSessionTimeout=1000",
        "maxSessionTimeout=60000",
        "admin.enableServer=false",
        "4lw.commands.whitelist=srvr,ruok,stat",
        "",
    ])


def start(data_dir: Path, port: int, host: str = "127.0.0.1") -> subprocess.Popen:
    """Start a standalone server whose files all live under `data_dir` (with the class-data
    archive when make_archive has written it)."""
    archive = archive_path()
    return _spawn(data_dir, port, host, [f"-XX:SharedArchiveFile={archive}"] if archive and archive.exists() else [])


def _spawn(data_dir: Path, port: int, host: str, extra_flags: list[str]) -> subprocess.Popen:
    if not ZOOKEEPER_JAR.exists():
        raise ZooKeeperError(f"{ZOOKEEPER_JAR} not found: install Debian's zookeeper package")
    data_dir.mkdir(parents=True, exist_ok=True)
    cfg = data_dir / "zoo.cfg"
    cfg.write_text(zoo_cfg(data_dir / "data", port, host))
    command = ["java", *JVM_FLAGS, *extra_flags, "-cp", CLASSPATH, f"-Dlog4j.configuration=file:{LOG4J_CONFIG}",
               f"-Dzookeeper.log.dir={data_dir}", "-Dzookeeper.root.logger=INFO,CONSOLE", MAIN, str(cfg)]
    with open(data_dir / "zookeeper.log", "ab") as log:
        return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, env={**os.environ, "ZOO_LOG_DIR": str(data_dir)})


def stop(process: subprocess.Popen, timeout_s: float = 10.0) -> None:
    """SIGTERM (ZooKeeper closes its sessions and exits), then SIGKILL after `timeout_s`; reaped."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def is_serving(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1) as sock:
            sock.sendall(b"srvr")
            return b"Mode:" in sock.recv(4096)
    except OSError:
        return False


def wait_serving(host: str, port: int, timeout_s: float, process: subprocess.Popen | None = None,
                 interval_s: float = 0.01) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if is_serving(host, port):
            return
        if process is not None and process.poll() is not None:
            raise ZooKeeperError(f"ZooKeeper exited with code {process.returncode}")
        time.sleep(interval_s)
    raise ZooKeeperError(f"ZooKeeper did not serve on {host}:{port} within {timeout_s:.0f}s")
