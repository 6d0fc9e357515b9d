"""`fauxka up` / `down` / `status`: a local cluster of ZooKeeper and N broker processes."""

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import zookeeper
from .pids import alive, terminate

STATE_FILE = "cluster.json"


@dataclass
class UpOptions:
    brokers: int = 3
    zookeeper: str | None = None  # host:port of a running ZooKeeper; None starts one
    zookeeper_port: int = 2181
    data_dir: Path = Path(".fauxka")
    base_port: int = 9092
    metrics_base_port: int = 7070  # broker N serves /metrics on base + N; 0 = off
    overrides: tuple[str, ...] = ()
    detach: bool = False
    timeout_s: float = 60.0
    tls: bool = False  # SSL listeners with a throw-away CA (data-dir/tls), brokers talk SSL too
    starter: Any = None  # a fauxka.starter.Starter (already imported): forks the brokers at once
    broker_overrides: dict[int, tuple[str, ...]] = field(default_factory=dict)  # id -> KEY=VALUE, its file only


def parse_broker_overrides(items: list[str], brokers: int) -> dict[int, tuple[str, ...]]:
    """`ID:KEY=VALUE` items by broker id (ValueError names a malformed one or an unknown id)."""
    out: dict[int, list[str]] = {}
    for item in items:
        broker, sep, setting = item.partition(":")
        if not sep or not broker.strip().isdigit() or "=" not in setting:
            raise ValueError(f"--broker-override {item!r}: expected ID:KEY=VALUE")
        if not 1 <= int(broker) <= brokers:
            raise ValueError(f"--broker-override {item!r}: no broker {broker} (brokers are 1..{brokers})")
        out.setdefault(int(broker), []).append(setting)
    return {b: tuple(settings) for b, settings in out.items()}


def tls_properties(tls_dir: Path) -> list[str]:
    """The SSL settings of `up --tls` (fauxka/certs.py's files): client certificates optional."""
    return ["listener.security.protocol.map=SSL:SSL", "inter.broker.listener.name=SSL", "ssl.client.auth=requested",
            "ssl.keystore.type=PEM", f"ssl.keystore.location={tls_dir / 'broker.pem'}",
            "ssl.truststore.type=PEM", f"ssl.truststore.location={tls_dir / 'ca.pem'}"]


def broker_properties(broker_id: int, port: int, zk_connect: str, data_dir: Path, metrics_port: int,
                      tls: bool = False) -> str:
    return "\n".join([
        f"broker.id={broker_id}",
        f"listeners={'SSL' if tls else 'PLAINTEXT'}://127.0.0.1:{port}",
        *(tls_properties(data_dir / "tls") if tls else []),
        f"zookeeper.connect={zk_connect}",
        "zookeeper.session.timeout.ms=6000",
        # `fauxka down` stops every broker at once: the last ones cannot hand their leaderships to
        # anyone, and Kafka's 5 s between controlled shutdown attempts would hold each of them ~10 s.
        "controlled.shutdown.retry.backoff.ms=300",
        # Kafka's default makes a new group's first rebalance wait 3 s for more members; a local
        # cluster for tests wants consumers at work at once (Kafka's own tests and testcontainers set 0)
        "group.initial.rebalance.delay.ms=0",
        f"log.dirs={data_dir / f'broker-{broker_id}' / 'data'}",
        f"log.file={data_dir / f'broker-{broker_id}.log'}",
        f"audit.log.file={data_dir / f'audit-{broker_id}.log'}",
        f"fauxka.trace.file={data_dir / f'trace-{broker_id}.jsonl'}",  # written while `fauxka trace on`  # `fauxka report --audit <data dir>` reads these
        f"metrics.port={metrics_port}",
        "",
    ])


def _say(message: str) -> None:
    """Print, never fail: `fauxka up | tee up.log` loses its reader on Ctrl-C, and stopping the cluster
    must not depend on being able to print (later output goes nowhere)."""
    try:
        print(message, flush=True)
    except (BrokenPipeError, OSError):
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # the interpreter's final flush must not fail either
            os.close(devnull)
        except OSError:
            pass


