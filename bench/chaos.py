"""`fauxka chaos` as a benchmark (issue 23): runs with every nemesis and every workload on a fresh
3-broker fauxka.testing Cluster per seed, reporting per run the records written, faults injected
of those scheduled (others not possible at the time, e.g. a move with no other in-sync replica, or
not reached: each broker-down fault first waits for every ISR to be whole), the anomalies the
checker found (goal: 0) and the run's wall time. The histories, verdicts and pictures stay in --out.

    .venv/bin/python -m bench.chaos [--seeds 1,2,3] [--duration 300] [--out bench-chaos]
"""

import argparse
import time
from pathlib import Path

from fauxka.testing import Cluster, run_chaos


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--duration", type=float, default=300.0, help="seconds of faults per run")
    p.add_argument("--rate", type=float, default=100.0, help="records per second per producer")
    p.add_argument("--out", type=Path, default=Path("bench-chaos"))
    args = p.parse_args(argv)
    rows, anomalies = [], 0
    for seed in (int(s) for s in args.seeds.split(",")):
        started = time.monotonic()
        with Cluster(3, overrides={"replica.lag.time.max.ms": "10000"}) as cluster:
            result = run_chaos(cluster, seed=seed, duration_s=args.duration, rate=args.rate,
                               out=args.out / f"seed-{seed}", log=None)
        anomalies += result.verdict.anomalies
        failing = ", ".join(r.name for r in result.verdict.results if not r.ok) or "-"
        rows.append(f"| {seed} | {args.duration:g} s | {result.records} | {result.injected} of {len(result.steps)} "
                    f"({result.failed} not possible, {result.not_reached} not reached) "
                    f"| {result.verdict.anomalies} | {failing} | {time.monotonic() - started:.0f} s |")
        print(rows[-1], flush=True)
    print("| seed | faults for | records | faults injected | anomalies | failing checks | wall time |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    return 0 if anomalies == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
