"""`fauxka fault add|list|remove|clear` and `fauxka kill|terminate|pause|resume|restart BROKER|zookeeper`."""

import argparse
import sys
import time
from pathlib import Path

from . import launcher

KIND_HELP = ("error (answer --error), throttle (--throttle-ms), delay (--delay-ms, --jitter-ms), "
             "hang (never answer), close (close the connection), replication (follower --broker's fetches: "
             "--delay-ms, or -1 to stop them), link (--broker and --peer: cut the link between them), "
             "leader (--topic, --partition, --broker: move the leadership), storage (--broker's log of --topic "
             "fails as a full disk), zookeeper (--broker's link to ZooKeeper cut, every broker's without "
             "--broker: the session expires; restored when removed or after --duration)")


def add_arguments(sub) -> None:
    p = sub.add_parser("fault", help="inject faults into a running cluster (ZooKeeper state every broker obeys)")
    fault_sub = p.add_subparsers(dest="fault_command", required=True)
    add = fault_sub.add_parser("add", help="add a fault; prints its id")
    add.add_argument("kind", help=KIND_HELP)
    add.add_argument("--broker", type=int, help="only requests this broker answers (replication: the follower)")
    add.add_argument("--peer", type=int, help="link: the broker at the other end")
    add.add_argument("--api", help="only this api (produce, fetch, ListOffsets, offset_commit, ... or its key)")
    add.add_argument("--versions", help="only these versions of the api: 3, 3-7, 3- or -7")
    add.add_argument("--topic")
    add.add_argument("--partition", type=int)
    add.add_argument("--client-id")
    add.add_argument("--principal", help="e.g. User:alice")
    add.add_argument("--error", help="Kafka's error name (NOT_LEADER_OR_FOLLOWER) or code")
    add.add_argument("--throttle-ms", type=int, default=0)
    add.add_argument("--delay-ms", type=int, default=0)
    add.add_argument("--jitter-ms", type=int, default=0)
    add.add_argument("--count", type=int, help="requests it hits, cluster-wide, before it goes")
    add.add_argument("--duration", type=float, metavar="SECONDS", help="how long it lasts")
    add.add_argument("--id", default="", help="its id (default: a fresh one)")
    listing = fault_sub.add_parser("list", help="the faults in force")
    remove = fault_sub.add_parser("remove", help="remove faults by id")
    remove.add_argument("ids", nargs="+")
    clear = fault_sub.add_parser("clear", help="remove every fault")
    for q in (add, listing, remove, clear):
        _cluster_arguments(q)
    trace = sub.add_parser("trace", help="the request trace: which requests each broker answered")
    trace.add_argument("action", choices=("on", "off", "show"))
    trace.add_argument("--broker", type=int)
    trace.add_argument("--api", help="api name as in the trace (produce, list_offsets, ...)")
    trace.add_argument("--client-id")
    trace.add_argument("--json", action="store_true", help="show the JSON lines")
    _cluster_arguments(trace)
    for action in ("kill", "terminate", "pause", "resume", "restart"):
        q = sub.add_parser(action, help=f"{action} one broker (or the ZooKeeper) of a cluster started by fauxka up")
        q.add_argument("broker", type=_process_target, metavar="BROKER|zookeeper")
        q.add_argument("--data-dir", type=Path, default=Path(".fauxka"))
        q.add_argument("--timeout", type=float, default=30.0)


def _process_target(text: str) -> "int | str":
    if text.lower() == "zookeeper":
        return "zookeeper"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a broker id or 'zookeeper', not {text!r}") from None


def _cluster_arguments(p) -> None:
    p.add_argument("--data-dir", type=Path, default=Path(".fauxka"), help="the cluster fauxka up started there")
    p.add_argument("--zookeeper", metavar="HOST:PORT[/CHROOT]", help="the cluster's ZooKeeper (instead of --data-dir)")


def _zk_connect(args) -> str | None:
    if args.zookeeper:
        return args.zookeeper
    state = launcher._read_state(args.data_dir.resolve())
    return state.get("zookeeper_connect") if state else None


def run(args) -> int:
    from fauxka.model.faults import FaultError
    from .faults import FaultClient, make_fault
    from fauxka.zkstore import ZkError

    zk = _zk_connect(args)
    if zk is None:
        print(f"fauxka fault: no cluster state in {args.data_dir}; give --zookeeper HOST:PORT", file=sys.stderr)
        return 2
    try:
        fault = None
        if args.fault_command == "add":
            fault = make_fault(args.kind, broker=args.broker, api=args.api, versions=args.versions, topic=args.topic,
                               partition=args.partition, client_id=args.client_id, principal=args.principal,
                               error=args.error, throttle_ms=args.throttle_ms, delay_ms=args.delay_ms,
                               jitter_ms=args.jitter_ms, count=args.count, duration_s=args.duration, peer=args.peer,
                               id=args.id)
        with FaultClient(zk) as client:
            if fault is not None:
                print(client.add(fault).id)
            elif args.fault_command == "list":
                faults, now_ms = client.list(), int(time.time() * 1000)
                for f in faults:
                    print(f.describe(now_ms))
                if not faults:
                    print("no faults in force")
            elif args.fault_command == "remove":
                missing = [i for i in args.ids if not client.remove(i)]
                if missing:
                    print(f"fauxka fault: no fault {', '.join(missing)}", file=sys.stderr)
                    return 1
            else:
                print(f"removed {client.clear()} fault(s)")
    except (FaultError, ValueError) as exc:
        print(f"fauxka fault: {exc}", file=sys.stderr)
        return 2
    except (ZkError, TimeoutError, OSError) as exc:
        print(f"fauxka fault: ZooKeeper at {zk}: {exc or type(exc).__name__}", file=sys.stderr)
        return 1
    return 0


def run_trace(args) -> int:
    import json
    from . import trace

    if args.action == "show":
        for entry in trace.read(args.data_dir, broker=args.broker, api=args.api, client_id=args.client_id):
            print(json.dumps(entry) if args.json else trace.line(entry))
        return 0
    from .faults import FaultClient

    zk = _zk_connect(args)
    if zk is None:
        print(f"fauxka trace: no cluster state in {args.data_dir}; give --zookeeper HOST:PORT", file=sys.stderr)
        return 2
    with FaultClient(zk) as client:
        client.set_tracing(args.action == "on")
    return 0


def run_process(args) -> int:
    from .processes import ProcessFaultError, act

    try:
        print(act(args.data_dir, args.command, args.broker, args.timeout))
    except (ProcessFaultError, OSError) as exc:
        print(f"fauxka {args.command}: {exc}", file=sys.stderr)
        return 1
    return 0
