"""The `fauxka` command line."""

import argparse
import os
import re
import signal
import sys
from pathlib import Path

from . import fault_cli, launcher, report, zookeeper


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fauxka", description="A Kafka cluster in Python.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("broker", help="run one broker in the foreground")
    p.add_argument("--config", help="server.properties file")
    p.add_argument("--kafka-env", action="store_true",
                   help="also take properties from KAFKA_* environment variables, as cp-kafka does "
                        "(over the file; --override wins); an unknown one is an error")
    _broker_arguments(p)

    p = sub.add_parser("brokers", help="start brokers in processes forked after one import, print their "
                                       "process ids and return (fauxka up)")
    p.add_argument("--config", required=True, action="append",
                   help="server.properties file, one per broker; its output goes to the same path ending in .out")
    _broker_arguments(p)

    sub.add_parser("starter", help="a pre-forked interpreter: forks brokers on request (JSON lines on stdin, "
                                   "process ids on stdout) until stdin closes (fauxka.starter.Starter)")

    p = sub.add_parser("zookeeper", help="run Debian's ZooKeeper in the foreground")
    p.add_argument("--port", type=int, default=2181)
    p.add_argument("--data-dir", type=Path, default=Path(".fauxka/zookeeper"))

    p = sub.add_parser("up", help="start ZooKeeper and N brokers, wait until ready")
    p.add_argument("--brokers", type=int, default=3)
    p.add_argument("--zookeeper", metavar="HOST:PORT", help="use this ZooKeeper instead of starting one")
    p.add_argument("--zookeeper-port", type=int, default=2181, help="port of the ZooKeeper it starts")
    p.add_argument("--data-dir", type=Path, default=Path(".fauxka"))
    p.add_argument("--base-port", type=int, default=9092, help="broker N listens on base + N - 1")
    p.add_argument("--metrics-base-port", type=int, default=7070, help="broker N serves /metrics on base + N; 0 = off")
    p.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                   help="a broker property for every broker; repeatable")
    p.add_argument("--broker-override", action="append", default=[], metavar="ID:KEY=VALUE",
                   help="a property of broker ID only (broker.rack, its listeners), over its file; repeatable")
    p.add_argument("--detach", action="store_true", help="return once ready; stop with `fauxka down`")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for readiness")
    p.add_argument("--tls", action="store_true",
                   help="SSL listeners (brokers between each other too) with a throw-away CA made in DATA_DIR/tls; "
                        "prints the client settings")

    p = sub.add_parser("certs", help="make a throw-away CA, a broker and a client certificate (PEM and PKCS12)")
    p.add_argument("--out", type=Path, required=True, help="directory for ca.pem, broker.pem/.p12, client.*")
    p.add_argument("--host", action="append", default=[], metavar="NAME",
                   help="a host name or address of the brokers' certificate; repeatable (default: localhost, 127.0.0.1)")

    p = sub.add_parser("down", help="stop a cluster started with `up --detach`")
    p.add_argument("--data-dir", type=Path, default=Path(".fauxka"))

    p = sub.add_parser("status", help="brokers, controller, epoch and topic count")
    p.add_argument("--data-dir", type=Path, default=Path(".fauxka"))
    p.add_argument("--bootstrap", metavar="HOST:PORT[,...]")
    p.add_argument("--zookeeper", metavar="HOST:PORT")

    p = sub.add_parser("report", help="the audit report (PySpark): Parquet tables, report.md, plots")
    report.add_arguments(p)

    fault_cli.add_arguments(sub)
    from . import chaos_cli

    chaos_cli.add_arguments(sub)

    args = parser.parse_args(argv)
    if argv is None and args.command in ("broker", "brokers", "starter", "up", "status", "fault", "trace"):
        _without_hypothesis()
    if args.command == "report":
        return report.run(args)
    if args.command == "fault":
        return fault_cli.run(args)
    if args.command == "chaos":
        return chaos_cli.run(args)
    if args.command == "trace":
        return fault_cli.run_trace(args)
    if args.command in ("kill", "terminate", "pause", "resume", "restart"):
        return fault_cli.run_process(args)
    if args.command == "broker":
        return _broker(args)
    if args.command == "brokers":
        from .starter import brokers_command

        return brokers_command(args)
    if args.command == "starter":
        from .starter import starter_command

        return starter_command()
    if args.command == "zookeeper":
        return _zookeeper(args)
    if args.command == "up":
        if args.brokers < 1:
            parser.error("--brokers must be at least 1")
        try:
            per_broker = launcher.parse_broker_overrides(args.broker_override, args.brokers)
        except ValueError as exc:
            parser.error(str(exc))
        return launcher.up(launcher.UpOptions(
            brokers=args.brokers, zookeeper=args.zookeeper, zookeeper_port=args.zookeeper_port,
            data_dir=args.data_dir, base_port=args.base_port, metrics_base_port=args.metrics_base_port,
            overrides=tuple(args.override), detach=args.detach, timeout_s=args.timeout,
            tls=args.tls, broker_overrides=per_broker))
    if args.command == "down":
        return launcher.down(args.data_dir)
    if args.command == "certs":
        from .certs import generate

        files = generate(args.out, tuple(args.host) or ("localhost", "127.0.0.1"))
        print(f"CA {files.ca}, broker key store {files.broker_pem} (PEM) / {files.broker_p12} (PKCS12), "
              f"client {files.client_cert} + {files.client_key}")
        return 0
    return launcher.status(args.data_dir, args.bootstrap, args.zookeeper)


