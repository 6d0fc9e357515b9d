"""The coordinator runtime's own tasks: its housekeeping runs on its interval, survives a failed
pass (logged), and close() cancels it together with a load still in progress."""

import asyncio
import itertools

from fauxka.coordinator.runtime import CoordinatorRuntime
from fauxka.model.errors import ErrorCode
from tests.unit.coordinator.test_group_runtime import Host, until


class EndlessHost(Host):
    """A partition whose log the load never reaches the end of (it yields every 1000 records)."""

    def read_records(self, topic, partition):
        return itertools.repeat((b"k", b"v"))


class Log:
    def __init__(self):
        self.failures: list[str] = []

    def exception(self, event, **fields):
        self.failures.append(event)

    def info(self, event, **fields):
        pass


class Shard:
    def __init__(self):
        self.replayed = 0
        self.unloaded: list[int] = []

    def replay_record(self, partition, key, value, producer_id=-1, marker=None):
        self.replayed += 1

    def partition_loaded(self, partition):
        return {}

    def partition_unloaded(self, partition):
        self.unloaded.append(partition)


def test_housekeeping_survives_a_failed_pass_and_close_cancels_it_and_a_load():
    async def body():
        host, log, shard = EndlessHost(), Log(), Shard()
        runtime = CoordinatorRuntime("__t", host, 1, append_timeout_ms=1000, log=log)
        runtime.serve(shard)
        passes = []

        async def work():
            passes.append(len(passes))
            if len(passes) == 1:
                raise RuntimeError("the first pass fails")
        runtime.every(1, work, "housekeeping", "housekeeping failed")
        await until(lambda: len(passes) >= 3)
        assert log.failures == ["housekeeping failed"]  # logged once, and the next passes ran
        host.epochs[0] = 1
        runtime.became_leader(0, 1)
        await until(lambda: shard.replayed >= 1000)
        assert runtime.status("anything") == ErrorCode.coordinator_load_in_progress
        tasks = [t for t in asyncio.all_tasks() if t.get_name() in ("housekeeping", "load-__t-0")]
        assert len(tasks) == 2
        await runtime.close()
        assert all(t.done() for t in tasks) and shard.unloaded == []
        assert runtime.partitions == {} and runtime.status("anything") == ErrorCode.not_coordinator
        count = len(passes)
        await asyncio.sleep(0.01)
        assert len(passes) == count  # nothing runs after close
    asyncio.run(body())
