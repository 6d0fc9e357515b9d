"""What the ACL authorizer decides for User:ANONYMOUS (not a super user) in the admin apis, as Kafka's
KafkaApis 3.4 asks it. The cluster starts with ACLs written straight into ZooKeeper (as
kafka-acls.sh --authorizer-properties zookeeper.connect=... does): ANONYMOUS may Alter, Describe and
ClusterAction the Cluster, nothing else; every further grant goes through CreateAcls."""

import asyncio

import pytest
import structlog

from tests.admin_helpers import create_topics, delete_topics, send, topic_spec, unique
from tests.harness import Cluster, wait_for
from fauxka.zkstore import ZkStore
from fauxka.zkstore import paths as zp

ANON = "User:ANONYMOUS"
CLUSTER_ACL = (b'{"version":1,"acls":['
               b'{"principal":"User:ANONYMOUS","permissionType":"Allow","operation":"Alter","host":"*"},'
               b'{"principal":"User:ANONYMOUS","permissionType":"Allow","operation":"Describe","host":"*"},'
               b'{"principal":"User:ANONYMOUS","permissionType":"Allow","operation":"ClusterAction","host":"*"}]}')
TOPIC, GROUP, CLUSTER, LITERAL, PREFIXED = 2, 3, 4, 3, 4
READ, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS = 3, 5, 6, 7, 8, 10
DENY, ALLOW = 2, 3


def zk_set(cluster, path: str, data: bytes) -> None:
    async def write():
        store = ZkStore(cluster.zk_connect, 10000, structlog.get_logger())
        await store.start(10)
        try:
            if await store.exists(path):
                await store.set(path, data)
            else:
                await store.create(path, data, makepath=True)
        finally:
            await store.stop()
    asyncio.run(write())


@pytest.fixture(scope="module")
def locked(zookeeper, tmp_path_factory):
    cluster = Cluster(zookeeper, tmp_path_factory.mktemp("acl-locked"), 2,
                      {"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
                       "allow.everyone.if.no.acl.found": "false"})
    zk_set(cluster, "/kafka-acl/Cluster/kafka-cluster", CLUSTER_ACL)
    cluster.start()
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def controller(locked):
    return locked.controller_address()


def grant(address: str, rtype: int, name: str, op: int, pattern: int = LITERAL, host: str = "*", perm: int = ALLOW):
    creation = {"resource_type": rtype, "resource_name": name, "resource_pattern_type": pattern, "principal": ANON,
                "host": host, "operation": op, "permission_type": perm}
    [result] = send(address, 30, 3, {"creations": [creation]}).results
    assert result.error_code == 0, result


def created(address: str, *names: str) -> list[tuple]:
    return [(t.name, int(t.error_code), t.error_message, int(t.topic_config_error_code), t.num_partitions)
            for t in create_topics(address, [topic_spec(n, 1, 1) for n in names])]


def metadata(address: str, topics, ops: bool = True):
    wanted = None if topics is None else [{"name": n, "topic_id": i} for n, i in topics]
    return send(address, 3, 12, {"topics": wanted, "allow_auto_topic_creation": False,
                                 "include_topic_authorized_operations": ops}).topics


def test_create_topics_needs_create_on_the_cluster_or_the_topic(locked, controller):
    team = unique("team") + "-"
    refused = (29, "Authorization failed.", 29, -1)
    assert created(controller, f"{team}a", "x-" + team) == [(f"{team}a", *refused), ("x-" + team, *refused)]
    assert created(controller, team, team) == [(team, 42, "Found multiple entries for this topic.", 29, -1)] * 2
    grant(controller, TOPIC, team, CREATE, PREFIXED)
    # created, but without DescribeConfigs on it the client learns no configs or counts
    assert created(controller, f"{team}a", "x-" + team) == [(f"{team}a", 0, None, 29, -1), ("x-" + team, *refused)]
    assert created(controller, f"{team}a") == [(f"{team}a", 36, f"Topic '{team}a' already exists.", 0, -1)]
    grant(controller, TOPIC, team, DESCRIBE_CONFIGS, PREFIXED)
    assert created(controller, f"{team}b") == [(f"{team}b", 0, None, 0, 1)]
    # a non-controller forwards: the controller still decides as the client
    assert created(locked.non_controller_address(), "y-" + team) == [("y-" + team, *refused)]
    denied = [e for e in locked.audit_events() if e["resource_name"] == "x-" + team]
    assert denied and all(e["error_code"] == 29 and e["principal"] == ANON for e in denied)


