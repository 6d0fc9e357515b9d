"""The controller's audit trail: one JSON line per admin write and resource, to `audit.log.file`
(else to the log), and to `audit.topic` through `sink` (fauxka/broker/audit_publisher.py sets it)."""

import json
import time
from dataclasses import dataclass, fields
from collections.abc import Callable
from typing import Any


@dataclass(frozen=True, slots=True)
class Caller:
    """Who asked: the (possibly forwarded) client, and through which broker."""

    principal: str
    client_address: str
    receiving_broker: int
    forwarded_by: int | None
    api: str
    api_version: int


_CALLER_FIELDS = tuple(f.name for f in fields(Caller))


class AuditLog:
    def __init__(self, path: str | None, log: Any):
        self._file = open(path, "a", buffering=1) if path else None
        self._log = log.bind(component="audit")
        self.sink: Callable[[bytes, bytes], None] | None = None  # (key: principal, value: the JSON line)

    def record(self, caller: Caller, *, resource_type: str, resource_name: str, action: str,
               validate_only: bool, error_code: int, error_message: str | None, latency_ms: float,
               **extra: Any) -> None:
        event = {
            "ts": round(time.time(), 6),
            **{name: getattr(caller, name) for name in _CALLER_FIELDS},  # asdict() deep-copies: slower
            "resource_type": resource_type,
            "resource_name": resource_name,
            "action": action,
            "validate_only": validate_only,
            "error_code": error_code,
            "error_message": error_message,
            "latency_ms": round(latency_ms, 3),
            **extra,
        }
        if self._file is not None or self.sink is not None:  # the log only repeats the trail at debug level
            line = json.dumps(event, separators=(",", ":"))
            if self._file is not None:
                self._file.write(line + "\n")
            if self.sink is not None:
                self.sink(caller.principal.encode(), line.encode())
            self._log.debug("audit", **event)
        else:
            self._log.info("audit", **event)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
