"""Partition logs: the only package that opens files under `log.dirs`.

Synchronous and socket-free (no asyncio, no ZooKeeper, not thread-safe: one thread calls it).
Batches are kept exactly as on the wire; the broker patches what Kafka patches (base offset,
partition leader epoch, LogAppendTime) and decodes records only where Kafka must (compacted
topics, re-compression, magic 0/1 conversion, timestamp lookups, the cleaner).

    log_manager.py   LogManager: the logs of the replicas a broker holds; load/recovery,
                     checkpoints, meta.properties, retention and cleaner passes
    log.py           PartitionLog (Kafka's UnifiedLog): append as leader/follower, read,
                     offsets, truncation, epochs, producer state
    validator.py     Kafka's LogValidator over batch headers; records.py decodes and builds
                     records (aiokafka's record module, cramjam codecs) where needed
    batch.py         the RecordBatch v2 header view, CRC32C, in-place patches
    segment.py       a `<base offset>.log` segment and its in-memory sparse indexes
    store.py         file or memory bytes; epoch_cache.py, producer_state.py, checkpoint.py,
                     retention.py, cleaner.py: the rest of Kafka's log machinery
"""