def test_deny_beats_allow(controller):
    team = unique("den") + "-"
    grant(controller, TOPIC, team, CREATE, PREFIXED)
    grant(controller, TOPIC, f"{team}secret", CREATE, perm=DENY)
    assert [r[:2] for r in created(controller, f"{team}secret", f"{team}open")] == [(f"{team}secret", 29),
                                                                                      (f"{team}open", 0)]


def test_host_rules(controller):
    team = unique("host") + "-"
    grant(controller, TOPIC, team, CREATE, PREFIXED, host="10.0.0.1")
    assert created(controller, f"{team}a")[0][1] == 29
    grant(controller, TOPIC, team, CREATE, PREFIXED, host="127.0.0.1")
    assert created(controller, f"{team}a")[0][1] == 0


def test_metadata_shows_only_what_the_client_may_describe(locked, controller):
    team = unique("md") + "-"
    grant(controller, TOPIC, team, CREATE, PREFIXED)
    assert created(controller, f"{team}a")[0][1] == 0
    assert f"{team}a" not in [t.name for t in metadata(controller, None)]  # left out of an all-topics answer
    [named] = metadata(controller, [(f"{team}a", None)])
    assert (named.name, int(named.error_code), named.topic_id, named.partitions) == (f"{team}a", 29, None, ())
    topic_id = zp.decode_topic(locked.zk_get(zp.topic_path(f"{team}a"))).topic_id
    [by_id] = metadata(controller, [(None, topic_id)])  # ids are no secret, names are
    assert (by_id.name, int(by_id.error_code), by_id.topic_id) == (None, 29, topic_id)
    grant(controller, TOPIC, f"{team}a", DESCRIBE, host="127.0.0.1")
    for broker in locked.brokers:  # every broker decides from its own cache, which follows ZooKeeper
        shown = wait_for(lambda: [t for t in metadata(locked.address_of(broker), None) if t.name == f"{team}a"],
                         10, what=f"broker {broker} showing the topic")
        assert [(t.error_code, t.topic_authorized_operations) for t in shown] == [(0, (1 << CREATE) | (1 << DESCRIBE))]
    [by_id] = metadata(controller, [(None, topic_id)])
    assert (by_id.name, int(by_id.error_code)) == (f"{team}a", 0)
    response = send(controller, 60, 0, {"include_cluster_authorized_operations": True})
    assert response.cluster_authorized_operations == (1 << ALTER) | (1 << DESCRIBE) | (1 << 9)