def _client_settings(tls_dir: Path, bootstrap: str) -> str:
    from .certs import PKCS12_PASSWORD

    return "\n".join([
        f"TLS material (throw-away CA, made for this run) in {tls_dir}. Client settings:",
        f"  librdkafka / confluent-kafka / kcat: bootstrap.servers={bootstrap} security.protocol=SSL "
        f"ssl.ca.location={tls_dir / 'ca.pem'}",
        f"    with a client certificate:  ssl.certificate.location={tls_dir / 'client.pem'} "
        f"ssl.key.location={tls_dir / 'client.key'}",
        f"  kafka-python / aiokafka: security_protocol='SSL', ssl_cafile='{tls_dir / 'ca.pem'}' "
        f"[ssl_certfile='{tls_dir / 'client.pem'}', ssl_keyfile='{tls_dir / 'client.key'}']",
        f"  Java: security.protocol=SSL ssl.truststore.type=PEM ssl.truststore.location={tls_dir / 'ca.pem'} "
        f"[ssl.keystore.type=PKCS12 ssl.keystore.location={tls_dir / 'client.p12'} "
        f"ssl.keystore.password={PKCS12_PASSWORD}]",
    ])


def _tls_context(state: dict):
    from . import probe

    tls = state.get("tls")
    return probe.client_context(tls["ca"], tls["client_cert"], tls["client_key"]) if tls else None


def up(opts: UpOptions) -> int:
    started = time.monotonic()
    data_dir = opts.data_dir.resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    if _running_state(data_dir):
        print(f"a cluster is already running from {data_dir} (stop it with: fauxka down --data-dir {opts.data_dir})",
              file=sys.stderr)
        return 1
    state: dict = {"zookeeper": None, "brokers": [], "overrides": list(opts.overrides)}
    zk: subprocess.Popen | None = None
    starter: subprocess.Popen | None = None
    try:
        wait_zookeeper = None
        if opts.zookeeper:
            zk_connect = opts.zookeeper
        else:
            _say(f"starting ZooKeeper on 127.0.0.1:{opts.zookeeper_port} ...")
            zk = zookeeper.start(data_dir / "zookeeper", opts.zookeeper_port)
            state["zookeeper"] = {"pid": zk.pid, "port": opts.zookeeper_port}
            zk_connect = f"127.0.0.1:{opts.zookeeper_port}"
            # The brokers import while the JVM starts, then wait until ZooKeeper serves.
            wait_zookeeper = (zk_connect, opts.timeout_s)
        state["zookeeper_connect"] = zk_connect
        if opts.tls:
            from .certs import generate  # cryptography: imported only for --tls

            files = generate(data_dir / "tls")
            state["tls"] = {"ca": str(files.ca), "client_cert": str(files.client_cert),
                            "client_key": str(files.client_key)}
        ids = list(range(1, opts.brokers + 1))
        for broker_id in ids:
            port = opts.base_port + broker_id - 1
            metrics_port = opts.metrics_base_port + broker_id if opts.metrics_base_port else 0
            state["brokers"].append({"id": broker_id, "pid": None, "port": port, "metrics_port": metrics_port})
        configs = _write_configs(state["brokers"], zk_connect, data_dir, opts.tls, opts.broker_overrides)
        if opts.starter is not None:  # a kept fauxka.starter.Starter, imported already: forks at once
            pids = opts.starter.fork(configs, opts.overrides, wait_zookeeper and wait_zookeeper[0], opts.timeout_s)
            for b, pid in zip(state["brokers"], pids):
                b["pid"] = pid
            from . import probe
        else:
            starter = _start_brokers(configs, opts.overrides, wait_zookeeper, data_dir)
            from . import probe  # the Kafka protocol: imported while the others start

            _collect_pids(starter, state["brokers"], data_dir, opts.timeout_s)
        _write_state(data_dir, state)
        if zk is not None:
            zookeeper.wait_serving("127.0.0.1", opts.zookeeper_port, opts.timeout_s, zk)
        _say(f"started {len(ids)} brokers, waiting for registration, a controller and Metadata ...")
        addresses = [("127.0.0.1", b["port"]) for b in state["brokers"]]
        view = asyncio.run(probe.wait_ready(addresses, ids, opts.timeout_s,
                                            lambda: _check_running(state, zk, data_dir), _tls_context(state)))
    except (zookeeper.ZooKeeperError, BrokersNotStarted, TimeoutError, OSError) as exc:
        print(f"fauxka up failed: {exc} (logs in {data_dir})", file=sys.stderr)
        _stop_starting(state, starter, data_dir)
        return 1
    except BaseException:  # Ctrl-C or a bug while starting: leave no process behind
        _stop_starting(state, starter, data_dir)
        raise
    bootstrap = ",".join(f"{h}:{p}" for h, p in addresses)
    _say(f"ready in {time.monotonic() - started:.2f}s: {len(ids)} brokers, controller {view.controller_id}, "
         f"cluster id {view.cluster_id}")
    _say(f"bootstrap: {bootstrap}")
    metrics = [f"broker {b['id']} http://127.0.0.1:{b['metrics_port']}/metrics" for b in state["brokers"] if b["metrics_port"]]
    if metrics:
        _say(f"metrics:   {', '.join(metrics)}")
    if opts.tls:
        _say(_client_settings(data_dir / "tls", bootstrap))
    if opts.detach:
        return 0
    return _supervise(state, zk)


