"""acks=all Produces pipelined on one connection (fauxka/broker/server.py): while one waits for its
followers, the connection reads and appends the next Produce, and every answer still comes back
in the order the requests were sent, a request of another api only after them.

The follower is paused (SIGSTOP), so the first Produce cannot be acknowledged until it resumes:
the second one's append is visible in the leader's log end offset meanwhile only if the leader
read on. Session and lag timeouts are long, so nothing else can end the wait.
"""

import asyncio
import signal
import urllib.request

from fauxka.broker.protocol.build import build
from fauxka.broker.protocol.codec import decode_response, encode_request, request_schema
from fauxka.broker.protocol.framing import read_frame
from tests.admin_helpers import create_topics, topic_spec, unique
from tests.data_helpers import batch, produce
from tests.harness import wait_for

PATIENT = {"zookeeper.session.timeout.ms": "30000", "replica.lag.time.max.ms": "30000"}


def log_end_offset(cluster, broker_id: int, topic: str) -> float:
    port = cluster.brokers[broker_id].metrics_port
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    for line in text.splitlines():
        if line.startswith(f'kafka_log_log_logendoffset{{partition="0",topic="{topic}"}}'):
            return float(line.rsplit(" ", 1)[1])
    return -1.0


def _produce_request(topic: str, value: bytes):
    return build(request_schema(0, 9), {"transactional_id": None, "acks": -1, "timeout": 60000, "topic_data": [
        {"name": topic, "partition_data": [{"index": 0, "records": batch([value])}]}]})


def test_acks_all_produces_append_while_earlier_ones_wait_and_answer_in_order(make_cluster):
    cluster = make_cluster(2, PATIENT)
    topic = unique("pipe")
    leader, follower = 1, 2
    [result] = create_topics(cluster.controller_address(), [topic_spec(topic, assignments={0: [leader, follower]})])
    assert int(result.error_code) == 0, result
    # in sync: an acks=all record is acknowledged once the follower has it
    wait_for(lambda: int(produce(cluster.address_of(leader), topic, 0, batch([b"warm"]))[0].error_code) == 0, 30,
             what="a first acks=all produce")
    host, port = cluster.brokers[leader].address
    requests = [_produce_request(topic, b"first"), _produce_request(topic, b"second"),
                build(request_schema(3, 12), {"topics": [{"name": topic, "topic_id": None}],
                                              "allow_auto_topic_creation": False,
                                              "include_topic_authorized_operations": False})]

    async def scenario():
        reader, writer = await asyncio.open_connection(host, port)
        try:
            cluster.brokers[follower].signal(signal.SIGSTOP)
            try:
                for correlation_id, request in enumerate(requests, 1):
                    writer.write(encode_request(request, correlation_id, "pipelining-test"))
                await writer.drain()
                # both records appended while the first still waits for the paused follower
                await asyncio.to_thread(wait_for, lambda: log_end_offset(cluster, leader, topic) == 3, 30,
                                        what="the second Produce appended while the first waits")
                early = asyncio.ensure_future(read_frame(reader, 1 << 20))
                done, _ = await asyncio.wait({early}, timeout=0.2)
                assert not done, "a Produce was answered before its follower had the record"
            finally:
                cluster.brokers[follower].signal(signal.SIGCONT)
            frames = [await asyncio.wait_for(early, 60)]
            frames += [await asyncio.wait_for(read_frame(reader, 1 << 20), 60) for _ in requests[1:]]
        finally:
            writer.close()
        return [decode_response(frame, type(request)) for frame, request in zip(frames, requests)]

    answers = asyncio.run(scenario())
    assert [correlation_id for correlation_id, _ in answers] == [1, 2, 3]
    first, second = (answer.responses[0].partition_responses[0] for _, answer in answers[:2])
    assert (int(first.error_code), first.base_offset) == (0, 1)
    assert (int(second.error_code), second.base_offset) == (0, 2)
    assert answers[2][1].topics[0].partitions[0].leader_id == leader
