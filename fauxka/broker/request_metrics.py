"""Kafka's kafka.network:type=RequestMetrics MBeans (RequestChannel's RequestMetrics) and the
socket server's per-listener connection metrics, as the JMX exporter with Strimzi's rules names
them (fauxka/broker/kafka_exposition.py; docs/kafka-metrics.md lists them).

Per request name (Kafka's ApiKeys name: Produce, FetchConsumer, ...): RequestsPerSec by version,
ErrorsPerSec by error, and the histograms TotalTimeMs (receipt to response encoded), ThrottleTimeMs
(the throttle time given) and RequestBytes (the request's size). A Fetch counts as `Fetch` and as
`FetchConsumer` or `FetchFollower`, as Kafka's do. Kafka creates the histograms of every api at
start-up; here an api's appear with its first request. Kafka's LocalTimeMs, RemoteTimeMs and the
queue times have no counterpart: one event loop reads, handles and answers.

ErrorsPerSec counts the error codes a response carries as Kafka's errorCounts() does for Produce
(each partition's) and Fetch (the top-level one and each partition's); any other response counts
once, by its top-level error code (Kafka counts every error code of the response, per topic or
partition for some apis: a difference); a forwarded request's answer, passed through as the
controller's bytes, is not counted there.
"""

from typing import Any

from kio.schema.errors import ErrorCode
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from .kafka_exposition import Collector, Samples, histogram

NETWORK_PROCESSOR = "0"  # one event loop serves every connection: Kafka's processor 0
PRODUCE_KEY, FETCH_KEY = 0, 1


def kafka_request_name(api_name: str) -> str:
    """fauxka's api name (snake case, kio's) to Kafka's ApiKeys name: list_offsets -> ListOffsets."""
    return "".join(part.capitalize() for part in api_name.split("_"))


class RequestMetrics(Collector):
    def __init__(self, registry: Any) -> None:
        self._names: dict[str, str] = {}
        self._requests: dict[tuple[str, int], int] = {}
        self._errors: dict[tuple[str, str], int] = {}
        self._histograms: dict[str, dict[str, Samples]] = {"TotalTimeMs": {}, "ThrottleTimeMs": {}, "RequestBytes": {}}
        self._error_names: dict[int, str] = {}
        registry.register(self)

    def record(self, api_name: str, version: int, error_codes: list[int] | None, total_ms: float,
               throttle_ms: float, request_bytes: int, fetch_kind: str | None = None) -> None:
        """One answered request. `fetch_kind`: "Consumer" or "Follower" for a Fetch. `error_codes`:
        those the response carries (error_codes() below); None: not known here (a forwarded answer)."""
        name = self._names.get(api_name)
        if name is None:
            name = self._names[api_name] = kafka_request_name(api_name)
        self._one(name, version, error_codes, total_ms, throttle_ms, request_bytes)
        if fetch_kind is not None:
            self._one(name + fetch_kind, version, error_codes, total_ms, throttle_ms, request_bytes)

    def _one(self, name: str, version: int, error_codes: list[int] | None, total_ms: float, throttle_ms: float,
             request_bytes: int) -> None:
        key = (name, version)
        self._requests[key] = self._requests.get(key, 0) + 1
        if error_codes:
            errors, names = self._errors, self._error_names
            failed = [code for code in error_codes if code]
            if len(failed) < len(error_codes):
                ekey = (name, "NONE")
                errors[ekey] = errors.get(ekey, 0) + len(error_codes) - len(failed)
            for code in failed:
                error = names.get(code)
                if error is None:
                    error = names[code] = ErrorCode(code).name.upper()
                ekey = (name, error)
                errors[ekey] = errors.get(ekey, 0) + 1
        hists = self._histograms
        for metric, value in (("TotalTimeMs", round(total_ms)), ("ThrottleTimeMs", throttle_ms),
                              ("RequestBytes", request_bytes)):
            samples = hists[metric].get(name)
            if samples is None:
                samples = hists[metric][name] = Samples()
            samples.update(value)

    def collect(self):
        requests = CounterMetricFamily("kafka_network_requestmetrics_requests", "Kafka's RequestMetrics "
                                       "RequestsPerSec: requests answered, by request and version",
                                       labels=["request", "version"])
        for (name, version), n in list(self._requests.items()):
            requests.add_metric([name, str(version)], n)
        yield requests
        errors = CounterMetricFamily("kafka_network_requestmetrics_errors", "Kafka's RequestMetrics ErrorsPerSec: "
                                     "error codes of the responses, by request (Produce and Fetch per partition)", labels=["request", "error"])
        for (name, error), n in list(self._errors.items()):
            errors.add_metric([name, error], n)
        yield errors
        docs = {"TotalTimeMs": "time from receipt to the response written, ms",
                "ThrottleTimeMs": "throttle time given, ms", "RequestBytes": "request size, bytes"}
        for metric, by_name in self._histograms.items():
            yield from histogram(f"kafka_network_requestmetrics_{metric.lower()}", f"Kafka's RequestMetrics "
                                 f"{metric}: {docs[metric]}", ["request"],
                                 [([name], samples) for name, samples in list(by_name.items())])


