"""Group apis under Kafka's ACL authorizer (KafkaApis' checks): Group DESCRIBE for FindCoordinator,
Group READ for commits, Topic READ per partition, Group DELETE for DeleteGroups, Cluster DESCRIBE
or Group DESCRIBE for ListGroups. Reuses the locked cluster of test_acl_authorization."""

from tests.admin_helpers import create_topics, send, topic_spec, unique
from tests.harness import wait_for
from tests.integration.test_acl_authorization import (  # noqa: F401 (fixtures)
    CREATE, DELETE, DESCRIBE, GROUP, PREFIXED, READ, TOPIC, controller, grant, locked)

GROUP_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED = 30, 29


def _find(address: str, group: str):
    return send(address, 10, 3, {"key": group, "key_type": 0})


def test_group_acls(locked, controller):
    group, topic = unique("aclg"), unique("aclt")
    grant(controller, TOPIC, "__consumer_offsets", CREATE)  # internal topic created on first need
    grant(controller, TOPIC, topic, CREATE)
    [created] = create_topics(controller, [topic_spec(topic, 1, 2)])
    assert created.error_code == 0, created
    assert _find(controller, group).error_code == GROUP_AUTHORIZATION_FAILED
    grant(controller, GROUP, group, DESCRIBE)
    grant(controller, GROUP, group, READ)
    wait_for(lambda: _find(controller, group).error_code == 0, 30, 0.2, "a coordinator")
    found = _find(controller, group)
    coordinator = f"127.0.0.1:{found.port}"
    commit = {"group_id": group, "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
              "topics": [{"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 5,
                                                         "committed_leader_epoch": -1, "committed_metadata": ""}]}]}
    refused = send(coordinator, 8, 8, commit)
    assert refused.topics[0].partitions[0].error_code == TOPIC_AUTHORIZATION_FAILED
    grant(controller, TOPIC, topic, READ)
    wait_for(lambda: send(coordinator, 8, 8, commit).topics[0].partitions[0].error_code == 0, 10, 0.1,
             "the grant seen by the coordinator")
    listed = send(coordinator, 16, 4, {"states_filter": []})
    assert group in {g.group_id for g in listed.groups}  # DESCRIBE on the group, not the cluster
    [deleted] = send(coordinator, 42, 2, {"groups_names": [group]}).results
    assert deleted.error_code == GROUP_AUTHORIZATION_FAILED
    grant(controller, GROUP, group, DELETE)
    wait_for(lambda: send(coordinator, 42, 2, {"groups_names": [group]}).results[0].error_code == 0, 10, 0.1,
             "the group deleted once DELETE is granted")
    other = unique("aclg")
    grant(controller, GROUP, other, DESCRIBE, PREFIXED)
    assert send(coordinator, 8, 8, {**commit, "group_id": other}).topics[0].partitions[0].error_code in (
        GROUP_AUTHORIZATION_FAILED, 16)  # no READ (or NOT_COORDINATOR: dispatch asks the coordinator first)
