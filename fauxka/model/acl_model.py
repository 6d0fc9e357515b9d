"""Kafka's ACL model (org.apache.kafka.common.acl and .resource, 3.4): codes, names, bindings,
filters and their matching, as plain data. The authorizer, the ACL znodes and the ACL apis use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

CLUSTER_NAME = "kafka-cluster"  # Resource.CLUSTER_NAME: the one name of the CLUSTER resource
WILDCARD_RESOURCE = "*"
WILDCARD_PRINCIPAL = "User:*"
WILDCARD_HOST = "*"


class _Coded(IntEnum):
    @classmethod
    def from_code(cls, code: int):
        """fromCode: an unknown code is UNKNOWN."""
        try:
            return cls(code)
        except ValueError:
            return cls(0)

    @classmethod
    def from_name(cls, text: str):
        """SecurityUtils' lookup: the Pascal-case name or its upper case (no underscores), else UNKNOWN."""
        for member in cls:
            if text in (member.pascal, member.pascal.upper()):
                return member
        return cls(0)

    @property
    def pascal(self) -> str:
        """SecurityUtils.toPascalCase: TRANSACTIONAL_ID -> TransactionalId."""
        return "".join(part.capitalize() for part in self.name.split("_"))


class ResourceType(_Coded):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(_Coded):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(_Coded):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


class AclPermissionType(_Coded):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


# Resource types that hold ACLs (AclEntry.ResourceTypes), in their enum order.
RESOURCE_TYPES = tuple(t for t in ResourceType if t not in (ResourceType.UNKNOWN, ResourceType.ANY))

# AclEntry.supportedOperations: what a resource type's authorized-operations bit field covers.
SUPPORTED_OPERATIONS: dict[ResourceType, tuple[AclOperation, ...]] = {
    ResourceType.TOPIC: (AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DESCRIBE,
                         AclOperation.DELETE, AclOperation.ALTER, AclOperation.DESCRIBE_CONFIGS,
                         AclOperation.ALTER_CONFIGS),
    ResourceType.GROUP: (AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE),
    ResourceType.CLUSTER: (AclOperation.CREATE, AclOperation.CLUSTER_ACTION, AclOperation.DESCRIBE_CONFIGS,
                           AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE, AclOperation.ALTER,
                           AclOperation.DESCRIBE),
    ResourceType.TRANSACTIONAL_ID: (AclOperation.DESCRIBE, AclOperation.WRITE),
    ResourceType.DELEGATION_TOKEN: (AclOperation.DESCRIBE,),
    ResourceType.USER: (AclOperation.CREATE_TOKENS, AclOperation.DESCRIBE_TOKENS),
}

# An ALLOW of any of these also allows the key (AclAuthorizer.authorizeAction); DENY never implies.
IMPLIED_BY: dict[AclOperation, frozenset[AclOperation]] = {
    AclOperation.DESCRIBE: frozenset({AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE,
                                      AclOperation.DELETE, AclOperation.ALTER}),
    AclOperation.DESCRIBE_CONFIGS: frozenset({AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS}),
}


def to_bit_field(operations) -> int:
    """Utils.to32BitField: one bit per operation code."""
    return sum(1 << int(op) for op in set(operations))


def parse_principal(text: str | None) -> tuple[str, str]:
    """SecurityUtils.parseKafkaPrincipal: (type, name), split at the first colon."""
    principal_type, sep, name = (text or "").partition(":")
    if not text or not sep:
        raise ValueError(f"expected a string in format principalType:principalName but got {text}")
    return principal_type, name


@dataclass(frozen=True, slots=True)
class ResourcePattern:
    resource_type: ResourceType
    name: str
    pattern_type: PatternType

    @property
    def is_unknown(self) -> bool:
        return self.resource_type == ResourceType.UNKNOWN or self.pattern_type == PatternType.UNKNOWN

    def __str__(self) -> str:
        return (f"ResourcePattern(resourceType={self.resource_type.name}, name={self.name}, "
                f"patternType={self.pattern_type.name})")


@dataclass(frozen=True, slots=True)
class AccessControlEntry:
    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType

    @property
    def is_unknown(self) -> bool:
        return self.operation == AclOperation.UNKNOWN or self.permission_type == AclPermissionType.UNKNOWN

    def __str__(self) -> str:
        return (f"(principal={self.principal}, host={self.host}, operation={self.operation.name}, "
                f"permissionType={self.permission_type.name})")


@dataclass(frozen=True, slots=True)
class AclBinding:
    pattern: ResourcePattern
    entry: AccessControlEntry

    @property
    def is_unknown(self) -> bool:
        return self.pattern.is_unknown or self.entry.is_unknown

    def __str__(self) -> str:
        return f"(pattern={self.pattern}, entry={self.entry})"


