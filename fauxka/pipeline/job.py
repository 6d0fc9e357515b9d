"""The whole report: read, aggregate, write Parquet tables and summary.json, render report.md.

    python -m fauxka.pipeline --audit PATH --out DIR [--master URL]     (the same as `fauxka report`)
    python -m fauxka.pipeline --bootstrap HOST:PORT --topic NAME --out DIR     (the trail from `audit.topic`)
"""

import json
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import inputs, session

Progress = Callable[[str], None]
QUERY_THREADS = 2


@dataclass(frozen=True)
class TopicInput:
    """The audit trail as records of a topic (`audit.topic`), read with the fauxka-kafka source."""

    bootstrap: str
    topic: str
    options: dict = field(default_factory=dict)  # more source options (kafka.security.protocol, ...)


def stderr_progress(message: str) -> None:
    print(f"fauxka report: {message}", file=sys.stderr, flush=True)


def run(audit: list[str], out: Path, *, master: str | None = None, conf: dict[str, str] | None = None,
        spark=None, progress: Progress = stderr_progress, topic: "TopicInput | None" = None,
        lines_path: str | None = None) -> dict:
    """Build the report of the audit files named by `audit` (or of the records of `topic`, or of
    the Parquet (source, value) lines at `lines_path`) into `out`; returns the summary.

    With `spark` None a session is built on `master` (local[2] by default) and stopped at the
    end; a session passed in is used as it is and left running (its time zone is set to UTC)."""
    import pyarrow.parquet as pq

    from . import markdown, tables

    started = time.monotonic()
    tell = progress

    def progress(message: str) -> None:
        tell(f"{message}  [{time.monotonic() - started:.1f}s]")

    files = inputs.resolve(audit) if audit else []
    if topic is not None:
        progress(f"topic {topic.topic} on {topic.bootstrap}")
    elif lines_path is None:
        progress(f"{len(files)} audit file(s): {_describe(files)}")
    out = Path(out)
    (out / "tables").mkdir(parents=True, exist_ok=True)
    own = spark is None
    if own:
        progress(f"starting Spark ({master or session.DEFAULT_MASTER})")
        spark = session.build(master, conf)
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    frames = None
    try:
        progress("parsing audit lines")
        if topic is not None:
            lines = tables.read_topic(spark, topic.bootstrap, topic.topic, topic.options)
        elif lines_path is not None:
            lines = spark.read.parquet(lines_path)
        else:
            lines = tables.read_lines(spark, files)
        frames = tables.Frames(lines)
        counted = tables.collect_counts(frames)
        counts = tables.totals(counted)
        progress(f"{counts['events']} events, {counts['malformed']} malformed line(s)")
        # two tables at a time: Spark plans and compiles one query while the other runs
        pool = ThreadPoolExecutor(QUERY_THREADS, thread_name_prefix="fauxka-report")
        try:
            pending = {name: pool.submit(tables.table, name, frames, counted) for name in tables.TABLES}
            for i, name in enumerate(tables.TABLES, 1):
                progress(f"[{i}/{len(tables.TABLES)}] {name}")
                # aggregates are small: the driver writes them, so `out` is local whatever the master
                table = pending[name].result()
                if name == "sources":
                    table = _with_empty_files(table, files)
                pq.write_table(table, out / "tables" / f"{name}.parquet")
        finally:
            pool.shutdown(wait=True, cancel_futures=True)  # after a failure: no new query, the running ones end
    finally:
        if frames is not None:
            frames.unpersist()
        if own:
            spark.stop()
    inputs_named = audit or ([f"{topic.bootstrap}/{topic.topic}"] if topic else [lines_path])
    summary = {"inputs": inputs_named, "files": files, **counts, "seconds": round(time.monotonic() - started, 3)}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    progress("rendering report.md and plots")
    report = markdown.render(out, summary)
    progress(f"done: {report}")
    return summary


def _with_empty_files(sources, files: list[str]):
    """The sources table with a row of zeros for each file that has no line (Spark saw none)."""
    import pyarrow as pa

    seen = set(sources.column("source").to_pylist())
    empty = [{"source": f, "lines": 0, "events": 0, "malformed": 0} for f in files if f not in seen and "://" not in f]
    if not empty:
        return sources
    return pa.concat_tables([sources, pa.Table.from_pylist(empty, schema=sources.schema)]).sort_by("source")


def _describe(files: list[str]) -> str:
    if not files:
        return "nothing to read"
    shown = ", ".join(Path(f).name if "://" not in f else f for f in files[:4])
    return shown + (f" and {len(files) - 4} more" if len(files) > 4 else "")
