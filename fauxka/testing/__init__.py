"""fauxka for your tests: a real cluster (ZooKeeper + broker processes) you can break on purpose.

    from fauxka.testing import Cluster
    with Cluster(brokers=3) as cluster:                # or the pytest fixture fauxka_cluster
        producer = Producer({"bootstrap.servers": cluster.bootstrap})
        with cluster.fault("error", api="produce", topic="orders", error="NOT_LEADER_OR_FOLLOWER", count=2):
            ...                                         # the fault is removed when the block ends
        cluster.wait_for(lambda: cluster.leader("orders", 0) == 2, timeout_s=10, what="leader moved")
"""

from fauxka.faults import FaultError, make_fault
from fauxka.model.faults import Fault

from .cluster import Cluster, wait_for


def __getattr__(name):  # chaos needs confluent-kafka (the chaos or test extra): imported when asked for
    if name in ("chaos", "run_chaos", "ChaosSession"):
        from . import chaos_api as module

        return getattr(module, name)
    raise AttributeError(name)


__all__ = ["ChaosSession", "Cluster", "Fault", "FaultError", "chaos", "make_fault", "run_chaos", "wait_for"]
