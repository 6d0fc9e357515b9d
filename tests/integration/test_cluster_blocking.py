"""Opt-in cluster-consistent blocking: an admin write completes only when every live
broker's metadata cache has applied it."""

import signal

from tests.admin_helpers import create_topics, errors, topic_spec, unique
from tests.harness import wait_for


def test_every_broker_knows_the_topic_when_the_create_returns(make_cluster):
    cluster = make_cluster(3, {"fauxka.admin.blocking": "cluster"})
    name = unique()
    assert errors(create_topics(cluster.controller_address(), [topic_spec(name, 3, 3)])) == [(name, 0, None)]
    for broker_id in cluster.brokers:  # no waiting: each cache already has it
        assert name in cluster.metadata(broker_id).topics


def test_a_broker_that_cannot_apply_makes_the_write_time_out_only_in_cluster_mode(make_cluster):
    for mode, expected in (("cluster", 7), ("local", 0)):
        cluster = make_cluster(3, {"fauxka.admin.blocking": mode})
        controller = cluster.controller_id()
        address = cluster.address_of(controller)
        frozen = next(b for b in cluster.brokers if b != controller)
        cluster.brokers[frozen].signal(signal.SIGSTOP)
        try:
            name = unique()
            # 1 s is shorter than the 2 s session: the frozen broker still counts as live
            [(_, code, _)] = errors(create_topics(address, [topic_spec(name, 1, 1)],
                                                  timeout_ms=1000))
            assert code == expected, mode
            assert cluster.zk_get(f"/brokers/topics/{name}") is not None
        finally:
            cluster.brokers[frozen].signal(signal.SIGCONT)
        cluster.stop()


def test_brokers_publish_the_version_they_applied(cluster):
    name = unique()
    create_topics(cluster.controller_address(), [topic_spec(name, 1, 1)])
    assert cluster.zk_get("/fauxka/metadata_version") is not None

    def all_caught_up():
        applied = [cluster.zk_get(f"/fauxka/applied/{b}") for b in cluster.brokers]
        return all(a is not None for a in applied) and len({int(a) for a in applied}) == 1
    wait_for(all_caught_up, 10, what="every broker publishing the same applied version")
