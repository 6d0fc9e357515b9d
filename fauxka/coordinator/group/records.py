"""Kafka's __consumer_offsets record formats (group-coordinator/src/main/resources/common/message).

Keys start with an int16 version: 0/1 OffsetCommitKey (group, topic, partition), 2
GroupMetadataKey (group). Values start with an int16 version too; Kafka 3.x writes
OffsetCommitValue v3 (v1 when the commit carried an expire timestamp, OffsetCommit v2-v4's
retention time) and GroupMetadataValue v3 (MetadataVersion.offsetCommitValueVersion /
groupMetadataValueVersion). A null value is a tombstone: the offset or the group is deleted.
Reading accepts every version 0-4 (v4 is the first flexible one: compact strings, tagged fields).
"""

import functools
import struct
from dataclasses import dataclass, field

OFFSET_COMMIT_KEY_VERSION = 1
GROUP_METADATA_KEY_VERSION = 2
OFFSET_COMMIT_VALUE_VERSION = 3
GROUP_METADATA_VALUE_VERSION = 3


@dataclass(frozen=True, slots=True)
class OffsetKey:
    group: str
    topic: str
    partition: int


@dataclass(frozen=True, slots=True)
class GroupKey:
    group: str


@dataclass(slots=True)
class OffsetValue:
    offset: int
    leader_epoch: int = -1
    metadata: str = ""
    commit_timestamp: int = -1
    expire_timestamp: int = -1


@dataclass(slots=True)
class MemberValue:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout: int
    session_timeout: int
    subscription: bytes
    assignment: bytes


@dataclass(slots=True)
class GroupValue:
    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int = -1
    members: list[MemberValue] = field(default_factory=list)


class _Writer:
    def __init__(self, flexible: bool = False):
        self.parts: list[bytes] = []
        self.flexible = flexible

    def i16(self, v: int) -> None:
        self.parts.append(struct.pack(">h", v))

    def i32(self, v: int) -> None:
        self.parts.append(struct.pack(">i", v))

    def i64(self, v: int) -> None:
        self.parts.append(struct.pack(">q", v))

    def varint(self, v: int) -> None:
        out = bytearray()
        while v >= 0x80:
            out.append((v & 0x7F) | 0x80)
            v >>= 7
        out.append(v)
        self.parts.append(bytes(out))

    def blob(self, b: bytes | None, *, i32_length: bool = False) -> None:
        if self.flexible:
            self.varint(0 if b is None else len(b) + 1)
        elif b is None:
            self.parts.append(struct.pack(">i" if i32_length else ">h", -1))
        else:
            self.parts.append(struct.pack(">i" if i32_length else ">h", len(b)))
        if b is not None:
            self.parts.append(b)

    def string(self, s: str | None) -> None:
        self.blob(None if s is None else s.encode())

    def tags(self) -> None:
        if self.flexible:
            self.varint(0)

    def bytes(self) -> bytes:
        return b"".join(self.parts)


class _Reader:
    def __init__(self, buf: bytes):
        self.buf = memoryview(buf)
        self.pos = 0
        self.flexible = False

    def _unpack(self, fmt: str, size: int) -> int:
        if self.pos + size > len(self.buf):
            raise ValueError("record truncated")
        (v,) = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += size
        return v

    def i16(self) -> int:
        return self._unpack(">h", 2)

    def i32(self) -> int:
        return self._unpack(">i", 4)

    def i64(self) -> int:
        return self._unpack(">q", 8)

    def varint(self) -> int:
        shift = value = 0
        while True:
            b = self._unpack(">B", 1)
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7
            if shift > 28:
                raise ValueError("varint too long")

    def blob(self, *, i32_length: bool = False) -> bytes | None:
        if self.flexible:
            n = self.varint() - 1
        else:
            n = self.i32() if i32_length else self.i16()
        if n < 0:
            return None
        if self.pos + n > len(self.buf):
            raise ValueError("record truncated")
        out = bytes(self.buf[self.pos:self.pos + n])
        self.pos += n
        return out

    def string(self) -> str | None:
        b = self.blob()
        return None if b is None else b.decode()

    def skip_tags(self) -> None:
        if self.flexible:
            for _ in range(self.varint()):
                self.varint()
                n = self.varint()
                self.pos += n


