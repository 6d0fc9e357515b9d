"""A Fetch v12 answer written by fauxka/broker/protocol/fetch_writer.py is, byte for byte, kio's;
one with a tagged field to write is left to kio (through encode_response, the same bytes)."""

import io
import uuid

import pytest
from kio.serial import entity_writer as kio_entity_writer

from fauxka.broker.protocol import fetch_writer
from fauxka.broker.protocol.build import build
from fauxka.broker.protocol.codec import encode_response, response_schema


def _partition(index, **extra):
    entry = {"partition_index": index, "error_code": 0, "high_watermark": 10 * index, "last_stable_offset": 9 * index,
             "log_start_offset": index, "aborted_transactions": None, "preferred_read_replica": -1, "records": b""}
    entry.update(extra)
    return entry


def _answer(topics, throttle=0, error=0, session=0):
    return build(response_schema(1, 12), {
        "throttle_time": throttle, "error_code": error, "session_id": session,
        "responses": [{"topic": t, "topic_id": uuid.UUID(int=0), "partitions": ps} for t, ps in topics]})


PLAIN = [
    _answer([]),
    _answer([("t", [_partition(0)])], throttle=1500, error=0, session=2**31 - 1),
    _answer([("t", [_partition(0, records=b"x" * 300), _partition(1, records=None)]),
             ("é" * 80, [_partition(i, error_code=6, high_watermark=-1) for i in range(140)])]),
    _answer([("__transaction_state", [_partition(2, records=b"y" * 20000, aborted_transactions=[]),
                                      _partition(3, aborted_transactions=[{"producer_id": 2**62, "first_offset": 5},
                                                                          {"producer_id": -1, "first_offset": 0}])])],
            error=71),
]
TAGGED = [
    _answer([("t", [_partition(0), _partition(1, diverging_epoch={"epoch": 3, "end_offset": 40})])]),
    _answer([("t", [_partition(0, error_code=6, current_leader={"leader_id": 2, "leader_epoch": 7})])]),
]


def _kio(answer) -> bytes:
    buf = io.BytesIO()
    kio_entity_writer(type(answer))(buf, answer)
    return buf.getvalue()


@pytest.mark.parametrize("answer", PLAIN)
def test_the_body_is_kios(answer):
    buf = io.BytesIO()
    assert fetch_writer.write(buf, answer)
    assert buf.getvalue() == _kio(answer)
    assert encode_response(5, answer).endswith(buf.getvalue())


@pytest.mark.parametrize("answer", TAGGED)
def test_an_answer_with_a_tag_is_left_to_kio(answer):
    buf = io.BytesIO()
    assert not fetch_writer.write(buf, answer) and buf.getvalue() == b""
    assert encode_response(5, answer).endswith(_kio(answer))
