"""CreateAcls, DescribeAcls and DeleteAcls against a cluster with Kafka's ACL authorizer (ANONYMOUS is a
super user here), through confluent-kafka, kafka-python and raw requests; the znodes they leave."""

import asyncio
import json

import pytest
import structlog
from confluent_kafka.admin import (AclBinding, AclBindingFilter, AclOperation, AclPermissionType, AdminClient,
                                   ResourcePatternType, ResourceType)
from kafka.admin import ACL, ACLFilter, ACLOperation, ACLPermissionType, KafkaAdminClient
from kafka.admin import ResourcePattern as KResourcePattern
from kafka.admin import ResourcePatternFilter as KResourcePatternFilter
from kafka.admin import ResourceType as KResourceType
from kafka.admin._acls import ACLResourcePatternType

from fauxka.broker.protocol.framing import FrameError
from tests.admin_helpers import send, unique
from tests.harness import Cluster, wait_for
from fauxka.zkstore import ZkStore

AUTHORIZER = {"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer", "super.users": "User:ANONYMOUS"}
ANY_FILTER = {"resource_type_filter": 1, "resource_name_filter": None, "pattern_type_filter": 1,
              "principal_filter": None, "host_filter": None, "operation": 1, "permission_type": 1}


@pytest.fixture(scope="module")
def secured(zookeeper, tmp_path_factory):
    cluster = Cluster(zookeeper, tmp_path_factory.mktemp("acls"), 2, AUTHORIZER)
    cluster.start()
    yield cluster
    cluster.stop()


def creation(rtype=2, name="t", pattern=3, principal="User:alice", host="*", op=3, perm=3) -> dict:
    return {"resource_type": rtype, "resource_name": name, "resource_pattern_type": pattern, "principal": principal,
            "host": host, "operation": op, "permission_type": perm}


def create_raw(address: str, creations: list[dict], version: int = 3) -> list[tuple[int, str | None]]:
    return [(int(r.error_code), r.error_message) for r in send(address, 30, version, {"creations": creations}).results]


def describe_raw(address: str, version: int = 3, **filters) -> set[tuple]:
    response = send(address, 29, version, {**ANY_FILTER, **filters})
    assert response.error_code == 0, response
    return {(r.resource_type, r.resource_name, r.pattern_type, a.principal, a.host, a.operation, a.permission_type)
            for r in response.resources for a in r.acls}


def zk_children_data(cluster, path: str) -> list[bytes]:
    async def read():
        store = ZkStore(cluster.zk_connect, 10000, structlog.get_logger())
        await store.start(10)
        try:
            names = sorted(await store.get_children(path) or [])
            return [(await store.get(f"{path}/{n}"))[0] for n in names]
        finally:
            await store.stop()
    return asyncio.run(read())


def zk_write(cluster, path: str, data: bytes) -> None:
    async def write():
        store = ZkStore(cluster.zk_connect, 10000, structlog.get_logger())
        await store.start(10)
        try:
            await store.create(path, data, makepath=True)
        finally:
            await store.stop()
    asyncio.run(write())


