from fauxka.coordinator.partitioner import java_string_hash, partition_for
from fauxka.coordinator.group.records import (GroupKey, GroupValue, MemberValue, OffsetKey, OffsetValue, decode_group_value,
                                       decode_key, decode_offset_value, encode_group_value, encode_key,
                                       encode_offset_value)


def test_java_string_hash_matches_java():
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("") == 0
    assert java_string_hash("polygenelubricants") == -(2**31)  # Integer.MIN_VALUE: Utils.abs gives 0
    assert partition_for("polygenelubricants", 50) == 0
    assert java_string_hash("\u00e9t\u00e9") == 0xE9 * 961 + 0x74 * 31 + 0xE9


def test_partition_for_is_abs_mod():
    h = java_string_hash("my-group")
    assert partition_for("my-group", 50) == abs(h) % 50


def test_offset_commit_key_bytes_are_kafkas():
    assert encode_key(OffsetKey("g", "t", 3)) == b"\x00\x01" + b"\x00\x01g" + b"\x00\x01t" + b"\x00\x00\x00\x03"
    assert decode_key(encode_key(OffsetKey("g", "t", 3))) == OffsetKey("g", "t", 3)
    assert encode_key(GroupKey("grp")) == b"\x00\x02\x00\x03grp"
    assert decode_key(b"\x00\x02\x00\x03grp") == GroupKey("grp")
    assert decode_key(b"\x00\x05\x00\x00") is None  # a transaction-log or unknown key version


def test_offset_value_v3_and_v1():
    v3 = encode_offset_value(OffsetValue(42, 7, "meta", 1000))
    assert v3[:2] == b"\x00\x03"
    assert v3 == b"\x00\x03" + (42).to_bytes(8, "big") + (7).to_bytes(4, "big") + b"\x00\x04meta" + \
        (1000).to_bytes(8, "big")
    assert decode_offset_value(v3) == OffsetValue(42, 7, "meta", 1000, -1)
    v1 = encode_offset_value(OffsetValue(42, -1, "", 1000, 5000))
    assert v1[:2] == b"\x00\x01"
    assert decode_offset_value(v1) == OffsetValue(42, -1, "", 1000, 5000)


def test_offset_value_v4_flexible_is_read():
    raw = b"\x00\x04" + (9).to_bytes(8, "big") + (2).to_bytes(4, "big") + b"\x03ab" + (5).to_bytes(8, "big") + b"\x00"
    assert decode_offset_value(raw) == OffsetValue(9, 2, "ab", 5, -1)


def test_group_value_v3_round_trip():
    value = GroupValue("consumer", 4, "range", "m1", 123,
                       [MemberValue("m1", "i1", "c", "/1.2.3.4", 300000, 10000, b"sub", b"asg"),
                        MemberValue("m2", None, "c", "/1.2.3.4", 300000, 10000, b"", b"")])
    raw = encode_group_value(value)
    assert raw[:2] == b"\x00\x03"
    assert decode_group_value(raw) == value
