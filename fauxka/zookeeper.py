"""Debian's ZooKeeper server, started without its service wrapper."""

import hashlib
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

ZOOKEEPER_JAR = Path("/usr/share/java/zookeeper.jar")
# zookeeper.jar's manifest brings its dependencies; the log4j binding gives us its log.
JARS = [str(ZOOKEEPER_JAR), "/usr/share/java/slf4j-log4j12.jar", "/usr/share/java/log4j-1.2.jar"]
CLASSPATH = ":".join(["/etc/zookeeper/conf", *JARS])  # the conf directory brings log4j.properties
LOG4J_PROPERTIES = Path("/etc/zookeeper/conf/log4j.properties")
MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
# A small server on a small machine: the client JIT and the serial collector start it in about
# 3/4 of the CPU time of the defaults (and bench.bulk_create is no slower: no C2 or G1 threads
# compete with the brokers). Log4j's JMX beans are not registered: nobody reads them here.
JVM_FLAGS = ["-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:-UsePerfData",
             "-Dzookeeper.jmx.log4j.disable=true"]
# Class data sharing: an archive of the classes ZooKeeper loads while starting, made once per
# JDK and set of jars (see _archive), takes a further 0.2-0.3 s of CPU off its start.
ARCHIVE_DELAY_S = 10  # the archive is dumped this long after the server first serves, niced
ARCHIVE_LOCK_STALE_S = 120


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


# process id -> the class list a server without an archive writes (see wait_serving)
_class_lists: dict[int, Path] = {}


def start(data_dir: Path, port: int, host: str = "127.0.0.1") -> subprocess.Popen:
    """Start a standalone server whose files all live under `data_dir`."""
    if not ZOOKEEPER_JAR.exists():
        raise ZooKeeperError(f"{ZOOKEEPER_JAR} not found: install Debian's zookeeper package")
    data_dir.mkdir(parents=True, exist_ok=True)
    cfg = data_dir / "zoo.cfg"
    cfg.write_text(zoo_cfg(data_dir / "data", port, host))
    archive = _archive()
    class_list = None
    if archive is not None and archive.exists():
        sharing = [f"-XX:SharedArchiveFile={archive}"]  # unusable (a changed JDK or jar): ignored
    elif archive is not None and _lock(archive):
        class_list = archive.with_name(f"{archive.name}.{os.getpid()}.classlist")
        sharing = [f"-XX:DumpLoadedClassList={class_list}"]
    else:
        sharing = []
    # Class data sharing takes no directory on the class path: log4j's configuration is named instead.
    command = ["java", *JVM_FLAGS, *sharing, "-cp", ":".join(JARS),
               f"-Dlog4j.configuration={LOG4J_PROPERTIES.as_uri()}", f"-Dzookeeper.log.dir={data_dir}",
               "-Dzookeeper.root.logger=INFO,CONSOLE", MAIN, str(cfg)]
    log = open(data_dir / "zookeeper.log", "ab")
    try:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True, env={**os.environ, "ZOO_LOG_DIR": str(data_dir)})
    except BaseException:
        if class_list is not None:
            _unlock(archive)
        raise
    finally:
        log.close()
    if class_list is not None:
        _class_lists[process.pid] = class_list
    return process


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
            if process is not None and process.pid in _class_lists:
                _dump_archive_later(_class_lists.pop(process.pid))
            return
        if process is not None and process.poll() is not None:
            class_list = _class_lists.pop(process.pid, None)
            if class_list is not None:
                class_list.unlink(missing_ok=True)
                _unlock(_archive_of(class_list))
            raise ZooKeeperError(f"ZooKeeper exited with code {process.returncode}")
        time.sleep(interval_s)
    raise ZooKeeperError(f"ZooKeeper did not serve on {host}:{port} within {timeout_s:.0f}s")


# --- the class data sharing archive ------------------------------------------------------------

def _cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fauxka"


def _archive() -> Path | None:
    """Where the archive for this JDK and these jars lives (None: no java, or no cache directory).

    The name changes with the JDK and with the jars (Debian's upgrades replace files in
    /usr/share/java, which changes the directory), so an upgrade leads to a new archive."""
    java = shutil.which("java")
    if java is None:
        return None
    java = os.path.realpath(java)
    stamp = [java, *JARS]
    for path in [java, str(Path(java).parents[1] / "lib" / "server" / "libjvm.so"), "/usr/share/java",
                 *map(os.path.realpath, JARS)]:
        try:
            st = os.stat(path)
        except OSError:
            continue
        stamp.append(f"{path}:{st.st_size}:{st.st_mtime_ns}")
    key = hashlib.sha1("\n".join(stamp).encode()).hexdigest()[:16]
    try:
        _cache_dir().mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return _cache_dir() / f"zookeeper-{key}.jsa"


def _archive_of(class_list: Path) -> Path:
    return class_list.with_name(class_list.name.split(".jsa.")[0] + ".jsa")


def _lock(archive: Path) -> bool:
    """One server at a time records its classes for the archive."""
    lock = archive.with_name(archive.name + ".lock")
    try:
        if time.time() - lock.stat().st_mtime > ARCHIVE_LOCK_STALE_S:  # left by a build that died
            lock.unlink(missing_ok=True)
            for class_list in archive.parent.glob(archive.name + ".*.classlist"):
                class_list.unlink(missing_ok=True)
    except OSError:
        pass
    try:
        os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        return True
    except OSError:
        return False


def _unlock(archive: Path) -> None:
    archive.with_name(archive.name + ".lock").unlink(missing_ok=True)


def _dump_archive_later(class_list: Path) -> None:
    """In the background, once start-up is long over: dump the archive from the classes the
    server loaded, at the lowest priority, into a temporary file renamed into place."""
    archive = _archive_of(class_list)
    # The subshell outlives `sh`, which returns at once: nothing is left for us to reap.
    script = ('(sleep "$1"; nice -n 19 java -Xshare:dump -XX:SharedClassListFile="$2" -XX:SharedArchiveFile="$3.$$" '
              '-cp "$4" && mv -f "$3.$$" "$3"; rm -f "$2" "$3.$$" "$3.lock") >/dev/null 2>&1 </dev/null &')
    subprocess.run(["sh", "-c", script, "sh", str(ARCHIVE_DELAY_S), str(class_list), str(archive), ":".join(JARS)],
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   start_new_session=True, check=False)
