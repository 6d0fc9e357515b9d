"""Scraping brokers' /metrics and the list of Kafka metric names fauxka serves (docs/kafka-metrics.md)."""

import pathlib
import re
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

LIST = pathlib.Path(__file__).resolve().parents[1] / "docs" / "kafka-metrics.md"


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        return response.read().decode()


def sample_names(text: str) -> set[str]:
    """The names of the samples a scrape holds (a counter's end in _total)."""
    return {sample.name for family in text_string_to_metric_families(text) for sample in family.samples}


def kafka_metric_list() -> dict[str, str]:
    """Prometheus name -> Kafka MBean, from the table of docs/kafka-metrics.md."""
    rows = re.findall(r"^\| `(kafka_\w+)` \| (.+?) \|", LIST.read_text(), re.M)
    return dict(rows)
