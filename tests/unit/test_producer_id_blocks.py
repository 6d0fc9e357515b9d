"""/latest_producer_id_block in Kafka's JSON layout, and the block after the last one."""

import json

import pytest

from fauxka.controller.producer_ids import next_block
from fauxka.model.errors import KafkaError
from fauxka.zkstore import paths as zp


def test_blocks_follow_each_other_in_thousands():
    first = next_block(None, 3)
    assert (first.broker, first.block_start, first.block_end) == (3, 0, 999)
    second = next_block(first, 1)
    assert (second.broker, second.block_start, second.block_end) == (1, 1000, 1999)


def test_znode_json_is_kafkas_with_string_bounds():
    data = zp.encode_producer_id_block(zp.ProducerIdBlock(2, 1000, 1999))
    assert json.loads(data) == {"version": 1, "broker": 2, "block_start": "1000", "block_end": "1999"}
    assert zp.decode_producer_id_block(data) == zp.ProducerIdBlock(2, 1000, 1999)
    assert zp.decode_producer_id_block(b"") is None  # as Kafka creates it at start-up
    assert zp.decode_producer_id_block(b'{"version":1,"broker":1,"block_start":5,"block_end":6}').block_end == 6


def test_exhausted_ids_are_an_error():
    with pytest.raises(KafkaError):
        next_block(zp.ProducerIdBlock(1, 2**63 - 1000, 2**63 - 1), 1)


def test_partition_state_carries_its_znode_version_outside_the_json():
    state = zp.decode_partition_state(zp.encode_partition_state(zp.PartitionState(1, 2, 3, [1, 2], 9)), 9)
    assert state.zk_version == 9 and "zk_version" not in json.loads(zp.encode_partition_state(state))
