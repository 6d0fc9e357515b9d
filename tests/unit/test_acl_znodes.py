"""Kafka's ACL znodes: paths, the ACL JSON and the change notifications (kafka.zk.ZkData, AclEntry)."""

import json

import pytest

from fauxka.zkstore.acl_znodes import acl_paths, change_notification, decode_acls, decode_change, encode_acls, resource_path
from fauxka.model.acl_model import AccessControlEntry, AclOperation, AclPermissionType, PatternType, ResourcePattern
from fauxka.model.acl_model import ResourceType as R

LIT, PRE = PatternType.LITERAL, PatternType.PREFIXED


def entry(principal="User:alice", host="*", op=AclOperation.READ, perm=AclPermissionType.ALLOW):
    return AccessControlEntry(principal, host, op, perm)


def test_resource_paths():
    assert resource_path(ResourcePattern(R.TOPIC, "t-1", LIT)) == "/kafka-acl/Topic/t-1"
    assert resource_path(ResourcePattern(R.CLUSTER, "kafka-cluster", LIT)) == "/kafka-acl/Cluster/kafka-cluster"
    assert resource_path(ResourcePattern(R.GROUP, "g", PRE)) == "/kafka-acl-extended/prefixed/Group/g"
    assert resource_path(ResourcePattern(R.TRANSACTIONAL_ID, "tx", LIT)) == "/kafka-acl/TransactionalId/tx"
    assert resource_path(ResourcePattern(R.DELEGATION_TOKEN, "d", PRE)) == \
        "/kafka-acl-extended/prefixed/DelegationToken/d"
    assert resource_path(ResourcePattern(R.USER, "User:bob", LIT)) == "/kafka-acl/User/User:bob"


def test_acl_paths_created_at_start():
    types = ["Topic", "Group", "Cluster", "TransactionalId", "DelegationToken", "User"]
    assert acl_paths() == (["/kafka-acl"] + [f"/kafka-acl/{t}" for t in types]
                           + ["/kafka-acl-extended/prefixed"] + [f"/kafka-acl-extended/prefixed/{t}" for t in types]
                           + ["/kafka-acl-changes", "/kafka-acl-extended-changes"])


def test_acl_json_is_kafkas():
    data = encode_acls([entry(), entry("User:*", "10.0.0.1", AclOperation.DESCRIBE_CONFIGS, AclPermissionType.DENY),
                        entry(op=AclOperation.IDEMPOTENT_WRITE), entry(op=AclOperation.CLUSTER_ACTION)])
    assert data == (b'{"version":1,"acls":['
                    b'{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"},'
                    b'{"principal":"User:*","permissionType":"Deny","operation":"DescribeConfigs","host":"10.0.0.1"},'
                    b'{"principal":"User:alice","permissionType":"Allow","operation":"IdempotentWrite","host":"*"},'
                    b'{"principal":"User:alice","permissionType":"Allow","operation":"ClusterAction","host":"*"}]}')
    assert decode_acls(data)[1] == entry("User:*", "10.0.0.1", AclOperation.DESCRIBE_CONFIGS, AclPermissionType.DENY)


def test_decoding_accepts_what_kafka_accepts():
    # SecurityUtils: Pascal case, or its upper case; Kafka's JSON has spaces; duplicates collapse (a Set)
    text = ('{"version": 1, "acls": [{"host": "h", "permissionType": "DENY", "operation": "DESCRIBECONFIGS", '
            '"principal": "User:a"}, {"host": "h", "permissionType": "Deny", "operation": "DescribeConfigs", '
            '"principal": "User:a"}, {"host": "*", "permissionType": "Allow", "operation": "Bogus", '
            '"principal": "User:b"}]}')
    decoded = decode_acls(text.encode())
    assert decoded == [entry("User:a", "h", AclOperation.DESCRIBE_CONFIGS, AclPermissionType.DENY),
                       entry("User:b", "*", AclOperation.UNKNOWN, AclPermissionType.ALLOW)]
    assert decode_acls(b"") == [] and decode_acls(None) == []
    with pytest.raises(ValueError):
        decode_acls(b'{"version":2,"acls":[]}')
    with pytest.raises(ValueError):
        decode_acls(b'{"version":1,"acls":[{"principal":"alice","permissionType":"Allow","operation":"Read",'
                    b'"host":"*"}]}')


def test_change_notifications():
    literal = ResourcePattern(R.TRANSACTIONAL_ID, "tx:1", LIT)
    path, data = change_notification(literal)
    assert (path, data) == ("/kafka-acl-changes/acl_changes_", b"TRANSACTIONAL_ID:tx:1")  # ResourceType.toString
    assert decode_change(path, data) == literal
    prefixed = ResourcePattern(R.TOPIC, "pay", PRE)
    path, data = change_notification(prefixed)
    assert path == "/kafka-acl-extended-changes/acl_changes_"
    assert data == b'{"version":1,"resourceType":"TOPIC","name":"pay","patternType":"PREFIXED"}'
    assert decode_change(path, data) == prefixed
    assert decode_change(path, json.dumps({"version": 1, "resourceType": "Topic", "name": "x",
                                           "patternType": "PREFIXED"}).encode()) == ResourcePattern(R.TOPIC, "x", PRE)
    with pytest.raises(ValueError):
        decode_change("/kafka-acl-changes/acl_changes_", b"no separator")
