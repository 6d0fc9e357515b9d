"""fauxka/storage/validator.py: Kafka's LogValidator rules as a leader append sees them."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fauxka.model.errors import ErrorCode
from fauxka.storage import batch as B
from fauxka.storage.config import LogConfig
from fauxka.storage.errors import StorageError
from fauxka.storage.validator import validate_follower, validate_leader
from tests.unit.storage.helpers import CODECS, legacy, now_ms, records_of, v2


def validate(data, config=None, offset=0, epoch=0, now=None):
    return validate_leader(data, config or LogConfig(), offset, epoch, now or now_ms(), "t-0")


def error_of(data, config=None, now=None) -> StorageError:
    with pytest.raises(StorageError) as info:
        validate(data, config, now=now)
    return info.value


@pytest.mark.parametrize("codec", CODECS.values(), ids=CODECS.keys())
def test_offsets_and_epoch_assigned_without_reencoding(codec):
    data = v2(4, codec)
    out = validate(data, offset=100, epoch=7)
    assert bytes(out.buffer[12:]) != data[12:] or True
    assert bytes(out.buffer[21:]) == data[21:]  # CRC-covered bytes untouched
    assert (out.first_offset, out.last_offset, out.record_count) == (100, 103, 4)
    assert B.BatchHeader(out.buffer).leader_epoch == 7
    assert [r[0] for r in records_of(bytes(out.buffer))] == [100, 101, 102, 103]


def test_bad_crc_is_corrupt_message():
    buf = bytearray(v2(3))
    buf[-2] ^= 1
    assert error_of(bytes(buf)).code == ErrorCode.corrupt_message


def test_length_that_lies_is_corrupt_message():
    buf = bytearray(v2(3))
    buf[8:12] = (len(buf) + 50 - 12).to_bytes(4, "big")
    assert error_of(bytes(buf)).code == ErrorCode.corrupt_message
    buf[8:12] = (10).to_bytes(4, "big")
    assert error_of(bytes(buf)).code == ErrorCode.corrupt_message
    assert error_of(bytes(buf[:15])).code == ErrorCode.corrupt_message


def test_count_that_disagrees_with_offsets_is_invalid_record():
    buf = bytearray(v2(3))
    buf[57:61] = (9).to_bytes(4, "big")
    B.recompute_crc(buf, 0, len(buf))
    assert error_of(bytes(buf)).code == ErrorCode.invalid_record


def test_uncompressed_count_beyond_what_the_bytes_can_hold_is_corrupt():
    """Without decoding: every record takes at least 7 bytes."""
    buf = bytearray(v2(2, values=[b"", b""], keys=[None, None]))
    n = (len(buf) - 61) // 7 + 1
    buf[57:61] = n.to_bytes(4, "big")
    buf[23:27] = (n - 1).to_bytes(4, "big")
    B.recompute_crc(buf, 0, len(buf))
    assert error_of(bytes(buf)).code == ErrorCode.corrupt_message


def test_count_that_lies_about_the_records_is_corrupt_on_a_compacted_topic():
    buf = bytearray(v2(3))
    buf[57:61] = (4).to_bytes(4, "big")
    buf[23:27] = (3).to_bytes(4, "big")
    B.recompute_crc(buf, 0, len(buf))
    config = LogConfig(cleanup_policy=frozenset({"compact"}))
    assert error_of(bytes(buf), config).code == ErrorCode.corrupt_message


def test_too_large_batch():
    data = v2(20)
    err = error_of(data, LogConfig(max_message_bytes=len(data) - 1))
    assert err.code == ErrorCode.message_too_large
    validate(data, LogConfig(max_message_bytes=len(data)))


def test_two_batches_in_one_produce_are_invalid():
    assert error_of(v2(1) + v2(1)).code == ErrorCode.invalid_record


def test_empty_records_are_invalid():
    assert error_of(b"").code == ErrorCode.invalid_record


def test_control_batch_from_a_client_is_invalid():
    buf = bytearray(v2(1, pid=5, epoch=0, seq=0))
    buf[21:23] = (B.CONTROL_MASK | B.TRANSACTIONAL_MASK).to_bytes(2, "big")
    B.recompute_crc(buf, 0, len(buf))
    assert error_of(bytes(buf)).code == ErrorCode.invalid_record


def test_keyless_records_on_compacted_topic_get_per_record_errors():
    config = LogConfig(cleanup_policy=frozenset({"compact"}))
    data = v2(4, 3, keys=[b"a", None, b"c", None])
    err = error_of(data, config)
    assert err.code == ErrorCode.invalid_record
    assert [i for i, _ in err.record_errors] == [1, 3]
    assert "Compacted topic cannot accept message without key" in err.record_errors[0][1]
    validate(v2(2, keys=[b"a", b"b"]), config)


def test_timestamp_out_of_range():
    config = LogConfig(message_timestamp_difference_max_ms=1000)
    now = now_ms()
    err = error_of(v2(2, ts=now - 5000), config, now=now)
    assert err.code == ErrorCode.invalid_timestamp
    assert [i for i, _ in err.record_errors] == [0, 1]
    validate(v2(2, ts=now - 500), config, now=now)


def test_log_append_time_topic_stamps_the_batch():
    now = now_ms()
    out = validate(v2(2, 2, ts=5), LogConfig(message_timestamp_type="LogAppendTime"), now=now)
    assert out.log_append_time == now
    assert [r[1] for r in records_of(bytes(out.buffer))] == [now, now]


@pytest.mark.parametrize("target", ["uncompressed", "gzip", "snappy", "lz4", "zstd"])
@pytest.mark.parametrize("source", CODECS.values(), ids=CODECS.keys())
def test_recompression_to_topic_codec(source, target):
    data = v2(3, source, pid=9, epoch=1, seq=4, headers=[("h", b"1")])
    out = validate(data, LogConfig(compression_type=target), offset=10)
    h = B.BatchHeader(out.buffer)
    assert h.codec == CODECS[target]
    assert (h.producer_id, h.producer_epoch, h.base_sequence) == (9, 1, 4)
    assert records_of(bytes(out.buffer)) == [
        (10 + r[0], r[1], r[2], r[3], r[4]) for r in records_of(data)
    ]
    if source == CODECS[target]:
        assert bytes(out.buffer[21:]) == data[21:]


@pytest.mark.parametrize(
    "magic,codec", [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (1, 3)]
)  # Kafka never had zstd before magic 2, nor lz4 at magic 0 as clients write it
def test_legacy_message_sets_become_one_v2_batch(magic, codec):
    ts = now_ms()
    out = validate(legacy(magic, 3, codec, ts=ts), offset=5)
    h = B.BatchHeader(out.buffer)
    assert h.magic == 2 and h.codec == codec and h.record_count == 3 and h.base_offset == 5
    recs = records_of(bytes(out.buffer))
    assert [(r[0], r[2], r[3]) for r in recs] == [(5 + i, f"k{i}".encode(), f"value-{i}".encode()) for i in range(3)]
    assert [r[1] for r in recs] == ([-1] * 3 if magic == 0 else [ts, ts + 1, ts + 2])


def test_legacy_converted_to_topic_codec_and_keys_checked():
    out = validate(legacy(1, 2, 1), LogConfig(compression_type="zstd"))
    assert B.BatchHeader(out.buffer).codec == 4
    err = error_of(legacy(1, 2, keys=[None, b"x"]), LogConfig(cleanup_policy=frozenset({"compact"})))
    assert err.code == ErrorCode.invalid_record and err.record_errors[0][0] == 0


def test_legacy_with_bad_crc_is_corrupt():
    buf = bytearray(legacy(1, 1))
    buf[-1] ^= 1
    assert error_of(bytes(buf)).code == ErrorCode.corrupt_message


def test_follower_keeps_offsets_and_drops_partial_tail():
    a = bytearray(v2(2))
    b = bytearray(v2(3, 3))
    B.set_base_offset(b, 0, 2)
    data = bytes(a + b) + bytes(b[:40])
    out = validate_follower(data, "t-0")
    assert [h.base_offset for h in out.headers] == [0, 2] and len(out.buffer) == len(a) + len(b)
    bad = bytearray(a)
    bad[-1] ^= 1
    with pytest.raises(StorageError):
        validate_follower(bytes(bad), "t-0")


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.binary(max_size=300), st.sampled_from(list(CODECS.values())), st.booleans())
def test_hostile_bytes_never_crash(noise, codec, compact):
    config = LogConfig(cleanup_policy=frozenset({"compact"}) if compact else frozenset({"delete"}))
    for data in (noise, v2(2, codec)[:61] + noise, legacy(1, 1)[:17] + noise):
        try:
            validate(data, config)
        except StorageError:
            pass
        try:
            validate_follower(data, "t-0", 0)
        except StorageError:
            pass


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.data())
def test_crc_valid_hostile_bodies_never_crash(data):
    """A hostile client can compute a CRC: record bytes that lie must still be refused cleanly."""
    codec = data.draw(st.sampled_from(list(CODECS.values())))
    buf = bytearray(v2(3, codec))
    for _ in range(data.draw(st.integers(1, 6))):
        i = data.draw(st.integers(21, len(buf) - 1))
        buf[i] = data.draw(st.integers(0, 255))
    B.recompute_crc(buf, 0, len(buf))
    config = LogConfig(cleanup_policy=frozenset({"compact"}), compression_type=data.draw(st.sampled_from(["producer", "gzip"])))
    try:
        validate(bytes(buf), config)
    except StorageError:
        pass


@pytest.mark.parametrize(
    "codec,compress",
    [
        (2, lambda b: __import__("cramjam").snappy.compress_raw(b)),  # librdkafka's raw snappy
        (3, lambda b: __import__("cramjam").lz4.compress(b)),
        (4, lambda b: __import__("cramjam").zstd.compress(b)),
        (1, lambda b: __import__("gzip").compress(b)),
    ],
    ids=["snappy-raw", "lz4-frame", "zstd", "gzip"],
)
def test_other_encoders_are_read_on_compacted_and_recompressing_topics(codec, compress):
    from tests.unit.storage.helpers import with_codec

    plain = v2(4, 0, headers=[("x", b"y")])
    data = with_codec(plain, codec, compress)
    config = LogConfig(cleanup_policy=frozenset({"compact"}), compression_type="uncompressed")
    out = validate(data, config)
    assert records_of(bytes(out.buffer)) == records_of(plain)
    assert B.BatchHeader(out.buffer).codec == 0


@pytest.mark.parametrize("magic,codec", [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)])
def test_kafka_python_batches(magic, codec):
    """kafka-python's builders (its gzip; its other codecs need libraries not installed)."""
    from kafka.record.memory_records import MemoryRecordsBuilder

    b = MemoryRecordsBuilder(magic, codec, 2**31 - 1)
    ts = now_ms()
    for i in range(3):
        b.append(ts + i, f"k{i}".encode(), f"v{i}".encode() * 50, [] if magic == 2 else None)
    b.close()
    out = validate(bytes(b.buffer()), offset=40)
    recs = records_of(bytes(out.buffer))
    assert [(r[0], r[2], r[3]) for r in recs] == [(40 + i, f"k{i}".encode(), f"v{i}".encode() * 50) for i in range(3)]
    assert B.BatchHeader(out.buffer).codec == codec


@pytest.mark.parametrize("topic_type", ["CreateTime", "LogAppendTime"])
def test_a_client_may_not_claim_log_append_time(topic_type):
    buf = bytearray(v2(3))
    B.set_max_timestamp(buf, 0, len(buf), True, now_ms())
    err = error_of(bytes(buf), LogConfig(message_timestamp_type=topic_type))
    assert err.code == ErrorCode.invalid_timestamp
    assert [i for i, _ in err.record_errors] == [0, 1, 2]
    assert "Producer should not set timestamp type to LogAppendTime" in err.record_errors[0][1]


def test_log_append_time_topic_ignores_create_time_bounds():
    config = LogConfig(message_timestamp_type="LogAppendTime", message_timestamp_difference_max_ms=10)
    assert validate(v2(2, ts=1), config).log_append_time > 0


def test_client_batch_must_start_at_offset_zero():
    buf = bytearray(v2(2))
    B.set_base_offset(buf, 0, 7)
    assert error_of(bytes(buf)).code == ErrorCode.invalid_record
