"""The replica manager's log lines for role changes: one INFO line per batch (a LeaderAndIsr, a
topic created, a broker's leaderships moved: whatever one turn of the event loop applied) saying
how many partitions and naming the first few, each partition's own line at DEBUG. A JSON line per
partition at INFO cost about as much as the role change itself when thousands move at once."""

import asyncio
from typing import Any

from ..logs import enabled

NAMED = 10  # partitions named in a summary line


class RoleLog:
    def __init__(self, log: Any):
        self._log = log
        self._pending: dict[str, list[str]] = {}

    def note(self, event: str, topic: str, partition: int, **fields: Any) -> None:
        if enabled("debug"):
            self._log.debug(event, topic=topic, partition=partition, **fields)
        if not enabled("info"):
            return
        first = not self._pending
        self._pending.setdefault(event, []).append(f"{topic}-{partition}")
        if first:
            try:
                asyncio.get_running_loop().call_soon(self.flush)
            except RuntimeError:  # no event loop (a unit test): at once
                self.flush()

    def flush(self) -> None:
        pending, self._pending = self._pending, {}
        for event, names in pending.items():
            self._log.info(event, partitions=len(names), first=names[:NAMED])
