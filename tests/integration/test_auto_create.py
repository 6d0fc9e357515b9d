"""auto.create.topics.enable=true: Metadata for an unknown topic gets it created by the controller."""

from tests.admin_helpers import send, unique
from tests.harness import wait_for


def metadata(address: str, name: str, allow: bool = True):
    response = send(address, 3, 9, {"topics": [{"name": name}], "allow_auto_topic_creation": allow,
                                    "include_topic_authorized_operations": False,
                                    "include_cluster_authorized_operations": False})
    [topic] = response.topics
    return int(topic.error_code), len(topic.partitions)


def test_unknown_topics_are_created_with_the_broker_defaults(make_cluster):
    cluster = make_cluster(2, {"auto.create.topics.enable": "true", "num.partitions": "3"})
    on_controller, elsewhere, refused = unique(), unique(), unique()
    assert metadata(cluster.controller_address(), on_controller)[0] == 5  # LEADER_NOT_AVAILABLE
    assert metadata(cluster.non_controller_address(), elsewhere)[0] == 3  # asked the controller
    assert metadata(cluster.controller_address(), refused, allow=False)[0] == 3
    for name in (on_controller, elsewhere):
        assert wait_for(lambda n=name: metadata(cluster.non_controller_address(), n) == (0, 3), 10,
                        what=f"{name} auto-created")
    assert cluster.zk_get(f"/brokers/topics/{refused}") is None
    [forwarded] = [e for e in cluster.audit_events() if e["resource_name"] == elsewhere]
    assert forwarded["forwarded_by"] is not None and forwarded["principal"] == "User:ANONYMOUS"
    assert metadata(cluster.controller_address(), "bad name!")[0] == 17
