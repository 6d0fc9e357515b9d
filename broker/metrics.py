"""Prometheus metrics of one broker, served on `metrics.port` at /metrics."""

from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server


class BrokerMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("fauxka_requests", "Requests answered, by api, version and top-level error",
                                ["api", "version", "error"], registry=r)
        self.request_seconds = Histogram("fauxka_request_seconds", "Request handling time",
                                         ["api", "version"], registry=r,
                                         buckets=(.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30))
        self.connections = Gauge("fauxka_connections", "Open client connections", ["listener"], registry=r)
        self.closed_connections = Counter("fauxka_connections_closed_for_protocol_errors",
                                          "Connections closed because of a bad frame or request", ["reason"], registry=r)
        self.controller_active = Gauge("fauxka_controller_active", "1 while this broker is the controller",
                                       registry=r)
        self.controller_epoch = Gauge("fauxka_controller_epoch", "Controller epoch this broker last saw",
                                      registry=r)
        self.zk_session = Gauge("fauxka_zookeeper_session_state",
                                "1 for the current ZooKeeper session state", ["state"], registry=r)
        self.zk_requests = Gauge("fauxka_zookeeper_requests", "ZooKeeper requests sent since start, by kind "
                                 "(read, write, multi)", ["kind"], registry=r)
        self._server: Any = None

    def follow_zk_requests(self, counts: dict[str, int]) -> None:
        for kind in counts:
            self.zk_requests.labels(kind).set_function(lambda k=kind: counts[k])

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
