"""The pytest plugin (entry point `pytest11: fauxka`), loaded wherever fauxka is installed:

- `fauxka_zookeeper` (session): one ZooKeeper for the whole run, "host:port";
- `fauxka_cluster` (session): a 3-broker Cluster on it, started once; tests isolate themselves with
  `fauxka_cluster.unique_topic()`, and every test's faults are cleared after it;
- `fauxka_cluster_factory`: `make(brokers=3, overrides=None, own_zookeeper=False)` for a test that
  breaks its own cluster (stopped after the test; own_zookeeper for one that stops ZooKeeper).
Nothing starts unless a test asks for one of them. The clusters' brokers are forked by one
pre-forked interpreter (fauxka.starter.Starter) that imports the broker code while the session's
ZooKeeper starts: a cluster's start is then the brokers' own (ZooKeeper session, registration,
controller election), a few hundred ms.
"""

import pytest


@pytest.fixture(scope="session")
def fauxka_zookeeper(_fauxka_starter, tmp_path_factory):
    """The starter first: the broker code's import overlaps the JVM's start."""
    from fauxka import zookeeper
    from fauxka.ports import free_ports

    port = free_ports()
    process = zookeeper.start(tmp_path_factory.mktemp("fauxka-zookeeper"), port)
    try:
        import fauxka.probe  # noqa: F401  the clients' own imports (kio), while the JVM starts
        import fauxka.testing  # noqa: F401

        zookeeper.wait_serving("127.0.0.1", port, 60, process)
        _fauxka_starter.wait_ready()  # imported meanwhile, most often
        yield f"127.0.0.1:{port}"
    finally:
        process.kill()  # the session's: its data goes with it (a JVM's orderly exit took ~0.2 s)
        process.wait(10)


@pytest.fixture(scope="session")
def _fauxka_starter(tmp_path_factory):
    """The session's pre-forked interpreter (its brokers outlive it: their clusters stop them)."""
    from fauxka.starter import Starter

    starter = Starter(tmp_path_factory.mktemp("fauxka-starter") / "starter.log")
    yield starter
    starter.close()


@pytest.fixture(scope="session")
def _fauxka_session_cluster(fauxka_zookeeper, _fauxka_starter, tmp_path_factory):
    from fauxka.testing import Cluster

    cluster = Cluster(3, zookeeper=fauxka_zookeeper, data_dir=tmp_path_factory.mktemp("fauxka-cluster"),
                      starter=_fauxka_starter)
    cluster.start()
    yield cluster
    cluster.stop()


@pytest.fixture
def fauxka_cluster(_fauxka_session_cluster):
    """The session's cluster; the faults a test leaves behind are cleared after it."""
    yield _fauxka_session_cluster
    _fauxka_session_cluster.clear_faults()


@pytest.fixture
def fauxka_cluster_factory(fauxka_zookeeper, _fauxka_starter, tmp_path):
    from fauxka.testing import Cluster

    made = []

    def make(brokers: int = 3, overrides: dict[str, str] | None = None, own_zookeeper: bool = False):
        """own_zookeeper: a ZooKeeper of its own (stop_zookeeper / restart_zookeeper) instead of the session's."""
        cluster = Cluster(brokers, zookeeper=None if own_zookeeper else fauxka_zookeeper,
                          data_dir=tmp_path / f"fauxka-{len(made)}", overrides=overrides, starter=_fauxka_starter)
        made.append(cluster)
        return cluster.start()

    yield make
    for cluster in made:
        cluster.stop()