def test_confluent_kafka_create_describe_delete(secured):
    topic, group = unique("acl-t"), unique("acl-g")
    admin = AdminClient({"bootstrap.servers": secured.controller_address()})
    read = AclBinding(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, "User:alice", "*",
                      AclOperation.READ, AclPermissionType.ALLOW)
    deny = AclBinding(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, "User:*", "10.0.0.1",
                      AclOperation.WRITE, AclPermissionType.DENY)
    prefixed = AclBinding(ResourceType.GROUP, group, ResourcePatternType.PREFIXED, "User:bob", "*",
                          AclOperation.ALL, AclPermissionType.ALLOW)
    for future in admin.create_acls([read, deny, prefixed], request_timeout=15).values():
        future.result()
    # Kafka's znodes, and a change notification per resource
    literal = json.loads(secured.zk_get(f"/kafka-acl/Topic/{topic}"))
    assert literal == {"version": 1, "acls": [
        {"principal": "User:alice", "permissionType": "Allow", "operation": "Read", "host": "*"},
        {"principal": "User:*", "permissionType": "Deny", "operation": "Write", "host": "10.0.0.1"}]}
    assert json.loads(secured.zk_get(f"/kafka-acl-extended/prefixed/Group/{group}"))["acls"] == [
        {"principal": "User:bob", "permissionType": "Allow", "operation": "All", "host": "*"}]
    assert f"TOPIC:{topic}".encode() in zk_children_data(secured, "/kafka-acl-changes")
    assert {"version": 1, "resourceType": "GROUP", "name": group, "patternType": "PREFIXED"} in [
        json.loads(d) for d in zk_children_data(secured, "/kafka-acl-extended-changes")]
    # every broker's cache follows: describe on a broker that did not write
    other = AdminClient({"bootstrap.servers": secured.non_controller_address()})
    everything = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None,
                                  AclOperation.ANY, AclPermissionType.ANY)

    def described():
        return set(other.describe_acls(everything, request_timeout=10).result())
    wait_for(lambda: {read, deny, prefixed} <= described(), 10, what="ACLs on another broker")
    match = AclBindingFilter(ResourceType.GROUP, group + "-x", ResourcePatternType.MATCH, None, None,
                             AclOperation.ANY, AclPermissionType.ANY)
    assert other.describe_acls(match, request_timeout=10).result() == [prefixed]
    # delete: the topic's ACLs by one filter, the znode goes with the last ACL
    by_topic = AclBindingFilter(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, None, None,
                                AclOperation.ANY, AclPermissionType.ANY)
    deleted = admin.delete_acls([by_topic], request_timeout=15)[by_topic].result()
    assert sorted(deleted, key=str) == sorted([read, deny], key=str)
    assert secured.zk_get(f"/kafka-acl/Topic/{topic}") is None
    wait_for(lambda: not {read, deny} & described(), 10, what="deletion on another broker")


def test_kafka_python_create_describe_delete(secured):
    topic = unique("acl-kp")
    admin = KafkaAdminClient(bootstrap_servers=secured.controller_address(), request_timeout_ms=15000)
    try:
        pattern = KResourcePattern(KResourceType.TOPIC, topic, ACLResourcePatternType.LITERAL)
        acl = ACL("User:carol", "*", ACLOperation.DESCRIBE, ACLPermissionType.ALLOW, pattern)
        result = admin.create_acls([acl])
        assert result["succeeded"] == [acl] and result["failed"] == []
        found_filter = ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY,
                                 KResourcePatternFilter(KResourceType.TOPIC, topic, ACLResourcePatternType.ANY))
        # kafka-python sends each request to its least loaded broker: another broker's ACL cache
        # follows the write through ZooKeeper's change notifications, a moment later (as Kafka's)
        wait_for(lambda: admin.describe_acls(found_filter)[0] == [acl], 10, what="the ACL described")
        [(_, deleted, error)] = admin.delete_acls([found_filter])
        assert deleted == [acl] and error.errno == 0
        wait_for(lambda: admin.describe_acls(found_filter)[0] == [], 10, what="the ACL gone")
    finally:
        admin.close()


def test_create_acls_validation(secured):
    controller = secured.controller_address()
    name = unique("acl-v")
    assert create_raw(controller, [
        creation(rtype=4, name="my-cluster"),  # the CLUSTER resource has one name
        creation(name=""),
        creation(name=f"{name}/x"),  # AclAuthorizer: no '/' in a resource name
        creation(rtype=99, name=name),  # an unknown (non-zero) code: INVALID_REQUEST from the authorizer
        creation(name=name, principal="carol"),  # AclEntry cannot parse it: the whole resource fails
        creation(name=name, principal="User:dave"),
        creation(rtype=4, name="kafka-cluster", op=9),
    ]) == [(42, "The only valid name for the CLUSTER resource is kafka-cluster"), (42, "Invalid empty resource name"),
           (42, "Failed to create ACL"), (42, "Failed to create ACL"), (-1, None), (-1, None), (0, None)]
    assert secured.zk_get(f"/kafka-acl/Topic/{name}") is None
    # a filter-only value (MATCH, ANY) fails the whole request (Kafka's handler throws)
    assert create_raw(controller, [creation(name=name), creation(name=name, pattern=2)]) == [(-1, None)] * 2
    # a 0 (UNKNOWN) code does not parse: the connection is closed
    with pytest.raises(FrameError, match="connection closed"):
        create_raw(controller, [creation(name=name, op=0)])
    events = [e for e in secured.audit_events() if e["resource_type"] == "ACL"]
    assert any(e["action"] == "CREATE_ACLS" and e["acl"]["resource_name"] == "kafka-cluster"
               and e["acl"]["operation"] == "CLUSTER_ACTION" and e["error_code"] == 0 for e in events)


