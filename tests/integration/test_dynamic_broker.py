"""What takes effect on a running broker: BROKER_LOGGER levels, and dynamic broker configs."""

import json

from tests.admin_helpers import send
from tests.harness import wait_for
from tests.integration.test_configs import raw_alter

BROKER, BROKER_LOGGER = 4, 8
SET = 0
METADATA = {"topics": None, "allow_auto_topic_creation": False, "include_cluster_authorized_operations": False,
            "include_topic_authorized_operations": False}


def debug_request_lines(broker) -> int:
    lines = [json.loads(line) for line in broker.log_file.read_text().splitlines() if '"request"' in line]
    return sum(1 for e in lines if e.get("event") == "request" and e.get("level") == "debug")


def test_broker_logger_level_applies_at_once(make_cluster):
    cluster = make_cluster(1, {"log.level": "INFO"})
    address, broker = cluster.address_of(1), cluster.brokers[1]
    send(address, 3, 9, METADATA)
    assert debug_request_lines(broker) == 0
    assert raw_alter(address, [(BROKER_LOGGER, "1", [("root", SET, "DEBUG")])], incremental_api=True)[0][2] == 0
    send(address, 3, 9, METADATA)
    seen = wait_for(lambda: debug_request_lines(broker), 5, what="debug lines")
    assert raw_alter(address, [(BROKER_LOGGER, "1", [("root", SET, "WARN")])], incremental_api=True)[0][2] == 0
    before = debug_request_lines(broker)
    for _ in range(3):
        send(address, 3, 9, METADATA)
    assert debug_request_lines(broker) == before >= seen
    info = [line for line in broker.log_file.read_text().splitlines() if '"level": "info"' in line]
    send(address, 3, 9, METADATA)
    assert [line for line in broker.log_file.read_text().splitlines() if '"level": "info"' in line] == info


def test_listener_key_store_reloads_and_other_keys_are_logged(make_cluster, tmp_path):
    import asyncio
    import ssl

    from fauxka.broker.protocol.build import build
    from fauxka.broker.protocol.client import KafkaConnection
    from fauxka.broker.protocol.codec import request_schema
    from fauxka import certs

    first, second = certs.generate(tmp_path / "first"), certs.generate(tmp_path / "second")
    cluster = make_cluster(1, certs.broker_overrides(first), extra_listeners={"SSL": "SSL"})
    address, port = cluster.address_of(1), cluster.brokers[1].listener_ports["SSL"]

    def answers_with(files) -> bool:
        async def ask():
            context = ssl.create_default_context(cafile=str(files.ca))
            conn = await KafkaConnection.open("127.0.0.1", port, 5, ssl=context)
            try:
                return await conn.send(build(request_schema(3, 9), METADATA), 5)
            finally:
                await conn.close()
        try:
            return asyncio.run(ask()) is not None
        except (ssl.SSLError, OSError):
            return False

    assert answers_with(first) and not answers_with(second)
    changes = {"listener.name.ssl.ssl.keystore.location": str(second.broker_pem), "num.io.threads": "4"}
    assert raw_alter(address, [(BROKER, "1", changes)]) == [(BROKER, "1", 0, None)]
    wait_for(lambda: answers_with(second), 10, what="the new key store in use")
    assert not answers_with(first)
    log = cluster.brokers[1].log_file.read_text()
    assert "listener SSL stores reloaded" in log
    assert "fauxka does not act on it" in log and "num.io.threads" in log
    # a store that does not load: logged, the listener keeps the one it has
    assert raw_alter(address, [(BROKER, "1", {"listener.name.ssl.ssl.keystore.location": "/nonexistent"})]) == [
        (BROKER, "1", 0, None)]
    wait_for(lambda: "dynamic SSL config not applied" in cluster.brokers[1].log_file.read_text(), 10)
    assert answers_with(second)
