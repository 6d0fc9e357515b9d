"""Issue 25's client-facing metadata rows, this code against the code before in one command:
- a new topic (3 partitions, RF3) usable: from confluent-kafka's create_topics() to the first
  acknowledged produce (bench/clients.py topic_usable_s; --topics samples a cluster);
- a leader SIGKILLed to the first acks=all produce acknowledged, session 6 s (bench/dataplane.py's
  failover: one sample a cluster, which is a broker short afterwards).

Every round starts a fresh 3-broker cluster (zookeeper.session.timeout.ms 6000) of each side in
turn, the side going first alternating; a side's figure is the median over its samples, a ratio
the median of the rounds' ratios.

    .venv/bin/python -m bench.paired --base TREE [--rounds 5] [--topics 10]

TREE is a checkout of the code before with the venv linked, e.g.
`git worktree add /tmp/before 10703d0 && ln -s $PWD/.venv /tmp/before/.venv`.
"""

import argparse
import json
import os
import statistics
import uuid
from pathlib import Path

from . import clients, dataplane
from .common import local_cluster

SIDES = ("after", "before")


def one_cluster(tree: Path | None, topics: int) -> dict[str, list[float]]:
    with local_cluster(3, (f"zookeeper.session.timeout.ms={dataplane.SESSION_TIMEOUT_MS}",), tree=tree) as cluster:
        bootstrap = ",".join(f"127.0.0.1:{p}" for p in cluster.ports.values())
        usable = clients.topic_usable_s(bootstrap, [f"usable-{uuid.uuid4().hex[:8]}" for _ in range(topics)])
        side = dataplane.Side("fauxka", bootstrap, cluster.pids, 3, frozenset({dataplane.PRODUCE}),
                              dict(cluster.ports))
        failover, brokers_part = dataplane.failover(side)
    return {"create_acked_s": [c for c, _ in usable], "usable_s": [u for _, u in usable],
            "failover_s": [failover] if isinstance(failover, float) else [],
            "failover_broker_s": [brokers_part] if isinstance(brokers_part, float) else []}


def _ms(values: list[float]) -> str:
    if not values:
        return "none"
    ms = sorted(v * 1000 for v in values)
    return f"median {statistics.median(ms):.0f} ms, max {ms[-1]:.0f} ms ({len(ms)})"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", metavar="TREE", required=True, help="a checkout of the code before")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--topics", type=int, default=10, help="created topics a cluster (usable samples)")
    parser.add_argument("--json", metavar="FILE", help="append every round's figures as one JSON line")
    args = parser.parse_args(argv)
    trees = {"after": None, "before": Path(args.base).resolve()}
    rounds: list[dict[str, dict[str, list[float]]]] = []
    for n in range(args.rounds):
        figures = {}
        for side in SIDES if n % 2 == 0 else tuple(reversed(SIDES)):
            figures[side] = one_cluster(trees[side], args.topics)
            print(f"round {n + 1} {side}: " + "; ".join(f"{k} {_ms(v)}" for k, v in figures[side].items()), flush=True)
        rounds.append(figures)
    for side in SIDES:
        every = {k: [v for r in rounds for v in r[side][k]] for k in rounds[0][side]}
        print(f"{side}: " + "; ".join(f"{k} {_ms(v)}" for k, v in every.items()))
    for key in ("usable_s", "failover_s"):
        ratios = [statistics.median(r["after"][key]) / statistics.median(r["before"][key])
                  for r in rounds if r["after"][key] and r["before"][key]]
        if ratios:
            print(f"after / before, {key}: median of the rounds' ratios {statistics.median(ratios):.2f}x "
                  f"({', '.join(f'{x:.2f}' for x in ratios)})")
    if args.json:
        with open(args.json, "a") as out:
            out.write(json.dumps({"cwd": os.getcwd(), "base": args.base, "rounds": rounds}) + "\n")


if __name__ == "__main__":
    main()
