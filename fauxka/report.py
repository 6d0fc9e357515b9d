"""`fauxka report`: the audit pipeline (fauxka/pipeline/, PySpark) from the command line."""

import argparse
import sys
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--audit", action="append", metavar="PATH",
                   help="an audit log, a directory (every audit* file below it) or a glob; .gz too; repeatable")
    p.add_argument("--bootstrap", metavar="HOST:PORT", help="read the audit trail from a topic on this cluster")
    p.add_argument("--topic", metavar="NAME", help="the controller's audit.topic (with --bootstrap)")
    p.add_argument("--kafka", action="append", default=[], metavar="KEY=VALUE",
                   help="a client setting for --bootstrap (security.protocol=SSL, ...); repeatable")
    p.add_argument("--follow", action="store_true",
                   help="keep the report up to date from a streaming query over --topic (Ctrl-C stops)")
    p.add_argument("--trigger-seconds", type=float, default=10.0, help="--follow: seconds between updates")
    p.add_argument("--out", type=Path, required=True, metavar="DIR",
                   help="where report.md, the PNGs, summary.json and tables/ (Parquet) go")
    p.add_argument("--master", metavar="URL", help="Spark master URL, passed unchanged (default local[2])")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                   help="a Spark setting over the small-machine defaults; repeatable")


def run(args: argparse.Namespace) -> int:
    try:
        from fauxka.pipeline import inputs, job, session
    except ImportError as exc:
        print(f"fauxka report: {exc.name or exc} is missing; install the report extra: "
              "pip install -e '.[report]'", file=sys.stderr)
        return 2
    try:
        conf = session.parse_conf(args.conf)
        topic = _topic(args)
        if args.follow:
            return _follow(args, topic, conf)
        job.run(args.audit or [], args.out, master=args.master, conf=conf, spark=_existing_session(), topic=topic)
    except (inputs.InputError, ValueError) as exc:
        print(f"fauxka report: {exc}", file=sys.stderr)
        return 2
    return 0


def _topic(args: argparse.Namespace):
    """The topic input, or None; ValueError (exit 2) on a combination that does not make sense."""
    from fauxka.pipeline import job, session

    if bool(args.bootstrap) != bool(args.topic):
        raise ValueError("--bootstrap and --topic go together")
    if bool(args.audit) == bool(args.topic):
        raise ValueError("give either --audit PATH or --bootstrap HOST:PORT --topic NAME")
    if args.follow and not args.topic:
        raise ValueError("--follow reads a topic: give --bootstrap and --topic")
    if not args.topic:
        return None
    options = {f"kafka.{k}": v for k, v in session.parse_conf(args.kafka).items()}
    return job.TopicInput(args.bootstrap, args.topic, options)


def _follow(args: argparse.Namespace, topic, conf: dict[str, str]) -> int:
    from fauxka.pipeline import follow, session

    spark = _existing_session()
    own = spark is None
    if own:
        spark = session.build(args.master, conf)
    try:
        follow.follow(topic, args.out, spark, trigger_seconds=args.trigger_seconds)
    finally:
        if own:
            spark.stop()
    return 0


def _existing_session():
    """A SparkSession already running in this process (a test's) is reused and left running."""
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()


def main(argv: list[str] | None = None) -> int:
    """`python -m fauxka.pipeline`: the same as `fauxka report`."""
    parser = argparse.ArgumentParser(prog="python -m fauxka.pipeline", description="The audit report (PySpark).")
    add_arguments(parser)
    return run(parser.parse_args(argv))
