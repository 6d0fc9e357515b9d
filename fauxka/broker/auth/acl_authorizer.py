"""Kafka's ZooKeeper-mode ACL authorizer (kafka.security.authorizer.AclAuthorizer, 3.4).

A request is allowed when its principal is a super user (`super.users`), or when no ACL names the
resource at all and `allow.everyone.if.no.acl.found` is true, or when no DENY and at least one ALLOW
matches. An ACL matches when its principal is the request's or `User:*`, its host is the client's
address or `*`, and its operation is the one asked or ALL. The ACLs of a resource are those of the
literal resource, of the literal wildcard `*` and of every prefixed pattern the name starts with.
ALLOW of READ, WRITE, DELETE or ALTER implies DESCRIBE; ALLOW of ALTER_CONFIGS implies
DESCRIBE_CONFIGS. Each decision is logged like Kafka's `kafka.authorizer.logger`: allowed at DEBUG,
denied at INFO, either left out when the caller only probes (authorized operations, listings).
"""

import ipaddress
from typing import Any

from fauxka.zkstore.acl_znodes import acl_paths
from fauxka.model.acl_model import (IMPLIED_BY, WILDCARD_HOST, WILDCARD_PRINCIPAL, AclBinding, AclBindingFilter,
                                  AclOperation, AclPermissionType, ResourceType, parse_principal)

from .acl_cache import AclCache


class AuthorizerConfigError(Exception):
    """The authorizer cannot be configured (e.g. a malformed `super.users`): a start-up error."""


def super_users(text: str | None) -> frozenset[str]:
    """`super.users`: principals separated by ';' (Java's split: trailing empty parts dropped)."""
    if not text:
        return frozenset()
    parts = text.split(";")
    while parts and parts[-1] == "":
        parts.pop()
    users = set()
    for part in parts:
        try:
            principal_type, name = parse_principal(part.strip())
        except ValueError as exc:
            raise AuthorizerConfigError(f"Invalid value {text} for configuration super.users: {exc}") from None
        users.add(f"{principal_type}:{name}")
    return frozenset(users)


def java_host_address(host: str) -> str:
    """InetAddress.getHostAddress of the client: IPv4-mapped IPv6 addresses as IPv4, other IPv6
    addresses as eight uncompressed hex groups ("0:0:0:0:0:0:0:1")."""
    if ":" not in host:
        return host
    address, percent, scope = host.partition("%")
    try:
        ip = ipaddress.IPv6Address(address)
    except ValueError:
        return host
    if ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    groups = ":".join(f"{int(group, 16):x}" for group in ip.exploded.split(":"))
    return groups + percent + scope


def request_name(api: str | None) -> str:
    """ApiKeys' name for the log line: create_topics -> CreateTopics."""
    return "".join(part.capitalize() for part in (api or "unknown").split("_"))


class AclAuthorizer:
    """`authorizer.class.name` names this class (or Kafka's names for it). A replacement written in
    Python keeps the same shape: `__init__(config, zk, log)`, `async start(timeout_s)`,
    `authorize(principal, host, operation, resource_type, name, **log_options) -> bool`, `close()`."""

    def __init__(self, config, zk, log: Any):
        self.super_users = super_users(config["super.users"])
        self.allow_everyone = bool(config["allow.everyone.if.no.acl.found"])
        self._zk = zk
        self.cache = AclCache(zk, log)
        self._log = log.bind(logger="kafka.authorizer.logger")

    async def start(self, timeout_s: float) -> None:
        """Create Kafka's ACL paths when missing, then follow them (like AclAuthorizer.configure)."""
        for path in acl_paths():
            await self._zk.ensure_path(path)
        self.cache.start()
        await self.cache.wait_synced(timeout_s)

    def close(self) -> None:
        self.cache.stop()

    def acls(self, binding_filter: AclBindingFilter) -> list[AclBinding]:
        return self.cache.bindings(binding_filter)

    def authorize(self, principal: str, host: str, operation: str, resource_type: str, name: str, *,
                  api: str | None = None, log_if_allowed: bool = True, log_if_denied: bool = True) -> bool:
        """Whether `principal` connecting from `host` may do `operation` ("CREATE") on the literal
        resource `name` of `resource_type` ("TOPIC")."""
        op, rtype = AclOperation[operation], ResourceType[resource_type]
        host = java_host_address(host)
        allowed = principal in self.super_users or self._acls_allow(principal, host, op, rtype, name)
        if (log_if_allowed if allowed else log_if_denied):
            message = (f"Principal = {principal} is {'Allowed' if allowed else 'Denied'} Operation = {op.pascal} "
                       f"from host = {host} on resource = {rtype.pascal}:LITERAL:{name} for request = "
                       f"{request_name(api)} with resourceRefCount = 1")
            (self._log.debug if allowed else self._log.info)(message, principal=principal, host=host,
                                                             operation=op.name, resource_type=rtype.name,
                                                             resource_name=name, api=api, authorized=allowed)
        return allowed

    def _acls_allow(self, principal: str, host: str, op: AclOperation, rtype: ResourceType, name: str) -> bool:
        acls = self.cache.matching(rtype, name)
        if not acls:
            return self.allow_everyone
        for acl in acls:
            if (acl.permission_type == AclPermissionType.DENY and acl.principal in (principal, WILDCARD_PRINCIPAL)
                    and acl.operation in (op, AclOperation.ALL) and acl.host in (host, WILDCARD_HOST)):
                return False
        allowing = IMPLIED_BY.get(op, frozenset({op})) | {AclOperation.ALL}
        return any(acl.permission_type == AclPermissionType.ALLOW and acl.principal in (principal, WILDCARD_PRINCIPAL)
                   and acl.operation in allowing and acl.host in (host, WILDCARD_HOST) for acl in acls)
