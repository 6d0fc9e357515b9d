"""Kafka's __transaction_state record formats (transaction-coordinator/src/main/resources/common/
message/TransactionLog{Key,Value}.json, Kafka 3.9).

Key: int16 version 0, then TransactionalId (int16-length string). Value: int16 version, then
ProducerId int64, ProducerEpoch int16, TransactionTimeoutMs int32, TransactionStatus int8,
TransactionPartitions (nullable array of (Topic string, PartitionIds []int32); null when Empty),
TransactionLastUpdateTimestampMs int64, TransactionStartTimestampMs int64. Kafka 3.9 writes v0
(v1, flexible, only with transaction.version 1); reading accepts both. A null value is a tombstone
(transactional.id.expiration.ms removed the id).
"""

import struct
from dataclasses import dataclass, field

KEY_VERSION = 0
VALUE_VERSION = 0


@dataclass(slots=True)
class TxnLogValue:
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    status: int
    partitions: dict[str, list[int]] = field(default_factory=dict)
    last_update_ms: int = -1
    start_ms: int = -1


def _string(s: str) -> bytes:
    data = s.encode()
    return struct.pack(">h", len(data)) + data


def encode_key(transactional_id: str) -> bytes:
    return struct.pack(">h", KEY_VERSION) + _string(transactional_id)


def decode_key(data: bytes) -> str | None:
    """The transactional id, None for a key version this coordinator does not know."""
    (version,) = struct.unpack_from(">h", data, 0)
    if version != KEY_VERSION:
        return None
    (n,) = struct.unpack_from(">h", data, 2)
    return bytes(data[4:4 + n]).decode()


def encode_value(v: TxnLogValue) -> bytes:
    out = [struct.pack(">hqhib", VALUE_VERSION, v.producer_id, v.producer_epoch, v.timeout_ms, v.status)]
    if v.status == 0:  # Empty: TransactionLog.valueToBytes writes a null partition list
        out.append(struct.pack(">i", -1))
    else:
        out.append(struct.pack(">i", len(v.partitions)))
        for topic, ids in v.partitions.items():
            out.append(_string(topic) + struct.pack(f">i{len(ids)}i", len(ids), *ids))
    out.append(struct.pack(">qq", v.last_update_ms, v.start_ms))
    return b"".join(out)


class _Reader:
    def __init__(self, data: bytes, flexible: bool):
        self.data, self.pos, self.flexible = data, 0, flexible

    def take(self, fmt: str):
        values = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return values[0] if len(values) == 1 else values

    def uvarint(self) -> int:
        shift = value = 0
        while True:
            b = self.data[self.pos]
            self.pos += 1
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7

    def length(self) -> int:
        return self.uvarint() - 1 if self.flexible else self.take(">i")

    def string(self) -> str:
        n = self.uvarint() - 1 if self.flexible else self.take(">h")
        s = bytes(self.data[self.pos:self.pos + n]).decode()
        self.pos += n
        return s

    def skip_tags(self) -> None:
        if self.flexible:
            for _ in range(self.uvarint()):
                self.uvarint()
                self.pos += self.uvarint()


def decode_value(data: bytes) -> TxnLogValue:
    version = struct.unpack_from(">h", data, 0)[0]
    if version not in (0, 1):
        raise ValueError(f"Unknown version {version} from the transaction log message value")
    r = _Reader(data, version >= 1)
    r.pos = 2
    pid, epoch, timeout, status = r.take(">q"), r.take(">h"), r.take(">i"), r.take(">b")
    partitions: dict[str, list[int]] = {}
    count = r.length()
    for _ in range(max(count, 0)):
        topic = r.string()
        n = r.length()
        partitions[topic] = list(r.take(f">{n}i")) if n > 1 else ([r.take(">i")] if n == 1 else [])
        r.skip_tags()
    last_update, start = r.take(">q"), r.take(">q")
    return TxnLogValue(pid, epoch, timeout, status, partitions, last_update, start)
