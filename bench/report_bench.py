"""Benchmark: `fauxka report` over 1,000,000 synthetic audit events (fauxka/pipeline/synthetic.py).
Prints the time to write the input, the report's wall time and events per second.

    .venv/bin/python -m bench.report_bench [--events 1000000] [--files 4] [--gzip] [--master local[2]]
                                           [--conf KEY=VALUE ...] [--keep DIR]
"""

import argparse
import json
import tempfile
import time
from pathlib import Path

from fauxka.pipeline import job, session, synthetic


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=4, help="split the events over this many audit files")
    parser.add_argument("--gzip", action="store_true", help="write the audit files gzipped")
    parser.add_argument("--master", help="Spark master URL (default local[2])")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--keep", type=Path, help="write input and report here instead of a temporary directory")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="fauxka-report-bench-") as tmp:
        root = args.keep or Path(tmp)
        started = time.perf_counter()
        per_file = -(-args.events // args.files)
        stream = synthetic.events(args.events)
        for i in range(args.files):
            name = f"audit-{i + 1}.log" + (".gz" if args.gzip else "")
            synthetic.write(root / "audit" / name, (e for _, e in zip(range(per_file), stream)))
        size = sum(p.stat().st_size for p in (root / "audit").iterdir())
        print(f"input: {args.events:,} events in {args.files} file(s), {size / 1e6:.1f} MB, "
              f"written in {time.perf_counter() - started:.1f}s")

        started = time.perf_counter()
        spark = session.build(args.master, session.parse_conf(args.conf))
        spark_start = time.perf_counter() - started
        try:
            started = time.perf_counter()
            summary = job.run([str(root / "audit")], root / "report", spark=spark, progress=lambda m: None)
            report_s = time.perf_counter() - started
        finally:
            spark.stop()
        print(f"spark start: {spark_start:.1f}s; report: {report_s:.1f}s "
              f"({summary['events']:,} events, {summary['malformed']} malformed)")
        print(f"{summary['events'] / report_s:,.0f} events/s "
              f"({summary['events'] / (report_s + spark_start):,.0f} events/s counting the Spark start)")
        print(json.dumps({"events": summary["events"], "report_s": round(report_s, 2),
                          "spark_start_s": round(spark_start, 2)}))


if __name__ == "__main__":
    main()
