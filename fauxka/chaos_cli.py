"""`fauxka chaos`: a seeded random fault schedule under real traffic, then the checker's verdict."""

import argparse
import random
import re
import sys
import time
from pathlib import Path

from .chaos.run import WORKLOADS, ChaosError, ChaosRun, Options, parse_workloads
from .chaos.schedule import NEMESES, ScheduleError, parse_nemeses


def duration(text: str) -> float:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"a duration like 90, 60s, 5m or 1h, not {text!r}")
    seconds = float(match.group(1)) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600, None: 1}[match.group(2)]
    if seconds < 5:
        raise argparse.ArgumentTypeError("a run lasts at least 5s")
    return seconds


def add_arguments(sub) -> None:
    p = sub.add_parser("chaos", help="a seeded random fault schedule under real traffic; checks nothing was lost",
                       description="Runs idempotent producers, a transactional consume-transform-produce loop and a "
                                   "consumer group against the cluster while a seeded random nemesis breaks it "
                                   "(never more brokers at once than min.insync.replicas allows), heals everything, "
                                   "reads everything back and checks Kafka's guarantees. Exit code 0: every check "
                                   "passed; 1: anomalies (named in verdict.json); 2: bad input or no cluster.")
    p.add_argument("--data-dir", type=Path, default=Path(".fauxka"),
                   help="the cluster fauxka up started there (without one there, nor --bootstrap: it starts its own)")
    p.add_argument("--bootstrap", metavar="HOST:PORT[,...]", help="any fauxka cluster (with --zookeeper): fault-kit "
                                                                  "nemeses only, no kill/pause/restart")
    p.add_argument("--zookeeper", metavar="HOST:PORT[/CHROOT]")
    p.add_argument("--brokers", type=int, default=3, help="brokers of the cluster it starts itself")
    p.add_argument("--duration", type=duration, default=60.0, help="how long faults are injected: 90, 60s, 5m")
    p.add_argument("--seed", type=int, help="the schedule's seed (default: a random one, printed)")
    p.add_argument("--nemesis", help=f"comma-separated, default all: {','.join(NEMESES)}")
    p.add_argument("--workload", help=f"comma-separated, default all: {','.join(WORKLOADS)}")
    p.add_argument("--max-down", type=int, help="brokers out at once (default and most: replication factor - "
                                                "min.insync.replicas)")
    p.add_argument("--partitions", type=int, default=6)
    p.add_argument("--rate", type=float, default=100.0, help="records per second per producer")
    p.add_argument("--out", type=Path, help="history.jsonl, verdict.json, timeline.png (default chaos-SEED-TIME)")
    p.add_argument("--dry-run", action="store_true", help="print the schedule and stop")


def run(args) -> int:
    import logging

    logging.getLogger("kazoo").setLevel(logging.CRITICAL)  # a lost ZooKeeper connection is said in one line
    try:
        import confluent_kafka  # noqa: F401  the workloads' client
    except ImportError:
        return _fail(ChaosError("the workloads need confluent-kafka: pip install 'fauxka[chaos]' (make install has it)"))
    seed = args.seed if args.seed is not None else random.randrange(1, 1 << 31)
    try:
        options = Options(seed=seed, duration_s=args.duration, nemeses=parse_nemeses(args.nemesis),
                          workloads=parse_workloads(args.workload), partitions=args.partitions,
                          max_down=args.max_down, rate=args.rate,
                          out=args.out or Path(f"chaos-{seed}-{time.strftime('%Y%m%d-%H%M%S')}"))
        if args.partitions < 1 or args.rate <= 0 or (args.max_down is not None and args.max_down < 0):
            raise ChaosError("--partitions and --rate must be positive, --max-down at least 0")
    except (ScheduleError, ChaosError) as exc:
        return _fail(exc)
    cluster, own = None, False
    try:
        cluster, own = _cluster(args, options)
        chaos = ChaosRun(cluster, options)
        print(chaos.describe(), flush=True)
        if args.dry_run:
            for step in chaos.steps:
                print(step.describe())
            return 0
        print(f"writing to {options.out}", flush=True)
        result = chaos.run()
    except (ChaosError, ScheduleError) as exc:
        return _fail(exc)
    except (OSError, TimeoutError, RuntimeError) as exc:
        return _fail(ChaosError(f"cluster: {exc}"))
    except KeyboardInterrupt:
        print("fauxka chaos: interrupted; every fault healed", file=sys.stderr)
        return 130
    finally:
        if cluster is not None:
            cluster.stop()
            if own:
                print("stopped the cluster it started", flush=True)
    print(result.verdict.describe())
    short = "".join(f"; #{c['step']} held {c['held_s']} of {c['planned_s']} s" for c in result.cut_short)
    print(f"{result.records} records, {result.injected} of {len(result.steps)} scheduled faults injected, "
          f"{result.held_as_planned} held for their planned length ({len(result.cut_short)} cut short by the run's "
          f"end{short}), {result.failed} not possible at the time, {result.not_reached} not reached (each fault that "
          f"takes a broker down first waits until every broker is back in every ISR, and its planned length counts "
          f"from when it began); history, verdict and picture in {result.out}")
    return 0 if result.verdict.ok else 1


def _fail(exc: Exception) -> int:
    print(f"fauxka chaos: {exc}", file=sys.stderr)
    return 2


def _cluster(args, options: Options):
    """(the Cluster, whether it was started here)."""
    from fauxka import launcher
    from fauxka.testing import Cluster

    if args.bootstrap or args.zookeeper:
        if not (args.bootstrap and args.zookeeper):
            raise ChaosError("give --bootstrap and --zookeeper together")
        try:
            cluster = Cluster.attach(bootstrap=args.bootstrap, zookeeper=args.zookeeper, timeout_s=5)
        except Exception as exc:
            raise ChaosError(f"no ZooKeeper answers at {args.zookeeper}: {exc or type(exc).__name__}") from None
    elif launcher._read_state(args.data_dir.resolve()) is not None:
        state = launcher._read_state(args.data_dir.resolve())
        if state.get("tls"):
            raise ChaosError("the cluster in --data-dir uses TLS; chaos's clients speak PLAINTEXT only")
        if not launcher._running_state(args.data_dir.resolve()):
            raise ChaosError(f"the cluster in {args.data_dir} is not running (fauxka up --detach)")
        try:
            cluster = Cluster.attach(args.data_dir)
        except Exception as exc:
            raise ChaosError(f"its ZooKeeper does not answer: {exc or type(exc).__name__}") from None
    else:
        if args.brokers < 1:
            raise ChaosError("--brokers must be at least 1")
        from .chaos.run import make_schedule

        make_schedule(options, list(range(1, args.brokers + 1)))  # bad input before a cluster starts
        print(f"no cluster in {args.data_dir}: starting one of {args.brokers} brokers for the run", flush=True)
        cluster = Cluster(args.brokers, overrides={"replica.lag.time.max.ms": "10000"}).start()
        return cluster, True
    from .chaos.run import check_reachable

    try:
        check_reachable(cluster.bootstrap)
    except BaseException:
        cluster.stop()
        raise
    return cluster, False
