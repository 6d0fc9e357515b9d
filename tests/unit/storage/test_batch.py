"""fauxka/storage/batch.py: the v2 header view and in-place patching, over batches real clients build."""

import pytest

from fauxka.storage import batch as B
from tests.unit.storage.helpers import CODECS, batch_of, kafka_python_v2, records_of, v2


@pytest.mark.parametrize("codec", CODECS.values(), ids=CODECS.keys())
def test_header_fields_from_aiokafka(codec):
    data = v2(5, codec, pid=42, epoch=3, seq=10, ts=1_700_000_000_000)
    h = B.BatchHeader(data)
    assert (h.base_offset, h.magic, h.codec, h.record_count) == (0, 2, codec, 5)
    assert (h.producer_id, h.producer_epoch, h.base_sequence, h.last_sequence) == (42, 3, 10, 14)
    assert h.size == len(data) and h.last_offset_delta == 4 and h.next_offset == 5
    assert (h.first_timestamp, h.max_timestamp) == (1_700_000_000_000, 1_700_000_000_004)
    assert h.crc_ok(data) and not h.is_control and not h.is_transactional


@pytest.mark.parametrize("codec", [0, 1], ids=["uncompressed", "gzip"])
def test_header_fields_from_kafka_python(codec):
    data = kafka_python_v2(4, codec)
    h = B.BatchHeader(data)
    assert h.crc_ok(data) and h.record_count == 4 and h.codec == codec and not h.has_producer_id


@pytest.mark.parametrize("codec", CODECS.values(), ids=CODECS.keys())
def test_patching_offset_and_epoch_keeps_crc(codec):
    buf = bytearray(v2(3, codec))
    B.set_base_offset(buf, 0, 1_000_000)
    B.set_leader_epoch(buf, 0, 17)
    h = B.BatchHeader(buf)
    assert h.crc_ok(buf) and h.base_offset == 1_000_000 and h.leader_epoch == 17
    assert batch_of(bytes(buf)).validate_crc()
    assert [r[0] for r in records_of(bytes(buf))] == [1_000_000, 1_000_001, 1_000_002]


@pytest.mark.parametrize("codec", CODECS.values(), ids=CODECS.keys())
def test_log_append_time_rewrites_crc(codec):
    buf = bytearray(v2(3, codec, ts=1000))
    B.set_max_timestamp(buf, 0, len(buf), True, 5555)
    h = B.BatchHeader(buf)
    assert h.log_append_time and h.max_timestamp == 5555 and h.crc_ok(buf)
    assert [r[1] for r in records_of(bytes(buf))] == [5555, 5555, 5555]


def test_crc_detects_a_flipped_byte():
    buf = bytearray(v2(3))
    buf[-1] ^= 0xFF
    assert not B.BatchHeader(buf).crc_ok(buf)


def test_iter_headers_stops_at_partial_batch():
    one = v2(2)
    data = one + one + one[:30]
    assert len(list(B.iter_headers(data))) == 2
    assert B.peek_size(data, len(data) - 5) is None
