"""Kafka's ACL znodes (kafka.zk.ZkData: ZkAclStore, ZkAclChangeStore, ResourceZNode; AclEntry's JSON).

LITERAL patterns live in /kafka-acl/<ResourceType>/<name>, PREFIXED ones in
/kafka-acl-extended/prefixed/<ResourceType>/<name>; each holds
{"version":1,"acls":[{"principal":..,"permissionType":..,"operation":..,"host":..}]}.
A change to a LITERAL resource is announced by /kafka-acl-changes/acl_changes_<seq> holding
"TOPIC:name" (ResourceType.toString, the enum name); to a PREFIXED one by
/kafka-acl-extended-changes/acl_changes_<seq> holding
{"version":1,"resourceType":"TOPIC","name":..,"patternType":"PREFIXED"}.
"""

import json

from fauxka.model.acl_model import (RESOURCE_TYPES, AccessControlEntry, AclOperation, AclPermissionType, PatternType,
                             ResourcePattern, ResourceType, parse_principal)
from . import paths as zp

STORES = {PatternType.LITERAL: zp.ACL_LITERAL_ROOT, PatternType.PREFIXED: zp.ACL_PREFIXED_ROOT}


def type_path(pattern_type: PatternType, resource_type: ResourceType) -> str:
    return zp.acl_type_path(STORES[pattern_type], resource_type.pascal)


def resource_path(pattern: ResourcePattern) -> str:
    return f"{type_path(pattern.pattern_type, pattern.resource_type)}/{pattern.name}"


def acl_paths() -> list[str]:
    """KafkaZkClient.createAclPaths: what an AclAuthorizer creates (when missing) as it starts."""
    paths = []
    for pattern_type, root in STORES.items():
        paths.append(root)
        paths += [type_path(pattern_type, t) for t in RESOURCE_TYPES]
    return paths + [zp.ACL_LITERAL_CHANGES, zp.ACL_EXTENDED_CHANGES]


def encode_acls(entries) -> bytes:
    """ResourceZNode.encode: the resource's entries, in the order given."""
    acls = [{"principal": e.principal, "permissionType": e.permission_type.pascal, "operation": e.operation.pascal,
             "host": e.host} for e in entries]
    return json.dumps({"version": 1, "acls": acls}, separators=(",", ":")).encode()


def decode_acls(data: bytes | None) -> list[AccessControlEntry]:
    """AclEntry.fromBytes: entries without duplicates, in stored order. Raises ValueError on a bad znode."""
    if not data:
        return []
    payload = json.loads(data)
    if payload.get("version") != 1:
        raise ValueError(f"unsupported ACL znode version {payload.get('version')!r}")
    entries: dict[AccessControlEntry, None] = {}
    for item in payload.get("acls") or ():
        parse_principal(item["principal"])
        entry = AccessControlEntry(item["principal"], item["host"], AclOperation.from_name(item["operation"]),
                                   AclPermissionType.from_name(item["permissionType"]))
        entries[entry] = None
    return list(entries)


def change_notification(pattern: ResourcePattern) -> tuple[str, bytes]:
    """(sequential path prefix, data) of the notification that `pattern`'s ACLs changed."""
    if pattern.pattern_type == PatternType.LITERAL:
        return f"{zp.ACL_LITERAL_CHANGES}/{zp.ACL_CHANGE_PREFIX}", f"{pattern.resource_type.name}:{pattern.name}".encode()
    event = {"version": 1, "resourceType": pattern.resource_type.name, "name": pattern.name,
             "patternType": pattern.pattern_type.name}
    return f"{zp.ACL_EXTENDED_CHANGES}/{zp.ACL_CHANGE_PREFIX}", json.dumps(event, separators=(",", ":")).encode()


def decode_change(path_prefix: str, data: bytes) -> ResourcePattern:
    """LiteralAclChangeStore.decode / ExtendedAclChangeStore.decode (ResourceType.fromString: the enum name)."""
    if path_prefix.startswith(zp.ACL_LITERAL_CHANGES):
        resource_type, sep, name = data.decode().partition(":")
        if not sep:
            raise ValueError(f"expected a string in format ResourceType:ResourceName but got {data.decode()}")
        return ResourcePattern(_by_name(ResourceType, resource_type.upper()), name, PatternType.LITERAL)
    event = json.loads(data)
    return ResourcePattern(_by_name(ResourceType, event["resourceType"].upper()), event["name"],
                           _by_name(PatternType, event["patternType"]))


def _by_name(enum, name: str):
    return enum.__members__.get(name, enum(0))
