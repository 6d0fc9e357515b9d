import pytest

from tests.harness import Cluster, ZooKeeperServer


def pytest_configure(config):
    """fauxka's pytest plugin (fauxka_cluster, ...) even where its pytest11 entry point is not loaded:
    a .venv installed before it existed, or PYTEST_DISABLE_PLUGIN_AUTOLOAD."""
    manager = config.pluginmanager
    if not manager.has_plugin("fauxka") and not manager.has_plugin("fauxka.pytest_plugin"):
        manager.import_plugin("fauxka.pytest_plugin")


@pytest.fixture(scope="session")
def zookeeper(tmp_path_factory):
    server = ZooKeeperServer(tmp_path_factory.mktemp("zookeeper"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def cluster(zookeeper, tmp_path_factory):
    """The shared 3-broker cluster for every test that does not break things."""
    shared = Cluster(zookeeper, tmp_path_factory.mktemp("shared-cluster"))
    shared.start()
    yield shared
    shared.stop()


@pytest.fixture
def make_cluster(zookeeper, tmp_path):
    """A private cluster for a test that kills, pauses or reconfigures brokers."""
    made: list[Cluster] = []

    def make(size: int = 3, overrides: dict[str, str] | None = None, start: bool = True,
             extra_listeners: dict[str, str] | None = None) -> Cluster:
        cluster = Cluster(zookeeper, tmp_path / f"cluster-{len(made)}", size, overrides, extra_listeners)
        made.append(cluster)
        if start:
            cluster.start()
        return cluster

    yield make
    for cluster in made:
        cluster.stop()


@pytest.fixture(scope="module")
def make_cluster_module(zookeeper, tmp_path_factory):
    """Like make_cluster, shared by the tests of one module (e.g. a fuzzer's target)."""
    made: list[Cluster] = []

    def make(size: int = 3, overrides: dict[str, str] | None = None) -> Cluster:
        cluster = Cluster(zookeeper, tmp_path_factory.mktemp("module-cluster"), size, overrides)
        made.append(cluster)
        cluster.start()
        return cluster

    yield make
    for cluster in made:
        cluster.stop()
