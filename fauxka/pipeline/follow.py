"""`fauxka report --bootstrap HOST:PORT --topic NAME --follow`: the report kept up to date from a
streaming query over the audit topic. Each trigger writes the new records (as (source, value)
lines) to `DIR/_lines/batch=N` and rewrites the report, plots and tables from every line so far. The
query's checkpoint is `DIR/_checkpoint`: stopped (Ctrl-C) and started again with the same DIR,
it carries on from the last offsets it processed, each record in the report once.
"""

from collections.abc import Callable
from pathlib import Path

from . import job, tables


def follow(topic: job.TopicInput, out: Path, spark, *, trigger_seconds: float = 10.0,
           progress: job.Progress = job.stderr_progress, available_now: bool = False,
           until: Callable[[], bool] | None = None) -> None:
    """Run until interrupted (or, with `available_now`, until what the topic holds now is in the
    report; `until` is polled between waits for tests)."""
    from . import kafka_source

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    lines_path = str(out / "_lines")
    kafka_source.register(spark)
    records = (spark.readStream.format(kafka_source.FORMAT).option("kafka.bootstrap.servers", topic.bootstrap)
               .option("subscribe", topic.topic).option("startingOffsets", "earliest")
               .options(**topic.options).load())

    def each_batch(batch, batch_id: int) -> None:
        lines = tables.lines_of_records(batch)
        # one directory per batch, overwritten: a batch replayed after a crash is not counted twice
        lines.write.mode("overwrite").parquet(f"{lines_path}/batch={batch_id}")
        summary = job.run([], out, spark=spark, progress=lambda m: None, lines_path=lines_path)
        progress(f"trigger {batch_id}: {summary['events']} events in the report")

    writer = (records.writeStream.foreachBatch(each_batch)
              .option("checkpointLocation", str(out / "_checkpoint")))
    writer = writer.trigger(availableNow=True) if available_now else writer.trigger(
        processingTime=f"{trigger_seconds} seconds")
    query = writer.start()
    try:
        while query.isActive and not (until and until()):
            query.awaitTermination(1)
        if query.exception() is not None:
            raise query.exception()
    except KeyboardInterrupt:
        progress("stopping (the next run with the same --out carries on from here)")
    finally:
        query.stop()
