"""Which __consumer_offsets partition holds a group: Utils.abs(groupId.hashCode) % partitions
(GroupMetadataManager.partitionFor), with Java's String.hashCode over UTF-16 code units.
Remembered per (group, partitions): every group request asks several times (dispatch's
ownership check, the status check, the append)."""

import functools

from fauxka.model.java_hash import java_string_hash


@functools.lru_cache(maxsize=65536)
def partition_for(group_id: str, partitions: int) -> int:
    h = java_string_hash(group_id)
    return (0 if h == -(1 << 31) else abs(h)) % partitions
