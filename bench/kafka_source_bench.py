"""Benchmark: the fauxka-kafka PySpark data source (fauxka/pipeline/kafka_source.py) on local[2].

Starts a 1-broker fauxka cluster, produces N synthetic audit events (fauxka/pipeline/synthetic.py, one
JSON record each, keyed by principal) to a topic of P partitions, then times on one SparkSession:
- read: every record into a DataFrame (all columns, written to Spark's "noop" sink), records/s,
  the first read (Python workers starting) and the best of two more;
- report: `fauxka report --bootstrap --topic` over the topic (fauxka/pipeline/job.py), seconds.

    .venv/bin/python -m bench.kafka_source_bench [--events 1000000] [--partitions 2] [--master local[2]]
"""

import argparse
import json
import tempfile
import time

from fauxka.pipeline import job, kafka_source, session, synthetic

from .common import local_cluster


def produce(bootstrap: str, topic: str, partitions: int, events: int) -> float:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until the topic exists
    [future] = admin.create_topics([NewTopic(topic, partitions, 1)]).values()
    future.result(30)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.size": 1_000_000,
                         "compression.type": "lz4", "queue.buffering.max.messages": 1_000_000})
    started = time.perf_counter()
    for e in synthetic.events(events):
        while True:
            try:
                producer.produce(topic, json.dumps(e, separators=(",", ":")).encode(), e["principal"].encode())
                break
            except BufferError:
                producer.poll(0.05)
    assert producer.flush(120) == 0
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--skip-report", action="store_true")
    args = parser.parse_args()

    with local_cluster(1, ("offsets.topic.replication.factor=1",)) as cluster:
        bootstrap = f"127.0.0.1:{cluster.ports[1]}"
        produced_s = produce(bootstrap, "audit", args.partitions, args.events)
        print(f"input: {args.events:,} records in {args.partitions} partition(s), produced in {produced_s:.1f}s")
        started = time.perf_counter()
        spark = session.build(args.master)
        spark_start = time.perf_counter() - started
        try:
            kafka_source.register(spark)
            reads = []
            for _ in range(3):  # the first read also starts Spark's Python workers and warms the JVM up
                started = time.perf_counter()
                (spark.read.format(kafka_source.FORMAT).option("kafka.bootstrap.servers", bootstrap)
                 .option("subscribe", "audit").load().write.format("noop").mode("overwrite").save())
                reads.append(time.perf_counter() - started)
            cold_s, read_s = reads[0], min(reads[1:])
            print(f"spark start: {spark_start:.1f}s; first read: {cold_s:.1f}s ({args.events / cold_s:,.0f} records/s); "
                  f"warm read: {read_s:.1f}s, {args.events / read_s:,.0f} records/s into a DataFrame ({args.master})")
            report_s = None
            if not args.skip_report:
                started = time.perf_counter()
                with tempfile.TemporaryDirectory() as out:
                    summary = job.run([], out, spark=spark, progress=lambda m: None,
                                      topic=job.TopicInput(bootstrap, "audit"))
                report_s = time.perf_counter() - started
                assert summary["events"] == args.events, summary
                print(f"report from the topic: {report_s:.1f}s ({report_s + spark_start:.1f}s with the Spark start)")
        finally:
            spark.stop()
    print(json.dumps({"events": args.events, "first_read_s": round(cold_s, 2), "read_s": round(read_s, 2),
                      "records_per_s": round(args.events / read_s),
                      "report_s": report_s and round(report_s, 2), "spark_start_s": round(spark_start, 2)}))


if __name__ == "__main__":
    main()