def test_delete_acls_filters(secured):
    controller = secured.controller_address()
    a, b = unique("acl-d"), unique("acl-d")
    assert create_raw(controller, [creation(name=a), creation(name=a, op=4), creation(name=b),
                                   creation(name=a[:8], pattern=4)]) == [(0, None)] * 4
    filters = [dict(ANY_FILTER, resource_type_filter=2, resource_name_filter=a, pattern_type_filter=3, operation=4),
               dict(ANY_FILTER, resource_type_filter=2, resource_name_filter=a, pattern_type_filter=2),
               dict(ANY_FILTER, resource_type_filter=2, resource_name_filter=unique("none"), pattern_type_filter=3)]
    response = send(controller, 31, 3, {"filters": filters})
    found = [[(m.resource_name, m.pattern_type, m.operation, int(m.error_code)) for m in r.matching_acls]
             for r in response.filter_results]
    # an ACL two filters match is reported by the first; MATCH takes the prefixed pattern too
    assert found[0] == [(a, 3, 4, 0)]
    assert sorted(found[1]) == sorted([(a, 3, 3, 0), (a[:8], 4, 3, 0)])
    assert found[2] == [] and all(r.error_code == 0 for r in response.filter_results)
    assert describe_raw(controller, resource_type_filter=2, resource_name_filter=b, pattern_type_filter=2) == {
        (2, b, 3, "User:alice", "*", 3, 3)}


def test_external_znode_writes_are_followed(secured):
    """kafka-acls.sh --authorizer-properties zookeeper.connect=... writes the znodes itself."""
    name = unique("acl-ext")
    zk_write(secured, f"/kafka-acl/Topic/{name}", b'{"version": 1, "acls": [{"host": "*", "permissionType": '
                                                   b'"Allow", "operation": "Write", "principal": "User:erin"}]}')
    for broker in secured.brokers:
        wait_for(lambda: describe_raw(secured.address_of(broker), resource_name_filter=name)
                 == {(2, name, 3, "User:erin", "*", 4, 3)}, 10, what=f"broker {broker} following ZooKeeper")


def test_versions_and_forwarding(secured):
    """v1-v3 on the wire; a non-controller forwards the writes to the controller."""
    name = unique("acl-fw")
    other = secured.non_controller_address()
    for version in (1, 2, 3):
        assert create_raw(other, [creation(name=name, op=version + 2)], version) == [(0, None)]
        # the receiving broker's cache follows ZooKeeper a moment after the controller's write
        wait_for(lambda: (2, name, 3, "User:alice", "*", version + 2, 3)
                 in describe_raw(other, version, resource_name_filter=name), 10, what="the forwarding broker's cache")
    response = send(other, 31, 1, {"filters": [dict(ANY_FILTER, resource_name_filter=name)]})
    assert len(response.filter_results[0].matching_acls) == 3


def test_without_an_authorizer_security_is_disabled(cluster):
    address = cluster.controller_address()
    response = send(address, 29, 3, ANY_FILTER)
    assert (int(response.error_code), response.error_message, response.resources) == \
        (54, "No Authorizer is configured on the broker", ())
    assert create_raw(address, [creation(), creation()]) == [(54, "No Authorizer is configured.")] * 2
    response = send(cluster.non_controller_address(), 31, 3, {"filters": [ANY_FILTER]})
    assert [(int(r.error_code), r.error_message) for r in response.filter_results] == \
        [(54, "No Authorizer is configured.")]


def test_unknown_authorizer_class_stops_the_broker(make_cluster):
    broken = make_cluster(1, {"authorizer.class.name": "no.such.module:Authorizer"}, start=False)
    broker = broken.brokers[1]
    broker.start()
    assert broker.process.wait(30) == 2
    assert "authorizer.class.name" in broker.out_file.read_text()
