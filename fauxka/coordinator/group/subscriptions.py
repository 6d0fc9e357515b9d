"""The topics in a consumer's JoinGroup metadata (ConsumerProtocolSubscription v0-v3: int16 version,
array of topic strings, then user data and owned partitions we do not need)."""

import struct


def topics_of(metadata: bytes) -> set[str] | None:
    """The subscribed topics, or None when the bytes are not a ConsumerProtocolSubscription."""
    try:
        (version,) = struct.unpack_from(">h", metadata, 0)
        if version < 0:
            return None
        (count,) = struct.unpack_from(">i", metadata, 2)
        pos, topics = 6, set()
        for _ in range(count):
            (n,) = struct.unpack_from(">h", metadata, pos)
            topics.add(metadata[pos + 2:pos + 2 + n].decode())
            pos += 2 + n
        return topics
    except (struct.error, UnicodeDecodeError):
        return None
