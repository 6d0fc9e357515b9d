"""Partition logs: the only package that opens files under `log.dirs`.

Synchronous and socket-free (no asyncio, no ZooKeeper). Batches are kept exactly as on the wire;
the broker patches what Kafka patches (base offset, partition leader epoch, LogAppendTime) and
never decodes records unless Kafka would (compacted topics, re-compression, magic 0/1).
"""
