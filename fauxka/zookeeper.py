"""Debian's ZooKeeper server, started without its service wrapper."""

import os
import socket
import subprocess
import time
from pathlib import Path

ZOOKEEPER_JAR = Path("/usr/share/java/zookeeper.jar")
# zookeeper.jar's manifest brings its dependencies; the log4j binding gives us its log.
CLASSPATH = ":".join([
    "/etc/zookeeper/conf", str(ZOOKEEPER_JAR),
    "/usr/share/java/slf4j-log4j12.jar", "/usr/share/java/log4j-1.2.jar",
])
MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
# A small server on a small machine: the client JIT and the serial collector start it in about
# 3/4 of the CPU time of the defaults (and bench.bulk_create is no slower: no C2 or G1 threads
# compete with the brokers). Log4j's JMX beans are not registered: nobody reads them here.
JVM_FLAGS = ["-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:-UsePerfData",
             "-Dzookeeper.jmx.log4j.disable=true"]


class ZooKeeperError(Exception):
    pass


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
    """Start a standalone server whose files all live under `data_dir`."""
    if not ZOOKEEPER_JAR.exists():
        raise ZooKeeperError(f"{ZOOKEEPER_JAR} not found: install Debian's zookeeper package")
    data_dir.mkdir(parents=True, exist_ok=True)
    cfg = data_dir / "zoo.cfg"
    cfg.write_text(zoo_cfg(data_dir / "data", port, host))
    command = ["java", *JVM_FLAGS, "-cp", CLASSPATH, f"-Dzookeeper.log.dir={data_dir}",
               "-Dzookeeper.root.logger=INFO,CONSOLE", MAIN, str(cfg)]
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
