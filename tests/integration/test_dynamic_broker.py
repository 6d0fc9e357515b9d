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
