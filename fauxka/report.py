"""`fauxka report`: the audit pipeline (pipeline/, PySpark) from the command line."""

import argparse
import sys
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--audit", action="append", required=True, metavar="PATH",
                   help="an audit log, a directory (every audit* file below it) or a glob; .gz too; repeatable")
    p.add_argument("--out", type=Path, required=True, metavar="DIR",
                   help="where report.md, the PNGs, summary.json and tables/ (Parquet) go")
    p.add_argument("--master", metavar="URL", help="Spark master URL, passed unchanged (default local[2])")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                   help="a Spark setting over the small-machine defaults; repeatable")


def run(args: argparse.Namespace) -> int:
    try:
        from pipeline import inputs, job, session
    except ImportError as exc:
        print(f"fauxka report: {exc.name or exc} is missing; install the report extra: "
              "pip install -e '.[report]'", file=sys.stderr)
        return 2
    try:
        conf = session.parse_conf(args.conf)
        job.run(args.audit, args.out, master=args.master, conf=conf, spark=_existing_session())
    except (inputs.InputError, ValueError) as exc:
        print(f"fauxka report: {exc}", file=sys.stderr)
        return 2
    return 0


def _existing_session():
    """A SparkSession already running in this process (a test's) is reused and left running."""
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()


def main(argv: list[str] | None = None) -> int:
    """`python -m pipeline`: the same as `fauxka report`."""
    parser = argparse.ArgumentParser(prog="python -m pipeline", description="The audit report (PySpark).")
    add_arguments(parser)
    return run(parser.parse_args(argv))