def test_admin_apis_refuse_without_acls(locked, controller):
    team = unique("adm") + "-"
    grant(controller, TOPIC, team, CREATE, PREFIXED)
    grant(controller, TOPIC, f"{team}seen", DESCRIBE_CONFIGS)
    topic = f"{team}a"
    assert [r[1] for r in created(controller, topic, f"{team}seen")] == [0, 0]
    assert [(r.name, int(r.error_code)) for r in delete_topics(controller, [topic])] == [(topic, 29)]
    topic_id = zp.decode_topic(locked.zk_get(zp.topic_path(topic))).topic_id
    assert [(r.name, r.topic_id, int(r.error_code)) for r in delete_topics(controller, ids=[topic_id])] == \
        [(None, topic_id, 29)]  # without Describe the name stays hidden
    partitions = send(controller, 37, 3, {"topics": [{"name": topic, "count": 2, "assignments": None}],
                                          "timeout": 5000, "validate_only": False}).results
    assert [(r.name, int(r.error_code), r.error_message) for r in partitions] == \
        [(topic, 29, "The topic authorization is failed.")]
    alter = send(controller, 33, 2, {"validate_only": False, "resources": [
        {"resource_type": TOPIC, "resource_name": topic, "configs": [{"name": "retention.ms", "value": "1"}]}]})
    assert [(int(r.error_code), r.error_message) for r in alter.responses] == [(29, None)]
    incremental = send(controller, 44, 1, {"validate_only": False, "resources": [
        {"resource_type": 4, "resource_name": "", "configs": [
            {"name": "log.retention.ms", "config_operation": 0, "value": "1000"}]}]})
    assert [(int(r.error_code), r.error_message) for r in incremental.responses] == [(31, None)]
    described = send(controller, 32, 4, {"include_synonyms": False, "include_documentation": False, "resources": [
        {"resource_type": TOPIC, "resource_name": topic, "configuration_keys": None},
        {"resource_type": 4, "resource_name": "1", "configuration_keys": None},
        {"resource_type": TOPIC, "resource_name": f"{team}seen", "configuration_keys": None}]}).results
    assert [(r.resource_name, int(r.error_code), r.error_message, len(r.configs) > 0) for r in described] == [
        (f"{team}seen", 0, "", True), (topic, 29, "Topic authorization failed.", False),
        ("1", 31, "Cluster authorization failed.", False)]  # the refused ones come last
    quotas = send(controller, 49, 1, {"validate_only": False, "entries": [
        {"entity": [{"entity_type": "user", "entity_name": "u"}],
         "ops": [{"key": "producer_byte_rate", "value": 1.0, "remove": False}]}]}).entries
    assert [(int(e.error_code), e.error_message) for e in quotas] == [(31, "Cluster authorization failed.")]
    quota_read = send(controller, 48, 1, {"strict": False, "components": []})
    assert (int(quota_read.error_code), quota_read.error_message, quota_read.entries) == (31, None, None)
    grant(controller, TOPIC, team, DELETE, PREFIXED)
    assert [(r.name, int(r.error_code)) for r in delete_topics(controller, [topic])] == [(topic, 0)]


def test_acl_apis_need_describe_and_alter_on_the_cluster(locked, controller):
    everything = {"resource_type_filter": 1, "resource_name_filter": None, "pattern_type_filter": 1,
                  "principal_filter": None, "host_filter": None, "operation": 1, "permission_type": 1}
    grant(controller, CLUSTER, "kafka-cluster", DESCRIBE, host="127.0.0.1", perm=DENY)
    refused = send(controller, 29, 3, everything)
    assert refused.error_code == 31 and refused.resources == ()
    assert refused.error_message.startswith("Request Request(processor=")
    assert "session=Session(User:ANONYMOUS,/127.0.0.1)" in refused.error_message
    assert refused.error_message.endswith("listenerName=ListenerName(PLAINTEXT), securityProtocol=PLAINTEXT, "
                                          "buffer=null, envelope=None) is not authorized.")
    deny_filter = dict(everything, resource_type_filter=CLUSTER, permission_type=DENY)
    [result] = send(controller, 31, 3, {"filters": [deny_filter]}).filter_results
    assert [(m.operation, m.host) for m in result.matching_acls] == [(DESCRIBE, "127.0.0.1")]
    assert send(controller, 29, 3, everything).error_code == 0
    grant(controller, CLUSTER, "kafka-cluster", ALTER, perm=DENY)
    creation = {"resource_type": GROUP, "resource_name": "g", "resource_pattern_type": LITERAL, "principal": ANON,
                "host": "*", "operation": READ, "permission_type": ALLOW}
    [result] = send(controller, 30, 3, {"creations": [creation]}).results
    assert result.error_code == 31 and result.error_message.endswith("is not authorized.")
    [result] = send(controller, 31, 3, {"filters": [deny_filter]}).filter_results
    assert result.error_code == 31 and result.matching_acls == ()
    zk_set(locked, "/kafka-acl/Cluster/kafka-cluster", CLUSTER_ACL)  # only ZooKeeper can undo that now
