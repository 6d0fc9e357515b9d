"""Prometheus metrics of one broker, served on `metrics.port` at /metrics."""

from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server


class BrokerMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("fauxka_requests", "Requests answered, by api, version and top-level error ('forwarded' when the controller answered)",
                                ["api", "version", "error"], registry=r)
        self.request_seconds = Histogram("fauxka_request_seconds", "Request handling time",
                                         ["api", "version"], registry=r,
                                         buckets=(.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30))
        self.injected_faults = Counter("fauxka_injected_faults", "Requests hit by an injected fault, by kind",
                                       ["kind"], registry=r)
        self.connections = Gauge("fauxka_connections", "Open client connections", ["listener"], registry=r)
        self.closed_connections = Counter("fauxka_connections_closed_for_protocol_errors",
                                          "Connections closed because of a bad frame or request", ["reason"], registry=r)
        self.quota_throttle_seconds = Counter("fauxka_quota_throttle_seconds", "Throttle time given to clients, by quota "
                                         "type and the quota's user and client id tags", ["quota", "user", "client_id"],
                                         registry=r)
        self.quota_throttled = Counter("fauxka_quota_throttled_responses", "Responses with a throttle time, by quota "
                                       "type, user and client id", ["quota", "user", "client_id"], registry=r)
        self.controller_active = Gauge("fauxka_controller_active", "1 while this broker is the controller",
                                       registry=r)
        self.controller_epoch = Gauge("fauxka_controller_epoch", "Controller epoch this broker last saw",
                                      registry=r)
        self.zk_session = Gauge("fauxka_zookeeper_session_state",
                                "1 for the current ZooKeeper session state", ["state"], registry=r)
        # Forwarding (KIP-590, KIP-938); docs/admin-plane.md maps each to its KIP name.
        self.forwarded = Counter("fauxka_forwarding_requests", "Client requests forwarded to the controller",
                                 ["api"], registry=r)
        self.forwarding_pending = Gauge("fauxka_forwarding_clients_pending",
                                        "Client requests with a forward to the controller pending", registry=r)
        self.forwarding_queue_length = Gauge("fauxka_forwarding_queue_length",
                                             "Forwards waiting for a channel to the controller", registry=r)
        self.forwarding_auth_failures = Counter("fauxka_forwarding_authorization_failures",
                                                "Envelopes the controller refused with CLUSTER_AUTHORIZATION_FAILED",
                                                registry=r)
        self.forwarding_retries = Counter("fauxka_forwarding_retries", "Forward attempts retried, by reason",
                                          ["reason"], registry=r)
        self.forwarding_timeouts = Counter("fauxka_forwarding_timeouts",
                                           "Forwards answered REQUEST_TIMED_OUT after request.timeout.ms",
                                           ["api"], registry=r)
        buckets = (.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30)
        self.forwarding_queue_seconds = Histogram("fauxka_forwarding_queue_seconds",
                                                  "Time from receipt until the envelope is sent", registry=r,
                                                  buckets=buckets)
        self.forwarding_remote_seconds = Histogram("fauxka_forwarding_remote_seconds",
                                                   "Time from sending the envelope until its answer", registry=r,
                                                   buckets=buckets)
        self.envelopes = Counter("fauxka_envelopes_received", "Envelopes this controller answered, by forwarding "
                                 "broker, inner api and outcome", ["forwarding_broker", "api", "outcome"], registry=r)
        self.zk_requests = Gauge("fauxka_zookeeper_requests", "ZooKeeper requests sent since start, by kind "
                                 "(read, write, multi)", ["kind"], registry=r)
        self.cached_topics = Gauge("fauxka_metadata_topics", "Topics in this broker's metadata cache", registry=r)
        self.cached_partitions = Gauge("fauxka_metadata_partitions",
                                       "Partition states in this broker's metadata cache", registry=r)
        self._server: Any = None
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
        for name in ("connected", "suspended", "lost"):
            self.zk_session.labels(name).set(1 if name == state else 0)

    def serve(self, host: str, port: int) -> None:
        if port:
            self._server, _thread = start_http_server(port, addr=host, registry=self.registry)

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
