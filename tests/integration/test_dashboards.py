"""Every panel query of the fauxka Grafana dashboard (config/grafana/dashboards/fauxka.json, provisioned
in docker-compose.yml) returns data from a live cluster through a real Prometheus's query API (no
Grafana image can be pulled here), and so does every query of Strimzi's strimzi-kafka.json that names
a Kafka metric, its Kubernetes label matchers removed, but the ones docs/observability.md lists."""

import json
import pathlib
import re

from fauxka.testing.cluster import wait_for
from tests.metrics_helpers import traffic
from tests.prometheus_helpers import prometheus, query

ROOT = pathlib.Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "config" / "grafana" / "dashboards" / "fauxka.json"
STRIMZI = ROOT / "tests" / "data" / "strimzi-kafka-queries.json"
KUBERNETES_LABELS = ("namespace", "strimzi_io_cluster", "strimzi_io_name", "kubernetes_pod_name", "pod", "container",
                     "persistentvolumeclaim")
# Strimzi queries that name a Kafka metric and return nothing here, and why (docs/observability.md)
CANNOT = {"kafka_server_brokertopicmetrics_failedfetchrequests_total":
          "Kafka creates a topic's FailedFetchRequestsPerSec at its first unexpected read failure: empty on a "
          "healthy Kafka cluster too"}


def dashboard_queries() -> list[tuple[str, str]]:
    panels = json.loads(DASHBOARD.read_text())["panels"]
    return [(p["title"], t["expr"]) for p in panels for t in p.get("targets", [])]


def without_kubernetes(expr: str) -> str:
    """Strimzi's query with its Kubernetes label matchers removed and the topic/partition variables 'all'."""
    labels = "|".join(KUBERNETES_LABELS)
    expr = re.sub(rf'\s*\b(?:{labels})\s*(?:=~|!~|!=|=)\s*"[^"]*"\s*,?', "", expr)
    expr = re.sub(r",\s*}", "}", expr).replace("{}", "")
    return expr.replace("$kafka_topic", ".*").replace("$kafka_partition", ".*")


def strimzi_queries() -> list[tuple[str, str, set[str]]]:
    """(title, query, metric names) of every Strimzi panel query that names a Kafka metric (or a process_*
    one, which the JMX exporter serves beside Kafka's and fauxka too); the others query the JVM,
    cAdvisor or kubelet (docs/observability.md)."""
    out = []
    for q in json.loads(STRIMZI.read_text())["queries"]:
        expr = without_kubernetes(q["expr"])
        names = set(re.findall(r"(?<![$\w])((?:kafka|process)_\w+)", expr))
        if names:
            out.append((q["title"], expr, names))
    return out


def test_kubernetes_matchers_are_removed():
    expr = 'sum(irate(kafka_server_brokertopicmetrics_bytesin_total{namespace="$kubernetes_namespace",' \
           'strimzi_io_cluster="$strimzi_cluster_name",topic=~"$kafka_topic",topic!="",' \
           'kubernetes_pod_name=~"$strimzi_cluster_name-$kafka_broker"}[5m]))'
    assert without_kubernetes(expr) == 'sum(irate(kafka_server_brokertopicmetrics_bytesin_total{topic=~".*",topic!=""}[5m]))'
    assert without_kubernetes('sum(kafka_x{namespace="n",strimzi_io_cluster="c"})') == "sum(kafka_x)"


def test_the_dashboard_opens_with_forwarding():
    panels = json.loads(DASHBOARD.read_text())["panels"]
    assert panels[0]["type"] == "row" and panels[0]["title"].startswith("Forwarding")
    first_row = panels[1:panels.index(next(p for p in panels[1:] if p["type"] == "row"))]
    assert first_row and all("forwarding" in t["expr"] or "envelopes" in t["expr"]
                             for p in first_row for t in p["targets"])


def test_every_panel_query_returns_data(cluster, tmp_path):
    targets = [f"127.0.0.1:{b.metrics_port}" for b in cluster.brokers.values()]
    with prometheus(tmp_path, targets) as port:
        traffic(cluster)
        ours = dashboard_queries()
        theirs = [(title, expr) for title, expr, names in strimzi_queries() if not names & CANNOT.keys()]
        empty: list[tuple[str, str]] = []

        def all_answer() -> bool:
            empty[:] = [(title, expr) for title, expr in ours + theirs if not query(port, expr)]
            return not empty

        try:
            wait_for(all_answer, 30, interval_s=0.5, what="every query answered")
        except TimeoutError:
            pass
    assert not empty, f"queries without data: {empty}"
    assert len(ours) >= 20 and len(theirs) >= 24
