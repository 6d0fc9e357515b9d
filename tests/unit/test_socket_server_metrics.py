"""KIP-511's connections by client software (socket-server-metrics): counted from the connection's
opening as "unknown", moved by its ApiVersions, kept at 0 after the last one closes, and evicted only
when a new series needs one of the 100 places (Kafka's IntGaugeSuite in Selector)."""

from prometheus_client import CollectorRegistry

from fauxka.broker.request_metrics import UNKNOWN_SOFTWARE, SocketServerMetrics


def _software(metrics: SocketServerMetrics) -> dict[tuple[str, str], float]:
    family = next(f for f in metrics.collect() if f.name == "kafka_server_socket_server_metrics_connections_software")
    return {(s.labels["clientSoftwareName"], s.labels["clientSoftwareVersion"]): s.value for s in family.samples}


def test_a_connection_is_unknown_until_named_and_its_series_stays_at_zero():
    metrics = SocketServerMetrics(CollectorRegistry())
    metrics.opened("PLAINTEXT")
    assert _software(metrics) == {UNKNOWN_SOFTWARE: 1}
    metrics.software_named("PLAINTEXT", UNKNOWN_SOFTWARE, ("app", "1.0"))
    assert _software(metrics) == {UNKNOWN_SOFTWARE: 0, ("app", "1.0"): 1}
    metrics.closed("PLAINTEXT", ("app", "1.0"))
    assert _software(metrics) == {UNKNOWN_SOFTWARE: 0, ("app", "1.0"): 0}


def test_a_full_suite_evicts_a_zero_series_and_counts_nothing_when_none_is_zero():
    metrics = SocketServerMetrics(CollectorRegistry())
    for i in range(100):
        metrics.software_named("PLAINTEXT", ("x", "0"), (f"app{i}", "1"))  # ("x", "0") is never counted
    assert len(_software(metrics)) == 100 and ("x", "0") not in _software(metrics)
    metrics.software_named("PLAINTEXT", ("app0", "1"), ("new", "1"))  # app0 at 0 makes room
    counts = _software(metrics)
    assert counts[("new", "1")] == 1 and ("app0", "1") not in counts
    metrics.software_named("PLAINTEXT", ("app1", "1"), ("later", "1"))
    assert ("later", "1") in _software(metrics) and len(_software(metrics)) == 100
    metrics.opened("PLAINTEXT")  # no series at zero left: "unknown" is not counted
    assert UNKNOWN_SOFTWARE not in _software(metrics)
