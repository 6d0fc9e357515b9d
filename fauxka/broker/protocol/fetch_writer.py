"""The body of a Fetch v12 answer (what the brokers' followers fetch with) written with struct.

Every acks=all append costs its leader one such answer per follower (16 a transaction in
bench.transactions, one per ~10 offset commits). Encoding them through kio's field writers, even
with fast_writer.py's walk, was ~14% of a transaction coordinator's CPU there (cProfile): a check
and a call per field. Here a partition's fixed fields are one struct pack: 2-3x cheaper
in-process. An answer in which a partition has a tagged field to write (diverging_epoch,
current_leader, snapshot_id: a follower told to truncate, a fenced or moved leader) is left to
kio's writer (`write` returns False having written nothing). tests/unit/test_fetch_writer.py
checks the bytes against kio's.
"""

import struct
from typing import Any

from kio.schema.fetch.v12.response import FetchResponse, PartitionData

from .fast_writer import _uvarint

RESPONSE_CLASS = FetchResponse
_TAG_DEFAULTS = tuple((name, PartitionData.__dataclass_fields__[name].default)
                      for name in ("diverging_epoch", "current_leader", "snapshot_id"))
_TOP = struct.Struct(">ihi")  # throttle time ms, error code, session id
_PARTITION = struct.Struct(">ihqqq")  # index, error code, high watermark, last stable offset, log start
_ABORTED = struct.Struct(">qqb")  # producer id, first offset, its (empty) tag section
_I32 = struct.Struct(">i")
_NO_TAGS, _NULL = b"\x00", b"\x00"


def _tagless(response: Any) -> bool:
    for topic in response.responses:
        for p in topic.partitions:
            for name, default in _TAG_DEFAULTS:
                value = getattr(p, name)
                if value is not default and value != default:  # built without it: the default itself
                    return False
    return True


def write(buf, response: Any) -> bool:
    """Write the body of `response` (a FetchResponse v12) to `buf`; False, with nothing written,
    when a partition carries a tagged field (kio's writer handles those)."""
    if not _tagless(response):
        return False
    w = buf.write  # piece by piece: the records are not copied once more
    w(_TOP.pack(round(response.throttle_time.total_seconds() * 1000), response.error_code.value,
                response.session_id))
    w(_uvarint(len(response.responses) + 1))
    for topic in response.responses:
        name = topic.topic.encode()
        w(_uvarint(len(name) + 1))
        w(name)
        w(_uvarint(len(topic.partitions) + 1))
        for p in topic.partitions:
            w(_PARTITION.pack(p.partition_index, p.error_code.value, p.high_watermark, p.last_stable_offset,
                              p.log_start_offset))
            aborted = p.aborted_transactions
            if aborted is None:
                w(_NULL)
            else:
                w(_uvarint(len(aborted) + 1))
                for a in aborted:
                    w(_ABORTED.pack(a.producer_id, a.first_offset, 0))
            w(_I32.pack(p.preferred_read_replica))
            records = p.records
            if records is None:
                w(_NULL)
            else:
                w(_uvarint(len(records) + 1))
                w(records)
            w(_NO_TAGS)
        w(_NO_TAGS)
    w(_NO_TAGS)
    return True
