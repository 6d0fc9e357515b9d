"""Which partition of its internal topic holds a key, for both coordinators: a group's
__consumer_offsets partition or a transactional id's __transaction_state one,
Utils.abs(key.hashCode) % partitions (GroupMetadataManager.partitionFor,
TransactionStateManager.partitionFor), with Java's String.hashCode over UTF-16 code units.
Remembered per (key, partitions): every request asks several times (dispatch's ownership check,
the status check, the append)."""

import functools

from fauxka.model.java_hash import java_string_hash


@functools.lru_cache(maxsize=65536)
def partition_for(key: str, partitions: int) -> int:
    h = java_string_hash(key)
    return (0 if h == -(1 << 31) else abs(h)) % partitions