def error_codes(api_key: int, response: Any) -> list[int]:
    """The error codes Kafka's errorCounts() counts for a response: Produce's per partition, Fetch's
    top-level one and per partition; another api's top-level one (none: NONE)."""
    if response is None:
        return []
    if api_key == PRODUCE_KEY:
        return [p.error_code for t in response.responses for p in t.partition_responses]
    if api_key == FETCH_KEY:
        return [getattr(response, "error_code", 0), *(p.error_code for t in response.responses for p in t.partitions)]
    return [getattr(response, "error_code", 0)]


UNKNOWN_SOFTWARE = ("unknown", "unknown")  # Kafka's ClientInformation.EMPTY
_SOFTWARE_ENTRIES = 100  # Selector's connectionsByClient suite


class SocketServerMetrics(Collector):
    """kafka.server:type=socket-server-metrics,listener=L,networkProcessor=N: connection-count,
    connection-creation-total, connection-close-total; and with clientSoftwareName=S,
    clientSoftwareVersion=V (KIP-511) the open connections of each client software, "unknown" until
    a connection's ApiVersions names it. As Kafka's Selector (an IntGaugeSuite of 100 entries), a
    series whose count falls to zero stays, at 0, until a new one needs its place."""

    def __init__(self, registry: Any) -> None:
        self._open: dict[str, int] = {}
        self._created: dict[str, int] = {}
        self._closed: dict[str, int] = {}
        self._software: dict[tuple[str, str, str], int] = {}  # (listener, name, version) -> open connections
        registry.register(self)

    def listener(self, listener: str) -> None:
        """A listener bound: its metrics exist from now on (Kafka creates them with the processor)."""
        for counts in (self._open, self._created, self._closed):
            counts.setdefault(listener, 0)

    def opened(self, listener: str) -> None:
        self._open[listener] = self._open.get(listener, 0) + 1
        self._created[listener] = self._created.get(listener, 0) + 1
        self._count_software(listener, UNKNOWN_SOFTWARE, 1)

    def closed(self, listener: str, software: tuple[str, str] = UNKNOWN_SOFTWARE) -> None:
        self._open[listener] = self._open.get(listener, 0) - 1
        self._closed[listener] = self._closed.get(listener, 0) + 1
        self._count_software(listener, software, -1)

    def software_named(self, listener: str, before: tuple[str, str], now: tuple[str, str]) -> None:
        """A connection's ApiVersions named its client software (it was `before` until then)."""
        self._count_software(listener, before, -1)
        self._count_software(listener, now, 1)

    def _count_software(self, listener: str, software: tuple[str, str], delta: int) -> None:
        key = (listener, *software)
        software_counts = self._software
        if key not in software_counts and delta < 0:
            return  # never counted (the suite was full)
        if key not in software_counts and len(software_counts) >= _SOFTWARE_ENTRIES:
            unused = next((k for k, n in software_counts.items() if n <= 0), None)
            if unused is None:
                return  # IntGaugeSuite: full, nothing removable: not counted
            del software_counts[unused]
        software_counts[key] = max(software_counts.get(key, 0) + delta, 0)

    @property
    def open_connections(self) -> int:
        return sum(self._open.values())

    def collect(self):
        labels = ["listener", "networkProcessor"]
        count = GaugeMetricFamily("kafka_server_socket_server_metrics_connection_count",
                                  "socket-server-metrics connection-count: open connections", labels=labels)
        created = CounterMetricFamily("kafka_server_socket_server_metrics_connection_creation",
                                      "socket-server-metrics connection-creation-total", labels=labels)
        closed = CounterMetricFamily("kafka_server_socket_server_metrics_connection_close",
                                     "socket-server-metrics connection-close-total", labels=labels)
        for family, counts in ((count, self._open), (created, self._created), (closed, self._closed)):
            for listener, n in list(counts.items()):
                family.add_metric([listener, NETWORK_PROCESSOR], n)
            yield family
        software = GaugeMetricFamily("kafka_server_socket_server_metrics_connections_software",
                                     "socket-server-metrics connections: open connections by client software",
                                     labels=["clientSoftwareName", "clientSoftwareVersion", *labels])
        for (listener, name, version), n in list(self._software.items()):
            software.add_metric([name, version, listener, NETWORK_PROCESSOR], n)
        yield software
