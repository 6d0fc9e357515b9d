"""The broker process's own Kafka MBeans, as the JMX exporter with Strimzi's rules names them
(fauxka/broker/kafka_exposition.py; docs/kafka-metrics.md lists every name):

- kafka.server:type=KafkaServer,name=BrokerState (3 RUNNING, 7 SHUTTING_DOWN) and
  linux-disk-read-bytes / linux-disk-write-bytes (this process's /proc/self/io, as Kafka reads it);
- kafka.network:type=SocketServer,name=NetworkProcessorAvgIdlePercent and
  kafka.server:type=KafkaRequestHandlerPool,name=RequestHandlerAvgIdlePercent (its MeanRate): one
  event loop is both Kafka's network processor and its request handler, so both are the loop
  thread's idle fraction (1 - its CPU time over wall time): since the previous scrape for the
  network processor's gauge, since start for the handler pool's mean rate;
- kafka.server:type=ZooKeeperClientMetrics,name=ZooKeeperRequestLatencyMs (each ZooKeeper request's
  round trip) and kafka.server:type=SessionExpireListener,name=ZooKeeper{SyncConnects,Disconnects,
  Expires}PerSec (the session's state changes);
- kafka.server:type=ForwardingManager QueueLength and QueueTimeMs.p99/.p999, RemoteTimeMs.p99/.p999
  (KIP-938). Strimzi's rules export no bean without a `name=` key in kafka.server, so these are named
  as the exporter names what a catch-all rule (`- pattern: ".*"`) admits:
  kafka_server_forwardingmanager_queuetimems_p99;
- kafka.log:type=LogManager,name=OfflineLogDirectoryCount: the fault kit's `storage` faults in force
  on this broker (each fails a log dir, as a full disk does), at most the number of log.dirs.
"""

import threading
import time
from collections.abc import Callable
from typing import Any

from .kafka_exposition import Collector, Samples, gauge, histogram, meters

RUNNING, SHUTTING_DOWN = 3, 7  # Kafka's BrokerState values
_SESSION_METERS = {"connected": "zookeepersyncconnects", "suspended": "zookeeperdisconnects",
                   "lost": "zookeeperexpires"}
_FORWARDING_PERCENTILES = (("p99", 0.99), ("p999", 0.999))


class ServerMetrics(Collector):
    def __init__(self, registry: Any) -> None:
        self.broker_state = 0  # NOT_RUNNING until the broker serves
        self.zk_latency = Samples()
        self.session_events = dict.fromkeys(_SESSION_METERS.values(), 0)
        self.forward_queue_ms = Samples()
        self.forward_remote_ms = Samples()
        self.forward_queue_length = 0
        self.offline_log_dirs: Callable[[], int] = lambda: 0  # LogManager OfflineLogDirectoryCount
        self._loop_clock: int | None = None
        self._started = (time.monotonic(), 0.0)
        self._last = self._started
        registry.register(self)

    def session_state(self, state: str) -> None:
        """The ZooKeeper session's new state (connected, suspended, lost), counted as Kafka's meters."""
        meter = _SESSION_METERS.get(state)
        if meter is not None:
            self.session_events[meter] += 1

    def serving(self) -> None:
        """Called on the event loop's thread once the broker serves: the thread whose idleness is measured."""
        self.broker_state = RUNNING
        try:
            self._loop_clock = time.pthread_getcpuclockid(threading.get_ident())
        except (AttributeError, OSError):  # not on Linux: no idle gauges
            return
        self._started = self._last = (time.monotonic(), time.clock_gettime(self._loop_clock))

    def _idle(self) -> tuple[float, float] | None:
        """(idle fraction since the previous scrape, since start) of the event loop's thread."""
        if self._loop_clock is None:
            return None
        now = (time.monotonic(), time.clock_gettime(self._loop_clock))
        last, self._last = self._last, now

        def fraction(since: tuple[float, float]) -> float:
            wall = now[0] - since[0]
            return min(max(1 - (now[1] - since[1]) / wall, 0.0), 1.0) if wall > 0 else 1.0

        return fraction(last), fraction(self._started)

    def collect(self):
        yield gauge("kafka_server_kafkaserver_brokerstate", "KafkaServer BrokerState (3 RUNNING)", self.broker_state)
        io = _process_io()
        if io:
            for field in ("read_bytes", "write_bytes"):
                yield gauge(f"kafka_server_kafkaserver_linux_disk_{field}", f"KafkaServer linux-disk-{field.replace('_', '-')}"
                            " (/proc/self/io)", io.get(field, 0))
        idle = self._idle()
        if idle is not None:
            yield gauge("kafka_network_socketserver_networkprocessoravgidle_percent", "SocketServer "
                        "NetworkProcessorAvgIdlePercent: the event loop thread's idle fraction since the last scrape",
                        idle[0])
            yield gauge("kafka_server_kafkarequesthandlerpool_requesthandleravgidle_percent", "KafkaRequestHandlerPool "
                        "RequestHandlerAvgIdlePercent MeanRate: the event loop thread's idle fraction since start", idle[1])
        yield gauge("kafka_log_logmanager_offlinelogdirectorycount", "LogManager OfflineLogDirectoryCount: log dirs "
                    "failed (the fault kit's `storage` faults on this broker)", self.offline_log_dirs())
        yield from histogram("kafka_server_zookeeperclientmetrics_zookeeperrequestlatencyms", "ZooKeeperClientMetrics "
                             "ZooKeeperRequestLatencyMs: ZooKeeper round trips, ms", [], [([], self.zk_latency)])
        for meter, count in list(self.session_events.items()):
            yield meters(f"kafka_server_sessionexpirelistener_{meter}", f"SessionExpireListener {meter}PerSec",
                         [({}, count)])
        yield gauge("kafka_server_forwardingmanager_queuelength", "ForwardingManager QueueLength: forwards waiting "
                    "for a channel to the controller", self.forward_queue_length)
        for name, samples in (("queuetimems", self.forward_queue_ms), ("remotetimems", self.forward_remote_ms)):
            for suffix, value in samples.percentiles(_FORWARDING_PERCENTILES):
                yield gauge(f"kafka_server_forwardingmanager_{name}_{suffix}", f"ForwardingManager {name} {suffix}, ms",
                            value)


def _process_io() -> dict[str, int]:
    """/proc/self/io's counters (Kafka's LinuxIoMetricsCollector reads the same file); {} elsewhere."""
    try:
        with open("/proc/self/io") as f:
            return {k: int(v) for k, v in (line.split(": ") for line in f if ": " in line)}
    except (OSError, ValueError):
        return {}
