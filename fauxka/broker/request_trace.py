"""The request trace: one JSON line per request this broker answers, to `fauxka.trace.file`, while
ZooKeeper's /fauxka/trace exists (`fauxka trace on|off`, fauxka.testing's Cluster.tracing()), so a
test can assert what its client sent: api, version, client id, principal, the partitions named, the
error codes answered (every error code of the response, as Kafka's AbstractResponse.errorCounts),
the fault that hit it, and the latency. Recorded by fauxka/broker/fault_injection.py, in dispatch."""

import json
import time
from typing import Any

from fauxka.zkstore import ZkStore
from fauxka.zkstore import paths as zp
from fauxka.zkstore.watch_set import WatchSet

from .protocol.build import error_codes


class RequestTrace:
    def __init__(self, zk: ZkStore, path: str, on_switch=lambda: None):
        self._on_switched = on_switch
        self._path = path  # fauxka.trace.file ("": never traced)
        self._file = None
        self._watches = WatchSet(zk)
        self.enabled = False

    def start(self) -> None:
        if self._path:
            self._watches.add("data", zp.TRACE, self._on_switch)

    def stop(self) -> None:
        self._watches.cancel_all()
        self.enabled = False
        if self._file is not None:
            self._file.close()
            self._file = None

    def _on_switch(self, got) -> None:
        self.enabled = got is not None
        if self.enabled and self._file is None:
            self._file = open(self._path, "a", buffering=1)
        self._on_switched()

    def record(self, ctx, facts, response: Any, fault_id: str | None, started: float) -> None:
        if not self.enabled or self._file is None:
            return
        if response is None:
            errors = []  # no response (acks=0, a closed connection)
        elif isinstance(response, bytes):
            errors = None  # the controller's answer, passed through (forwarded)
        else:
            errors = sorted(error_codes(response))
        request = ctx.request
        entry = {"ts": round(time.time(), 6), "broker": facts.broker, "api": request.api.name,
                 "api_key": facts.api_key, "version": facts.version, "client_id": facts.client_id,
                 "principal": facts.principal, "correlation_id": request.correlation_id,
                 "partitions": [list(tp) for tp in facts.partitions], "errors": errors,
                 "responded": response is not None, "fault": fault_id,
                 "latency_ms": round((time.perf_counter() - started) * 1000, 3)}
        if facts.replica_id >= 0:
            entry["replica_id"] = facts.replica_id
        self._file.write(json.dumps(entry, separators=(",", ":")) + "\n")
