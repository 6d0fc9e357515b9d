"""Change counters for answers built from the metadata cache (the Metadata handler's per-topic
memo): a topic's counter moves on a ("topic"|"partition", topic, ...) event of the cache, the
global one when brokers (their endpoints, liveness) or the topics being deleted change. An answer
about a topic held with the pair it was built at is still right while the pair is unchanged."""


class ServedGenerations:
    def __init__(self) -> None:
        self._counter = 0
        self._global = 0
        self._topics: dict[str, int] = {}
        self.memo: dict = {}  # the Metadata handler's answers, kept with the cache they were built from

    def note(self, event: tuple) -> None:
        kind = event[0]
        if kind in ("topic", "partition"):
            self._counter += 1
            self._topics[event[1]] = self._counter
        elif kind in ("broker", "deleting"):
            self._counter += 1
            self._global = self._counter

    def of(self, topic: str) -> tuple[int, int]:
        """What an answer about `topic` depends on: (its last change, the last change of anything
        not about a topic). Equal pairs: the same answer."""
        return self._topics.get(topic, 0), self._global
