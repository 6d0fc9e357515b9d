"""The /metrics endpoint and the JSON log lines of a running broker."""

import json
import urllib.request


def scrape(broker) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{broker.metrics_port}/metrics", timeout=5) as response:
        return response.read().decode()


def test_metrics_show_exactly_one_active_controller(cluster):
    controller = cluster.metadata(1).controller_id
    for broker_id, broker in cluster.brokers.items():
        text = scrape(broker)
        expected = "1.0" if broker_id == controller else "0.0"
        assert f"kafka_controller_kafkacontroller_activecontrollercount {expected}" in text
        assert 'fauxka_zookeeper_session_state{state="connected"} 1.0' in text


def test_metrics_count_requests_by_api(cluster):
    cluster.metadata(3)
    text = scrape(cluster.brokers[3])
    assert 'kafka_network_requestmetrics_requests_total{request="Metadata",version="12"}' in text
    assert 'kafka_network_requestmetrics_errors_total{error="NONE",request="Metadata"}' in text
    assert 'kafka_network_requestmetrics_totaltimems{quantile="0.99",request="Metadata"}' in text


def test_log_lines_are_json_with_the_broker_id(cluster):
    lines = cluster.brokers[1].log_file.read_text().splitlines()
    events = [json.loads(line) for line in lines if line.startswith("{\"broker_id")]
    assert any(e["event"] == "broker started" for e in events)
    assert all(e["broker_id"] == 1 for e in events)


def test_forwarded_requests_are_counted_on_the_receiving_broker(cluster):
    from tests.admin_helpers import create_topics, topic_spec, unique

    other = next(b for b in cluster.brokers if b != cluster.controller_id())
    create_topics(cluster.address_of(other), [topic_spec(unique(), 1, 1)])
    text = scrape(cluster.brokers[other])
    assert 'kafka_network_requestmetrics_requests_total{request="CreateTopics",version="7"}' in text
    assert 'fauxka_forwarding_requests_total{api="create_topics"}' in text
