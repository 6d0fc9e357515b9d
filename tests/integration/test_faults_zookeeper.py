"""The cluster under faults (issue 5): ZooKeeper itself stops and comes back.

Through the fault kit: a cluster with a ZooKeeper of its own (the session one serves every other
test), stopped and started again on the same port and data directory (Cluster.stop_zookeeper /
start_zookeeper, as `fauxka terminate|restart zookeeper`).
"""

import asyncio
import time

import pytest

from fauxka import probe
from tests.admin_helpers import create_topics, topic_spec

SESSION_MS = 2000
SESSION_S = SESSION_MS / 1000


def _metadata(cluster, broker_id: int) -> probe.ClusterView:
    host, port = cluster.address(broker_id).rsplit(":", 1)
    return asyncio.run(probe.metadata(host, int(port), 5.0))


@pytest.mark.disruptive
@pytest.mark.parametrize("down_s", [1.0, SESSION_S * 3])
def test_brokers_survive_a_zookeeper_restart(fauxka_cluster_factory, down_s):
    """Down briefly and down for three session timeouts. Either way the sessions survive:
    ZooKeeper restores them from its data dir and restarts their timers, and the brokers
    reconnect within a second (on a loaded machine some may not, and register again). What breaks
    is every watch (kazoo does not send SetWatches on reconnect): the brokers re-arm them
    (fauxka/zkstore/store.py) or their caches would stop."""
    cluster = fauxka_cluster_factory(3, {"zookeeper.session.timeout.ms": str(SESSION_MS)}, own_zookeeper=True)
    before = cluster.unique_topic("before-zk-restart")
    [created] = create_topics(cluster.address(cluster.controller()), [topic_spec(before, 3, 2)])
    assert created.error_code == 0

    cluster.stop_zookeeper()
    time.sleep(down_s)  # how long it stays down: the fault, not a wait for a result
    assert all(cluster.alive(b) for b in cluster.broker_ids)
    cluster.start_zookeeper()
    restarted = time.monotonic()

    cluster.wait_for(lambda: cluster.registered() == {1, 2, 3}, SESSION_S + 10, what="every broker registered again")
    controller = cluster.wait_for(lambda: max(cluster.controller(), 0), SESSION_S + 10, what="a controller")
    for broker_id in cluster.broker_ids:
        cluster.wait_for(lambda: (v := _metadata(cluster, broker_id)).brokers == [1, 2, 3]
                         and before in v.topics and v.controller_id == controller,
                         SESSION_S + 10, what=f"broker {broker_id}'s Metadata converged")
    converged_s = time.monotonic() - restarted
    # The controller takes writes again, forwarded by another broker. On a loaded machine the
    # brokers may reconnect after the session timeout: a session expires, the controller moves,
    # and a write meeting that answers REQUEST_TIMED_OUT or NOT_CONTROLLER, which clients retry.
    # So do we (TOPIC_ALREADY_EXISTS: a timed-out attempt was written).
    after = cluster.unique_topic("after-zk-restart")

    def create_after():
        now = cluster.controller()
        other = next(b for b in cluster.broker_ids if b != now)
        codes = [int(r.error_code) for r in create_topics(cluster.address(other), [topic_spec(after, 2, 2)])]
        return codes in ([0], [36])

    cluster.wait_for(create_after, 30, what=f"{after} created")
    cluster.wait_for(lambda: all(after in _metadata(cluster, b).topics for b in cluster.broker_ids), 10,
                     what="the new topic everywhere")
    assert cluster.registered() == {1, 2, 3}
    assert all(cluster.alive(b) for b in cluster.broker_ids), "a broker exited"
    print(f"ZooKeeper down {down_s}s: converged {converged_s:.2f}s after its restart")
