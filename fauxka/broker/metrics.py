"""Prometheus metrics of one broker, served on `metrics.port` at /metrics.

Kafka's MBeans under the names the JMX exporter with Strimzi's rules gives them (docs/kafka-metrics.md
lists each with its MBean): request_metrics.py, server_metrics.py, controller_metrics.py,
replication/metrics.py, coordination/group_metrics.py and txn_metrics.py. The fauxka_* metrics here
are what Kafka has no name for (injected faults, forwarding retries, ZooKeeper round trips, ...).
"""

from typing import Any

from prometheus_client import (CollectorRegistry, Counter, Gauge, ProcessCollector, disable_created_metrics,
                               start_http_server)

from .bind_errors import bind_error
from .request_metrics import RequestMetrics, SocketServerMetrics
from .server_metrics import ServerMetrics

# the JMX exporter serves no _created samples; prometheus-client would add one to every counter
disable_created_metrics()


class BrokerMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        ProcessCollector(registry=r)  # process_cpu_seconds_total, process_open_fds, ... (as the JMX exporter's)
        self.kafka_requests = RequestMetrics(r)  # kafka.network:type=RequestMetrics
        self.sockets = SocketServerMetrics(r)  # kafka.server:type=socket-server-metrics
        self.server = ServerMetrics(r)  # KafkaServer, SocketServer, ZooKeeper client, ForwardingManager
        self.injected_faults = Counter("fauxka_injected_faults", "Requests hit by an injected fault, by kind",
                                       ["kind"], registry=r)
        self.closed_connections = Counter("fauxka_connections_closed_for_protocol_errors",
                                          "Connections closed because of a bad frame or request", ["reason"], registry=r)
        self.quota_throttle_seconds = Counter("fauxka_quota_throttle_seconds", "Throttle time given to clients, by quota "
                                         "type and the quota's user and client id tags", ["quota", "user", "client_id"],
                                         registry=r)
        self.quota_throttled = Counter("fauxka_quota_throttled_responses", "Responses with a throttle time, by quota "
                                       "type, user and client id", ["quota", "user", "client_id"], registry=r)
        self.controller_epoch = Gauge("fauxka_controller_epoch", "Controller epoch this broker last saw",
                                      registry=r)
        self.zk_session = Gauge("fauxka_zookeeper_session_state",
                                "1 for the current ZooKeeper session state", ["state"], registry=r)
        # Forwarding (KIP-590, KIP-938); docs/admin-plane.md maps each to its KIP name.
        self.forwarded = Counter("fauxka_forwarding_requests", "Client requests forwarded to the controller",
                                 ["api"], registry=r)
        self.forwarding_pending = Gauge("fauxka_forwarding_clients_pending",
                                        "Client requests with a forward to the controller pending", registry=r)
        self.forwarding_auth_failures = Counter("fauxka_forwarding_authorization_failures",
                                                "Envelopes the controller refused with CLUSTER_AUTHORIZATION_FAILED",
                                                registry=r)
        self.forwarding_retries = Counter("fauxka_forwarding_retries", "Forward attempts retried, by reason",
                                          ["reason"], registry=r)
        self.forwarding_timeouts = Counter("fauxka_forwarding_timeouts",
                                           "Forwards answered REQUEST_TIMED_OUT after request.timeout.ms",
                                           ["api"], registry=r)
        self.envelopes = Counter("fauxka_envelopes_received", "Envelopes this controller answered, by forwarding "
                                 "broker, inner api and outcome", ["forwarding_broker", "api", "outcome"], registry=r)
        self.zk_requests = Gauge("fauxka_zookeeper_requests", "ZooKeeper requests sent since start, by kind "
                                 "(read, write, multi)", ["kind"], registry=r)
        self.cached_topics = Gauge("fauxka_metadata_topics", "Topics in this broker's metadata cache", registry=r)
        self.cached_partitions = Gauge("fauxka_metadata_partitions",
                                       "Partition states in this broker's metadata cache", registry=r)
        self._http: Any = None
        self._children: dict[tuple, Any] = {}

    def child(self, metric: Any, *labels: str) -> Any:
        """metric.labels(*labels), remembered: prometheus-client's lookup is slow for a per-request path."""
        key = (metric, labels)
        found = self._children.get(key)
        if found is None:
            found = self._children[key] = metric.labels(*labels)
        return found

    def follow_zk_requests(self, counts: dict[str, int]) -> None:
        for kind in counts:
            self.zk_requests.labels(kind).set_function(lambda k=kind: counts[k])

    def follow_cache(self, cache: Any) -> None:
        self.cached_topics.set_function(lambda: len(cache.topics))
        self.cached_partitions.set_function(lambda: len(cache.partition_states))

    def set_zk_state(self, state: str) -> None:
        self.server.session_state(state)
        for name in ("connected", "suspended", "lost"):
            self.zk_session.labels(name).set(1 if name == state else 0)

    def serve(self, host: str, port: int) -> None:
        """On the event loop's thread, once the broker serves."""
        self.server.serving()
        if port:
            try:
                self._http, _thread = start_http_server(port, addr=host, registry=self.registry)
            except OSError as exc:
                raise bind_error(exc, "metrics.port", host, port) from None

    def stop(self) -> None:
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
            self._http = None
