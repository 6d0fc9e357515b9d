import pytest

from fauxka.storage.config import LogConfig
from fauxka.storage.log import PartitionLog


@pytest.fixture(params=["memory", "disk"])
def make_log(request, tmp_path):
    """A factory of empty logs, in memory and on disk."""

    def make(config: LogConfig | None = None, name: str = "t-0") -> PartitionLog:
        directory = None if request.param == "memory" else str(tmp_path / name)
        topic, _, partition = name.rpartition("-")
        return PartitionLog.load(topic, int(partition), config or LogConfig(), directory)

    return make