def _without_hypothesis() -> None:
    """kio registers Hypothesis strategies for its types whenever Hypothesis can be imported (it
    can wherever the test extra is installed): about 0.25 s of CPU in every process that uses the
    protocol. fauxka's own processes never use them, so Hypothesis is made unimportable there
    (kio expects ImportError). Only when running as the program: Python callers keep theirs."""
    sys.modules.setdefault("hypothesis", None)


def _broker_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                   help="override a property (Kafka's convention); repeatable")
    p.add_argument("--wait-zookeeper", metavar="HOST:PORT",
                   help="first wait until this ZooKeeper serves (fauxka up starts brokers and ZooKeeper together)")
    p.add_argument("--wait-timeout", type=float, default=60.0, metavar="SECONDS",
                   help="how long --wait-zookeeper waits before the broker tries on its own")


def _broker(args) -> int:
    from fauxka.broker.config import ConfigError, load_config

    if not args.config and not args.kafka_env:
        print("fauxka broker: give --config FILE, --kafka-env or both", file=sys.stderr)
        return 2
    overrides = list(args.override)
    try:
        if args.kafka_env:
            overrides = _kafka_env_overrides() + overrides
        config = load_config(args.config, overrides)
    except (ConfigError, OSError) as exc:
        print(f"fauxka broker: {_name_variable(str(exc)) if args.kafka_env else exc}", file=sys.stderr)
        return 2
    from .starter import run_broker

    return run_broker(config, args.wait_zookeeper, args.wait_timeout)


def _kafka_env_overrides() -> list[str]:
    from fauxka.broker.config import ConfigError
    from . import kafka_env

    try:
        env = kafka_env.from_environment(os.environ)
    except kafka_env.EnvConfigError as exc:
        raise ConfigError(str(exc)) from None
    for variable in env.ignored:
        print(f"fauxka broker: ignoring {variable} (it configures Kafka's JVM or log4j, which fauxka has none of)",
              file=sys.stderr)
    return [f"{name}={value}" for name, value in env.properties.items()]


def _name_variable(message: str) -> str:
    """A config error about a property also names the KAFKA_ variable that sets it."""
    from .kafka_env import variable_name

    match = re.search(r'configuration "?([a-z0-9._-]+)"?', message)
    return f"{message} (environment variable {variable_name(match.group(1))})" if match else message


class _Stop(Exception):
    """SIGTERM or SIGHUP in the foreground `fauxka zookeeper`."""


def _zookeeper(args) -> int:
    """ZooKeeper in the foreground until it exits, Ctrl-C, SIGTERM or SIGHUP; each of them stops the
    Java process (it runs in its own session, so no signal reaches it but the one sent here)."""
    state = {"asked": False, "armed": False}  # armed once the child is ours to stop: never leaked

    def on_signal(_signum, _frame):
        state["asked"] = True
        if state["armed"]:
            raise _Stop()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGHUP)}
    process = None
    try:
        try:
            process = zookeeper.start(args.data_dir.resolve(), args.port)
            state["armed"] = True
            if state["asked"]:
                raise _Stop()
            zookeeper.wait_serving("127.0.0.1", args.port, 30, process)
        except zookeeper.ZooKeeperError as exc:
            print(f"fauxka zookeeper: {exc}", file=sys.stderr)
            return 1
        print(f"ZooKeeper serving on 127.0.0.1:{args.port} (log: {args.data_dir / 'zookeeper.log'})", flush=True)
        return process.wait()
    except (KeyboardInterrupt, _Stop):
        return 0
    finally:
        state["armed"] = False  # a second signal while stopping changes nothing: the child is stopped anyway
        if process is not None:
            zookeeper.stop(process)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
