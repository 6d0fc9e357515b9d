"""The per-partition answer shared by the data plane's topic/partition apis (ListOffsets,
DeleteRecords, OffsetForLeaderEpoch): refused topics get TOPIC_AUTHORIZATION_FAILED, unknown ones
UNKNOWN_TOPIC_OR_PARTITION (KafkaApis checks in that order), the others what the replica
manager answers, or its KafkaError's code."""

from collections.abc import Callable, Iterable
from typing import Any

from fauxka.model.errors import ErrorCode, KafkaError

from ..context import RequestContext


def partition_results(ctx: RequestContext, allowed: bool, topic: str, partitions: Iterable[Any],
                      blank: Callable[[Any], dict], answer: Callable[[Any], dict]) -> list[dict]:
    """One entry per partition: `blank(p)` updated with `answer(p)` or an error code."""
    known = topic in ctx.cache.topics
    entries = []
    for p in partitions:
        entry = blank(p)
        if not allowed:
            entry["error_code"] = ErrorCode.topic_authorization_failed
        elif not known:
            entry["error_code"] = ErrorCode.unknown_topic_or_partition
        else:
            try:
                entry.update(answer(p))
            except KafkaError as exc:
                entry["error_code"] = exc.code
        entries.append(entry)
    return entries
