import json
import uuid

from fauxka.zkstore import paths as zp


def test_broker_registration_is_kafkas_v5_json():
    reg = zp.BrokerRegistration(2, (zp.BrokerEndpoint("PLAINTEXT", "h1", 9092, "PLAINTEXT"),
                                    zp.BrokerEndpoint("SASL", "h1", 9093, "SASL_PLAINTEXT")), rack="r1")
    payload = json.loads(zp.encode_broker(reg))
    assert payload["version"] == 5
    assert payload["endpoints"] == ["PLAINTEXT://h1:9092", "SASL://h1:9093"]
    assert payload["listener_security_protocol_map"] == {"PLAINTEXT": "PLAINTEXT", "SASL": "SASL_PLAINTEXT"}
    assert (payload["host"], payload["port"], payload["jmx_port"]) == ("h1", 9092, -1)
    assert payload["rack"] == "r1" and payload["features"] == {}
    assert payload["timestamp"].isdigit()
    assert zp.decode_broker(2, zp.encode_broker(reg)) == reg


def test_broker_without_plaintext_has_null_host():
    reg = zp.BrokerRegistration(1, (zp.BrokerEndpoint("SASL", "::1", 1, "SASL_PLAINTEXT"),))
    payload = json.loads(zp.encode_broker(reg))
    assert payload["host"] is None and payload["port"] == -1
    assert payload["endpoints"] == ["SASL://[::1]:1"]
    assert "rack" not in payload
    assert zp.decode_broker(1, zp.encode_broker(reg)).endpoints[0].host == "::1"


def test_controller_and_epoch():
    payload = json.loads(zp.encode_controller(3))
    assert payload["version"] == 1 and payload["brokerid"] == 3
    assert zp.decode_controller(zp.encode_controller(3)) == 3
    assert zp.encode_epoch(12) == b"12" and zp.decode_epoch(b"12") == 12


def test_topic_ids_are_kafkas_base64url_without_padding():
    u = uuid.UUID("f4bba2e4-9fd6-4b0e-a8c1-2b2a7d8e0f11")
    text = zp.uuid_to_kafka(u)
    assert len(text) == 22 and "=" not in text and "+" not in text and "/" not in text
    assert zp.uuid_from_kafka(text) == u


def test_topic_and_partition_state():
    topic = zp.TopicAssignment(uuid.uuid4(), {1: [2, 3], 0: [1, 2]})
    payload = json.loads(zp.encode_topic(topic))
    assert payload["version"] == 3
    assert payload["partitions"] == {"0": [1, 2], "1": [2, 3]}
    assert payload["adding_replicas"] == {} and payload["removing_replicas"] == {}
    assert zp.decode_topic(zp.encode_topic(topic)) == topic
    state = zp.PartitionState(leader=1, leader_epoch=0, controller_epoch=4, isr=[1, 2])
    assert json.loads(zp.encode_partition_state(state)) == {
        "controller_epoch": 4, "leader": 1, "version": 1, "leader_epoch": 0, "isr": [1, 2]}
    assert zp.decode_partition_state(zp.encode_partition_state(state)) == state


def test_cluster_id_and_paths():
    cid = zp.new_cluster_id()
    assert json.loads(zp.encode_cluster_id(cid)) == {"version": "1", "id": cid}
    assert zp.partition_state_path("t", 3) == "/brokers/topics/t/partitions/3/state"
    assert zp.broker_path(5) == "/brokers/ids/5"


def test_the_layout_creates_every_persistent_path_after_its_parent():
    from fauxka.zkstore import paths as zp
    layout = zp.layout_paths()
    assert set(zp.PERSISTENT_PATHS) <= set(layout) and len(layout) == len(set(layout))
    for path in layout:
        parent = path.rsplit("/", 1)[0]
        assert parent == "" or layout.index(parent) < layout.index(path), path