class BrokersNotStarted(Exception):
    """A broker process exited or was never forked."""


def _write_configs(brokers: list[dict], zk_connect: str, data_dir: Path, tls: bool,
                   per_broker: dict[int, tuple[str, ...]]) -> list[Path]:
    for b in brokers:  # broker-<id>.properties; a broker's output goes to broker-<id>.out
        own = "".join(f"{item}\n" for item in per_broker.get(b["id"], ()))  # after the defaults: they win
        (data_dir / f"broker-{b['id']}.properties").write_text(
            broker_properties(b["id"], b["port"], zk_connect, data_dir, b["metrics_port"], tls) + own)
    return [data_dir / f"broker-{b['id']}.properties" for b in brokers]


def _start_brokers(configs: list[Path], overrides: tuple[str, ...], wait_zookeeper: tuple[str, float] | None,
                   data_dir: Path) -> subprocess.Popen:
    """`fauxka brokers` (fauxka/starter.py): imports the broker code once, forks each, prints their ids."""
    command = [sys.executable, "-m", "fauxka", "brokers"]
    for config in configs:
        command += ["--config", str(config)]
    for item in overrides:
        command += ["--override", item]
    if wait_zookeeper:
        command += ["--wait-zookeeper", wait_zookeeper[0], "--wait-timeout", str(wait_zookeeper[1])]
    with open(data_dir / "brokers.out", "ab") as out:
        return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=out, stdin=subprocess.DEVNULL,
                                start_new_session=True)


def _collect_pids(starter: subprocess.Popen, brokers: list[dict], data_dir: Path, timeout_s: float) -> None:
    """The forked brokers' process ids, once the starter has forked them all and exited."""
    try:
        out, _ = starter.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        starter.kill()
        out, _ = starter.communicate()
    for b, pid in zip(brokers, out.split()):
        b["pid"] = int(pid)
    if starter.returncode != 0 or any(b["pid"] is None for b in brokers):
        raise BrokersNotStarted(f"the brokers did not start (exit code {starter.returncode})"
                                + _last_line(data_dir / "brokers.out"))


def _last_line(path: Path) -> str:
    try:
        lines = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return f": {lines[-1]}" if lines else ""


def _check_running(state: dict, zk: subprocess.Popen | None, data_dir: Path) -> None:
    """Raise, with the reason, once a broker or ZooKeeper has exited: `up` fails at once."""
    dead = [b for b in state["brokers"] if not alive(b["pid"])]
    if dead:
        raise BrokersNotStarted(f"broker {dead[0]['id']} exited" + _last_line(data_dir / f"broker-{dead[0]['id']}.out"))
    if zk is not None and zk.poll() is not None:
        raise zookeeper.ZooKeeperError(f"ZooKeeper exited with code {zk.returncode}")


def _stop_starting(state: dict, starter: subprocess.Popen | None, data_dir: Path) -> None:
    """Stop whatever has started, brokers forked while we were interrupted included."""
    if starter is not None and any(b["pid"] is None for b in state["brokers"]):
        try:  # the starter may have exited meanwhile: its output is still to be read
            _collect_pids(starter, state["brokers"], data_dir, 10)
        except (BrokersNotStarted, OSError, ValueError):
            pass
    _stop(state)


def _supervise(state: dict, zk: subprocess.Popen | None) -> int:
    """Foreground mode: until Ctrl-C, SIGTERM or a process dying, then stop everything."""
    stop = {"signal": None}

    def on_signal(signum, _frame):
        stop["signal"] = signum

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    code = 0
    try:
        _say("press Ctrl-C to stop")
        code = _watch(state, zk, stop)
    finally:  # whatever happens (a failed print, a second Ctrl-C), the processes are stopped
        _say("stopping brokers, then ZooKeeper ...")
        _stop(state)
    _say("stopped")
    return code