@functools.lru_cache(maxsize=65536)
def encode_key(key: OffsetKey | GroupKey) -> bytes:
    """Remembered: a consumer commits the same partitions' keys again and again (keys are frozen)."""
    w = _Writer()
    if isinstance(key, OffsetKey):
        w.i16(OFFSET_COMMIT_KEY_VERSION)
        w.string(key.group)
        w.string(key.topic)
        w.i32(key.partition)
    else:
        w.i16(GROUP_METADATA_KEY_VERSION)
        w.string(key.group)
    return w.bytes()


def decode_key(buf: bytes) -> OffsetKey | GroupKey | None:
    """The key, or None for a key version this coordinator does not own (Kafka skips those)."""
    r = _Reader(buf)
    version = r.i16()
    if version in (0, 1):
        return OffsetKey(r.string() or "", r.string() or "", r.i32())
    if version == 2:
        return GroupKey(r.string() or "")
    return None


def encode_offset_value(value: OffsetValue) -> bytes:
    version = 1 if value.expire_timestamp != -1 else OFFSET_COMMIT_VALUE_VERSION
    w = _Writer()
    w.i16(version)
    w.i64(value.offset)
    if version >= 3:
        w.i32(value.leader_epoch)
    w.string(value.metadata)
    w.i64(value.commit_timestamp)
    if version == 1:
        w.i64(value.expire_timestamp)
    return w.bytes()


def decode_offset_value(buf: bytes) -> OffsetValue:
    r = _Reader(buf)
    version = r.i16()
    r.flexible = version >= 4
    offset = r.i64()
    epoch = r.i32() if version >= 3 else -1
    metadata = r.string() or ""
    commit = r.i64()
    expire = r.i64() if version == 1 else -1
    r.skip_tags()
    return OffsetValue(offset, epoch, metadata, commit, expire)


def encode_group_value(value: GroupValue) -> bytes:
    version = GROUP_METADATA_VALUE_VERSION
    w = _Writer()
    w.i16(version)
    w.string(value.protocol_type)
    w.i32(value.generation)
    w.string(value.protocol)
    w.string(value.leader)
    w.i64(value.current_state_timestamp)
    w.i32(len(value.members))
    for m in value.members:
        w.string(m.member_id)
        w.string(m.group_instance_id)
        w.string(m.client_id)
        w.string(m.client_host)
        w.i32(m.rebalance_timeout)
        w.i32(m.session_timeout)
        w.blob(m.subscription, i32_length=True)
        w.blob(m.assignment, i32_length=True)
    return w.bytes()


def decode_group_value(buf: bytes) -> GroupValue:
    r = _Reader(buf)
    version = r.i16()
    r.flexible = version >= 4
    protocol_type = r.string() or ""
    generation = r.i32()
    protocol = r.string()
    leader = r.string()
    timestamp = r.i64() if version >= 2 else -1
    count = r.varint() - 1 if r.flexible else r.i32()
    members = []
    for _ in range(max(count, 0)):
        member_id = r.string() or ""
        instance = r.string() if version >= 3 else None
        client_id = r.string() or ""
        client_host = r.string() or ""
        rebalance = r.i32() if version >= 1 else -1
        session = r.i32()
        subscription = r.blob(i32_length=True) or b""
        assignment = r.blob(i32_length=True) or b""
        r.skip_tags()
        members.append(MemberValue(member_id, instance, client_id, client_host, rebalance, session,
                                   subscription, assignment))
    r.skip_tags()
    return GroupValue(protocol_type, generation, protocol, leader, timestamp, members)
