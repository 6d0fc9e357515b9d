"""broker.id left out (Kafka's default -1): the broker takes reserved.broker.max.id + the next
version of /brokers/seqid, writes it to meta.properties, and keeps it across restarts."""

import asyncio
import uuid

from fauxka import probe
from tests.harness import BrokerProcess, wait_for


def _without_id(broker: BrokerProcess) -> BrokerProcess:
    lines = broker.config.read_text().splitlines()
    broker.config.write_text("".join(f"{line}\n" for line in lines if not line.startswith("broker.id=")))
    return broker


def _registered(broker: BrokerProcess) -> list[int] | None:
    try:
        return asyncio.run(probe.metadata(*broker.address, 5.0)).brokers
    except (OSError, asyncio.TimeoutError):
        return None


def test_brokers_without_an_id_get_generated_ones_kept_across_restarts(zookeeper, tmp_path):
    chroot = f"{zookeeper.connect}/ids-{uuid.uuid4().hex[:12]}"
    first = _without_id(BrokerProcess(1, chroot, tmp_path, {}))
    second = _without_id(BrokerProcess(2, chroot, tmp_path, {"reserved.broker.max.id": "500"}))
    try:
        first.start()
        assert wait_for(lambda: _registered(first), 60, 0.2, "the first broker") == [1001]
        second.start()
        assert wait_for(lambda: (ids := _registered(second)) and len(ids) == 2 and ids, 60, 0.2,
                        "the second broker") == [502, 1001]  # its own reserved maximum, the next sequence
        assert "broker.id=1001" in (tmp_path / "data-1" / "meta.properties").read_text()
        first.stop()
        wait_for(lambda: _registered(second) == [502], 30, 0.2, "the first broker gone")
        first.start()  # its meta.properties names it: no new id
        assert wait_for(lambda: (ids := _registered(first)) and len(ids) == 2 and ids, 60, 0.2,
                        "the first broker back") == [502, 1001]
    finally:
        first.stop()
        second.stop()