def new_binding(resource_type: int, name: str, pattern_type: int, principal: str, host: str, operation: int,
                permission_type: int) -> AclBinding:
    """CreateAclsRequest.aclBinding: codes to a binding (unknown codes become UNKNOWN)."""
    return AclBinding(
        ResourcePattern(ResourceType.from_code(resource_type), name, PatternType.from_code(pattern_type)),
        AccessControlEntry(principal, host, AclOperation.from_code(operation),
                           AclPermissionType.from_code(permission_type)))


def filter_only_value(binding: AclBinding) -> str | None:
    """The IllegalArgumentException the constructors of ResourcePattern and AccessControlEntry throw
    for a value only filters may hold (ANY, MATCH); None when the binding is constructible."""
    if binding.pattern.resource_type == ResourceType.ANY:
        return "resourceType must not be ANY"
    if binding.pattern.pattern_type in (PatternType.MATCH, PatternType.ANY):
        return f"patternType must not be {binding.pattern.pattern_type.name}"
    if binding.entry.operation == AclOperation.ANY:
        return "operation must not be ANY"
    if binding.entry.permission_type == AclPermissionType.ANY:
        return "permissionType must not be ANY"
    return None


@dataclass(frozen=True, slots=True)
class ResourcePatternFilter:
    resource_type: ResourceType
    name: str | None
    pattern_type: PatternType

    def matches(self, pattern: ResourcePattern) -> bool:
        if self.resource_type != ResourceType.ANY and self.resource_type != pattern.resource_type:
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH) and self.pattern_type != pattern.pattern_type:
            return False
        if self.name is None:
            return True
        if self.pattern_type in (PatternType.ANY, pattern.pattern_type):
            return self.name == pattern.name
        if pattern.pattern_type == PatternType.LITERAL:  # MATCH: what would apply to the named resource
            return self.name == pattern.name or pattern.name == WILDCARD_RESOURCE
        return self.name.startswith(pattern.name)  # MATCH against PREFIXED

    @property
    def matches_at_most_one(self) -> bool:
        return (self.resource_type not in (ResourceType.ANY, ResourceType.UNKNOWN) and self.name is not None
                and self.pattern_type not in (PatternType.MATCH, PatternType.UNKNOWN))

    def exact_patterns(self) -> list[ResourcePattern]:
        """AclAuthorizer.filterToResources, for a filter that matches at most one resource per pattern type."""
        types = [PatternType.LITERAL, PatternType.PREFIXED] if self.pattern_type == PatternType.ANY \
            else [self.pattern_type]
        return [ResourcePattern(self.resource_type, self.name, t) for t in types]


@dataclass(frozen=True, slots=True)
class AccessControlEntryFilter:
    principal: str | None
    host: str | None
    operation: AclOperation
    permission_type: AclPermissionType

    def matches(self, entry: AccessControlEntry) -> bool:
        return ((self.principal is None or self.principal == entry.principal)
                and (self.host is None or self.host == entry.host)
                and (self.operation == AclOperation.ANY or self.operation == entry.operation)
                and (self.permission_type == AclPermissionType.ANY or self.permission_type == entry.permission_type))


@dataclass(frozen=True, slots=True)
class AclBindingFilter:
    pattern: ResourcePatternFilter
    entry: AccessControlEntryFilter

    def matches(self, binding: AclBinding) -> bool:
        return self.pattern.matches(binding.pattern) and self.entry.matches(binding.entry)

    def __str__(self) -> str:
        return (f"(patternFilter=ResourcePattern(resourceType={self.pattern.resource_type.name}, "
                f"name={'<any>' if self.pattern.name is None else self.pattern.name}, "
                f"patternType={self.pattern.pattern_type.name}), entryFilter=(principal="
                f"{'<any>' if self.entry.principal is None else self.entry.principal}, "
                f"host={'<any>' if self.entry.host is None else self.entry.host}, "
                f"operation={self.entry.operation.name}, permissionType={self.entry.permission_type.name}))")


def new_filter(resource_type: int, name: str | None, pattern_type: int, principal: str | None, host: str | None,
               operation: int, permission_type: int) -> AclBindingFilter:
    return AclBindingFilter(
        ResourcePatternFilter(ResourceType.from_code(resource_type), name, PatternType.from_code(pattern_type)),
        AccessControlEntryFilter(principal, host, AclOperation.from_code(operation),
                                 AclPermissionType.from_code(permission_type)))


def has_unknown_code(*codes: int) -> bool:
    """The requests' own validation: a 0 (UNKNOWN) resource, pattern, operation or permission code makes
    the request unparsable (Kafka closes the connection). Other unknown codes pass and become UNKNOWN."""
    return any(code == 0 for code in codes)


def kafka_order(pattern: ResourcePattern) -> tuple:
    """AclAuthorizer.ResourceOrdering: resource type, then pattern type, then name in reverse."""
    return (int(pattern.resource_type), int(pattern.pattern_type), _Reversed(pattern.name))


class _Reversed(str):
    __slots__ = ()

    def __lt__(self, other: str) -> bool:
        return str.__gt__(self, other)

    def __gt__(self, other: str) -> bool:
        return str.__lt__(self, other)
