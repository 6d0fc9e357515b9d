"""Which __consumer_offsets partition holds a group: Utils.abs(groupId.hashCode) % partitions
(GroupMetadataManager.partitionFor), with Java's String.hashCode over UTF-16 code units.
Remembered per (group, partitions): every group request asks several times (dispatch's
ownership check, the status check, the append)."""

import functools


def java_string_hash(s: str) -> int:
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


@functools.lru_cache(maxsize=65536)
def partition_for(group_id: str, partitions: int) -> int:
    h = java_string_hash(group_id)
    return (0 if h == -(1 << 31) else abs(h)) % partitions