def _watch(state: dict, zk: subprocess.Popen | None, stop: dict) -> int:
    """Until a signal or a process dying: 0, or 1 when a process died."""
    code = 0
    while stop["signal"] is None:
        _follow_process_faults(state)
        zk_state = state.get("zookeeper")
        if zk is not None and zk_state and not zk_state.get("stopped") and not alive(zk_state["pid"]):
            print(f"ZooKeeper (pid {zk_state['pid']}) exited; stopping the cluster", file=sys.stderr)
            code = 1
            break
        dead = [b for b in state["brokers"] if not b.get("stopped") and not alive(b["pid"])]  # forked: not ours
        if dead:
            print(f"broker {dead[0]['id']} (pid {dead[0]['pid']}) exited; stopping the cluster", file=sys.stderr)
            code = 1
            break
        time.sleep(0.2)
    return code


def _follow_process_faults(state: dict) -> None:
    """`fauxka kill|restart BROKER|zookeeper` (fauxka/processes.py) rewrite the state file: a process
    stopped on purpose is not a reason to stop the cluster, and a restarted one has a new process id."""
    current = _read_state(Path(state["data_dir"])) if state.get("data_dir") else None
    if current is None:
        return
    if state.get("zookeeper") and current.get("zookeeper"):
        state["zookeeper"].update(current["zookeeper"])
    by_id = {b["id"]: b for b in current.get("brokers", [])}
    for b in state["brokers"]:
        if b["id"] in by_id:
            b["pid"] = by_id[b["id"]].get("pid")
            b["stopped"] = by_id[b["id"]].get("stopped", False)


def down(data_dir: Path, discard: bool = False) -> int:
    """Stop the cluster started from `data_dir`: the brokers shut down as Kafka's do on SIGTERM
    (controlled shutdown, deregistration), then ZooKeeper. `discard`: a cluster whose data and
    registrations go with it (a test's, at its end): every process killed at once (~10 ms instead
    of the brokers' controlled shutdown, ~0.4 s)."""
    data_dir = data_dir.resolve()
    state = _read_state(data_dir)
    if state is None:
        print(f"no cluster state in {data_dir}", file=sys.stderr)
        return 1
    _stop(state, kill=discard)
    _say("stopped")
    return 0


def _stop(state: dict, grace_s: float = 10.0, kill: bool = False) -> None:
    """SIGTERM the brokers and wait (they deregister), then ZooKeeper; `kill`: SIGKILL all at once."""
    pids = [b["pid"] for b in state.get("brokers", []) if b.get("pid")]
    zookeeper_pids = [state["zookeeper"]["pid"]] if state.get("zookeeper") else []
    if kill:
        terminate(pids + zookeeper_pids, 0)
    else:
        terminate(pids, grace_s)
        if zookeeper_pids:
            terminate(zookeeper_pids, grace_s)
    data_dir = state.get("data_dir")
    if data_dir:
        (Path(data_dir) / STATE_FILE).unlink(missing_ok=True)


def _write_state(data_dir: Path, state: dict) -> None:
    state["data_dir"] = str(data_dir)
    (data_dir / STATE_FILE).write_text(json.dumps(state, indent=2))


def _read_state(data_dir: Path) -> dict | None:
    try:
        return json.loads((data_dir / STATE_FILE).read_text())
    except (OSError, ValueError):
        return None


def _running_state(data_dir: Path) -> bool:
    state = _read_state(data_dir)
    if state is None:
        return False
    pids = [b["pid"] for b in state.get("brokers", []) if b.get("pid")]
    pids += [state["zookeeper"]["pid"]] if state.get("zookeeper") else []
    return any(alive(pid) for pid in pids)


def status(data_dir: Path, bootstrap: str | None, zk_connect: str | None) -> int:
    from . import probe

    state = _read_state(data_dir.resolve()) or {}
    if bootstrap is None:
        if not state.get("brokers"):
            print(f"no cluster state in {data_dir}; give --bootstrap host:port", file=sys.stderr)
            return 1
        bootstrap = ",".join(f"127.0.0.1:{b['port']}" for b in state["brokers"])
    zk_connect = zk_connect or state.get("zookeeper_connect")
    tls = _tls_context(state)
    for address in bootstrap.split(","):
        host, _, port = address.rpartition(":")
        try:
            view = asyncio.run(probe.metadata(host, int(port), 5.0, tls))
        except Exception as exc:
            print(f"{address}: no answer ({exc!r})")
            continue
        epoch = asyncio.run(probe.controller_epoch(zk_connect, 5.0)) if zk_connect else None
        print(f"cluster id: {view.cluster_id}")
        print(f"brokers:    {', '.join(map(str, view.brokers))}")
        print(f"controller: {view.controller_id}" + (f" (epoch {epoch})" if epoch is not None else ""))
        print(f"topics:     {len(view.topics)}")
        return 0
    return 1
