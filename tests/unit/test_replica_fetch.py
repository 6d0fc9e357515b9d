"""The follower's Fetch v12 frame (fauxka/broker/protocol/replica_fetch.py) is, byte for byte, what
kio writes for the same request, and the leader's parser reads back what was meant."""

import pytest

from fauxka.broker.protocol.api_table import lookup
from fauxka.broker.protocol.build import build
from fauxka.broker.protocol.codec import decode_request, encode_request, request_schema
from fauxka.broker.protocol.replica_fetch import ReplicaFetch

CASES = [
    ReplicaFetch(2, 500, 1, 10 << 20, 0, 0, {"t": [(0, 3, 17, 2, 0, 1 << 20)]}, {}),
    ReplicaFetch(3, 500, 1, 10 << 20, 1234567, 9, {}, {}),  # an incremental fetch with nothing changed
    ReplicaFetch(1, 0, 0, 0x7FFFFFFF, 2**31 - 1, 2**31 - 1,
                 {"__transaction_state": [(i, 2**31 - 1, 2**63 - 1, -1, 2**62, 1) for i in range(200)],
                  "é" * 70: [(5, -1, 0, -1, -1, 0)]},
                 {"gone": [0, 7], "x" * 300: list(range(130))}),
]


def _kio(fetch: ReplicaFetch, correlation_id: int, client_id: str) -> bytes:
    return encode_request(build(request_schema(1, 12), {
        "cluster_id": None, "replica_id": fetch.replica_id, "max_wait": fetch.max_wait_ms,
        "min_bytes": fetch.min_bytes, "max_bytes": fetch.max_bytes, "isolation_level": 0,
        "session_id": fetch.session_id, "session_epoch": fetch.session_epoch, "rack_id": "",
        "topics": [{"topic": t, "partitions": [{
            "partition": p, "current_leader_epoch": e, "fetch_offset": o, "last_fetched_epoch": le,
            "log_start_offset": s, "partition_max_bytes": m} for p, e, o, le, s, m in ps]}
            for t, ps in fetch.topics.items()],
        "forgotten_topics_data": [{"topic": t, "partitions": ps} for t, ps in fetch.forgotten.items()],
    }), correlation_id, client_id)


@pytest.mark.parametrize("fetch", CASES)
@pytest.mark.parametrize("correlation_id, client_id", [(1, "fauxka-replica-fetcher-2"), (2**31 - 1, ""),
                                                         (77, "ü" * 200)])
def test_the_frame_is_kios(fetch, correlation_id, client_id):
    frame = fetch.encode(correlation_id, client_id)
    assert frame == _kio(fetch, correlation_id, client_id)
    request = decode_request(frame[4:], lookup(1), 12)
    assert request.header.correlation_id == correlation_id and request.header.client_id == client_id
    body = request.body
    assert (body.replica_id, body.session_id, body.session_epoch) == (
        fetch.replica_id, fetch.session_id, fetch.session_epoch)
    assert {t.topic: [(p.partition, p.fetch_offset) for p in t.partitions] for t in body.topics} == {
        t: [(p[0], p[2]) for p in ps] for t, ps in fetch.topics.items()}
