"""Admin views of transactions on the shared cluster (issue 13): DescribeTransactions v0 at the
coordinator, ListTransactions v0 on every broker (state and producer id filters), DescribeProducers
v0 at the partition leader, while a confluent-kafka transaction is open and after it commits.
(No Python admin client has these apis; they are sent as kio requests.)"""

from tests.admin_helpers import create_topics, send, topic_spec, unique
from tests.data_helpers import leader_of
from tests.harness import wait_for


def _coordinator(cluster, tid: str) -> int:
    def found():
        r = send(cluster.bootstrap.split(",")[0], 10, 3, {"key": tid, "key_type": 1})
        return int(r.node_id) if int(r.error_code) == 0 else None
    return wait_for(found, 30, 0.2, "the transaction coordinator")


def _listed(cluster, **filters) -> dict[str, tuple[int, str]]:
    out = {}
    for broker_id in cluster.brokers:
        r = send(cluster.address_of(broker_id), 66, 0, {"state_filters": filters.get("states", ()),
                                                       "producer_id_filters": filters.get("pids", ())})
        assert int(r.error_code) == 0
        out.update({s.transactional_id: (int(s.producer_id), s.transaction_state) for s in r.transaction_states})
    return out


def _transactional(cluster, prefix: str, partitions: int):
    """(a new topic, a new transactional id, its initialized confluent-kafka producer)."""
    from confluent_kafka import Producer
    topic, tid = unique(prefix), unique("tid")
    [result] = create_topics(cluster.controller_address(), [topic_spec(topic, partitions, 3)])
    assert int(result.error_code) == 0
    p = Producer({"bootstrap.servers": cluster.bootstrap, "transactional.id": tid})
    p.init_transactions(60)
    return topic, tid, p


def test_describe_and_list_transactions_and_describe_producers(cluster):
    topic, tid, p = _transactional(cluster, "txa", 2)
    p.begin_transaction()
    p.produce(topic, b"x", partition=1)
    p.flush(30)
    coordinator = cluster.address_of(_coordinator(cluster, tid))
    [state] = send(coordinator, 65, 0, {"transactional_ids": [tid]}).transaction_states
    assert int(state.error_code) == 0 and state.transaction_state == "Ongoing"
    assert [(t.topic, list(t.partitions)) for t in state.topics] == [(topic, [1])]
    assert state.transaction_start_time.timestamp() > 0 and state.producer_epoch == 0
    pid = int(state.producer_id)
    assert _listed(cluster, states=["Ongoing"])[tid] == (pid, "Ongoing")
    assert tid not in _listed(cluster, states=["CompleteCommit"])
    assert list(_listed(cluster, pids=[pid])) == [tid]
    r = send(cluster.bootstrap.split(",")[0], 66, 0, {"state_filters": ["Bogus"], "producer_id_filters": ()})
    assert list(r.unknown_state_filters) == ["Bogus"]
    leader = cluster.address_of(leader_of(cluster, topic, 1))
    r = send(leader, 61, 0, {"topics": [{"name": topic, "partition_indexes": [1]}]})
    [part] = r.topics[0].partitions
    assert int(part.error_code) == 0
    [active] = [a for a in part.active_producers if int(a.producer_id) == pid]
    assert (active.producer_epoch, active.last_sequence, active.current_txn_start_offset) == (0, 0, 0)
    p.commit_transaction(30)
    wait_for(lambda: send(coordinator, 65, 0, {"transactional_ids": [tid]}).transaction_states[0].transaction_state
             == "CompleteCommit", 10, what="CompleteCommit")
    r = send(leader, 61, 0, {"topics": [{"name": topic, "partition_indexes": [1]}]})
    [active] = [a for a in r.topics[0].partitions[0].active_producers if int(a.producer_id) == pid]
    assert active.current_txn_start_offset == -1


def _metric(port: int, name: str) -> float:
    import urllib.request
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    return float(next((line.rsplit(" ", 1)[1] for line in text.splitlines() if line.startswith(name + " ")), "nan"))


def test_kafka_python_admin_describes_and_lists_transactions_and_kafkas_answer_for_unknown_ids(cluster):
    import pytest
    from kafka.admin import KafkaAdminClient
    from kafka.errors import TransactionalIdNotFoundError
    topic, tid, p = _transactional(cluster, "txk", 2)
    p.begin_transaction()
    p.produce(topic, b"x", partition=0)
    p.commit_transaction(30)
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap, request_timeout_ms=30000)
    try:
        def described():
            d = admin.describe_transactions([tid])[tid]
            return d if str(getattr(d.state, "value", d.state)) == "CompleteCommit" else None
        d = wait_for(described, 15, 0.2, "CompleteCommit through kafka-python")
        assert d.producer_epoch == 0 and d.transaction_start_time_ms > 0 and not d.topic_partitions
        listed = [t for per_broker in admin.list_transactions().values() for t in per_broker]
        assert tid in {t.transactional_id for t in listed}
        with pytest.raises(TransactionalIdNotFoundError):
            admin.describe_transactions([unique("unknown")])
    finally:
        admin.close()
    unknown = unique("unknown")
    address = cluster.address_of(_coordinator(cluster, unknown))
    [state] = send(address, 65, 0, {"transactional_ids": [unknown]}).transaction_states
    assert int(state.error_code) == 105  # TRANSACTIONAL_ID_NOT_FOUND, the rest at the generated defaults
    assert (state.transaction_state, state.transaction_timeout.total_seconds(), state.producer_id, state.producer_epoch,
            state.transaction_start_time.timestamp(), list(state.topics)) == ("", 0, 0, 0, 0, [])
    [empty] = send(address, 65, 0, {"transactional_ids": [""]}).transaction_states
    assert int(empty.error_code) == 42  # INVALID_REQUEST


def test_transaction_coordinator_metrics(cluster):
    topic, tid, p = _transactional(cluster, "txm", 1)
    port = cluster.brokers[_coordinator(cluster, tid)].metrics_port
    commits = _metric(port, 'fauxka_transactions_completed_total{result="commit"}')
    aborts = _metric(port, 'fauxka_transactions_completed_total{result="abort"}')
    markers = _metric(port, "fauxka_transaction_markers_seconds_count")
    for commit in (True, False):
        p.begin_transaction()
        p.produce(topic, b"x", partition=0)
        p.flush(30)  # the partition is added to the transaction (librdkafka aborts an empty one locally)
        p.commit_transaction(30) if commit else p.abort_transaction(30)
    wait_for(lambda: _metric(port, 'fauxka_transactions_completed_total{result="abort"}') == aborts + 1, 15, 0.2,
             "the abort counted")
    assert _metric(port, 'fauxka_transactions_completed_total{result="commit"}') == commits + 1
    assert _metric(port, "fauxka_transaction_markers_seconds_count") == markers + 2
    assert _metric(port, 'fauxka_transactions{state="CompleteAbort"}') >= 1
    assert _metric(port, 'fauxka_transaction_partitions{state="active"}') >= 1
    assert _metric(port, "kafka_server_transaction_coordinator_metrics_partition_load_time_max") >= 0
