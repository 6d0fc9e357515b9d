"""The ACL authorizer's decisions (Kafka's AclAuthorizer.authorizeAction) and the filters of the ACL apis."""

import pytest

from fauxka.broker.auth.acl_authorizer import AclAuthorizer, AuthorizerConfigError, java_host_address, super_users
from fauxka.zkstore.acl_znodes import encode_acls
from fauxka.model.acl_model import (SUPPORTED_OPERATIONS, AccessControlEntry, AclBinding, AclOperation,
                                  AclPermissionType, PatternType, ResourcePattern, ResourceType, filter_only_value,
                                  new_binding, new_filter, to_bit_field)

ALICE, BOB, ANON = "User:alice", "User:bob", "User:ANONYMOUS"
HERE = "127.0.0.1"
T, G, C = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER
LIT, PRE = PatternType.LITERAL, PatternType.PREFIXED


class Log:
    def __init__(self):
        self.lines = []

    def bind(self, **_):
        return self

    def debug(self, message, **fields):
        self.lines.append(("debug", message, fields))

    def info(self, message, **fields):
        self.lines.append(("info", message, fields))

    def error(self, message, **fields):
        self.lines.append(("error", message, fields))


def authorizer(acls: dict | None = None, supers: str | None = None, everyone: bool = False) -> AclAuthorizer:
    """An authorizer whose cache holds `acls`: {(type, name, pattern): [(principal, host, op, perm), ...]}."""
    config = {"super.users": supers, "allow.everyone.if.no.acl.found": everyone}
    auth = AclAuthorizer(config, None, Log())
    for (rtype, name, ptype), entries in (acls or {}).items():
        data = encode_acls([AccessControlEntry(p, h, AclOperation[o], AclPermissionType[k]) for p, h, o, k in entries])
        auth.cache._on_resource(ResourcePattern(rtype, name, ptype), (data, None))
    return auth


def allow(principal=ANON, op="READ", host="*"):
    return (principal, host, op, "ALLOW")


def deny(principal=ANON, op="READ", host="*"):
    return (principal, host, op, "DENY")


def test_super_users_are_always_allowed():
    auth = authorizer({(T, "t", LIT): [deny(ALICE, "ALL")]}, supers="User:admin; User:alice")
    assert auth.authorize(ALICE, HERE, "WRITE", "TOPIC", "t")
    assert auth.authorize("User:admin", HERE, "ALTER", "CLUSTER", "kafka-cluster")
    assert not auth.authorize(BOB, HERE, "READ", "TOPIC", "t")


def test_super_users_parsing():
    assert super_users("User:a;User:b;") == {"User:a", "User:b"}
    assert super_users(None) == frozenset() and super_users("") == frozenset()
    assert super_users("User:CN=x,O=y") == {"User:CN=x,O=y"}  # split at the first colon only
    with pytest.raises(AuthorizerConfigError):
        super_users("alice")
    with pytest.raises(AuthorizerConfigError):
        super_users("User:a;;User:b")


def test_no_acl_for_the_resource_follows_allow_everyone():
    assert not authorizer().authorize(ANON, HERE, "READ", "TOPIC", "t")
    assert authorizer(everyone=True).authorize(ANON, HERE, "READ", "TOPIC", "t")
    # any ACL on the resource, even for someone else, turns the default off
    auth = authorizer({(T, "t", LIT): [allow(ALICE)]}, everyone=True)
    assert not auth.authorize(ANON, HERE, "READ", "TOPIC", "t")
    assert auth.authorize(ANON, HERE, "READ", "TOPIC", "other")


def test_operations_and_implications():
    auth = authorizer({(T, "t", LIT): [allow(op="WRITE"), allow(op="ALTER_CONFIGS")]})
    assert auth.authorize(ANON, HERE, "WRITE", "TOPIC", "t")
    assert not auth.authorize(ANON, HERE, "READ", "TOPIC", "t")
    assert auth.authorize(ANON, HERE, "DESCRIBE", "TOPIC", "t")  # WRITE implies DESCRIBE
    assert auth.authorize(ANON, HERE, "DESCRIBE_CONFIGS", "TOPIC", "t")  # ALTER_CONFIGS implies DESCRIBE_CONFIGS
    for implying in ("READ", "DELETE", "ALTER"):
        assert authorizer({(T, "t", LIT): [allow(op=implying)]}).authorize(ANON, HERE, "DESCRIBE", "TOPIC", "t")
    assert not authorizer({(T, "t", LIT): [allow(op="CREATE")]}).authorize(ANON, HERE, "DESCRIBE", "TOPIC", "t")
    every = authorizer({(T, "t", LIT): [allow(op="ALL")]})
    assert all(every.authorize(ANON, HERE, op.name, "TOPIC", "t") for op in SUPPORTED_OPERATIONS[T])


def test_deny_wins_and_is_never_implied():
    auth = authorizer({(T, "t", LIT): [allow(op="ALL"), deny(op="WRITE")]})
    assert not auth.authorize(ANON, HERE, "WRITE", "TOPIC", "t")
    assert auth.authorize(ANON, HERE, "READ", "TOPIC", "t")
    assert auth.authorize(ANON, HERE, "DESCRIBE", "TOPIC", "t")  # DENY WRITE does not deny DESCRIBE
    everything_denied = authorizer({(T, "t", LIT): [allow(op="READ"), deny(op="ALL")]})
    assert not everything_denied.authorize(ANON, HERE, "READ", "TOPIC", "t")
    # a deny on the wildcard resource beats an allow on the literal one
    auth = authorizer({(T, "t", LIT): [allow()], (T, "*", LIT): [deny()]})
    assert not auth.authorize(ANON, HERE, "READ", "TOPIC", "t")


def test_wildcard_principal_and_resource():
    auth = authorizer({(T, "*", LIT): [allow("User:*")]})
    assert auth.authorize(ALICE, HERE, "READ", "TOPIC", "anything")
    assert not auth.authorize(ALICE, HERE, "READ", "GROUP", "anything")  # per resource type
    # '*' is only a wildcard as a literal name; a prefixed "*" is a prefix like any other
    assert not authorizer({(T, "*", PRE): [allow()]}).authorize(ANON, HERE, "READ", "TOPIC", "t")
    # "Group:*" is no wildcard principal
    assert not authorizer({(T, "t", LIT): [allow("Group:*")]}).authorize(ALICE, HERE, "READ", "TOPIC", "t")


def test_prefixed_resources():
    auth = authorizer({(T, "pay", PRE): [allow(op="CREATE")], (T, "payments-", PRE): [deny(op="CREATE")]})
    assert auth.authorize(ANON, HERE, "CREATE", "TOPIC", "pay")
    assert auth.authorize(ANON, HERE, "CREATE", "TOPIC", "payroll")
    assert not auth.authorize(ANON, HERE, "CREATE", "TOPIC", "pa")
    assert not auth.authorize(ANON, HERE, "CREATE", "TOPIC", "payments-eu")
    assert not auth.authorize(ANON, HERE, "CREATE", "TOPIC", "other")
    many = authorizer({(T, f"p{i}", PRE): [allow()] for i in range(30)})  # more prefixes than the name is long
    assert many.authorize(ANON, HERE, "READ", "TOPIC", "p7x") and not many.authorize(ANON, HERE, "READ", "TOPIC", "q")


def test_hosts():
    auth = authorizer({(C, "kafka-cluster", LIT): [allow(op="CREATE", host="127.0.0.1")]})
    assert auth.authorize(ANON, "127.0.0.1", "CREATE", "CLUSTER", "kafka-cluster")
    assert not auth.authorize(ANON, "10.0.0.1", "CREATE", "CLUSTER", "kafka-cluster")
    v6 = authorizer({(T, "t", LIT): [allow(host="0:0:0:0:0:0:0:1")]})
    assert v6.authorize(ANON, "::1", "READ", "TOPIC", "t")
    assert java_host_address("::ffff:127.0.0.1") == "127.0.0.1"
    assert java_host_address("fe80::1%eth0") == "fe80:0:0:0:0:0:0:1%eth0"
    assert java_host_address("10.1.2.3") == "10.1.2.3"


def test_decisions_are_logged_like_kafka():
    auth = authorizer({(T, "t", LIT): [allow()]})
    auth.authorize(ANON, HERE, "READ", "TOPIC", "t", api="fetch")
    auth.authorize(ANON, HERE, "CREATE", "TOPIC", "t", api="create_topics")
    auth.authorize(ANON, HERE, "WRITE", "TOPIC", "t", log_if_allowed=False, log_if_denied=False)
    lines = auth._log.lines
    assert [(level, message) for level, message, _ in lines] == [
        ("debug", "Principal = User:ANONYMOUS is Allowed Operation = Read from host = 127.0.0.1 on resource = "
                  "Topic:LITERAL:t for request = Fetch with resourceRefCount = 1"),
        ("info", "Principal = User:ANONYMOUS is Denied Operation = Create from host = 127.0.0.1 on resource = "
                 "Topic:LITERAL:t for request = CreateTopics with resourceRefCount = 1"),
    ]


def test_authorized_operations_bit_fields():
    assert to_bit_field(SUPPORTED_OPERATIONS[T]) == sum(1 << op for op in (3, 4, 5, 6, 7, 8, 10, 11))
    assert to_bit_field(SUPPORTED_OPERATIONS[C]) == sum(1 << op for op in (5, 7, 8, 9, 10, 11, 12))
    assert to_bit_field(SUPPORTED_OPERATIONS[G]) == (1 << 3) | (1 << 6) | (1 << 8)


def test_pattern_filters():
    literal, prefixed = ResourcePattern(T, "payments", LIT), ResourcePattern(T, "pay", PRE)
    wildcard = ResourcePattern(T, "*", LIT)

    def matches(rtype, name, ptype):
        return [p for p in (literal, prefixed, wildcard)
                if new_filter(rtype, name, ptype, None, None, 1, 1).pattern.matches(p)]
    assert matches(T, "payments", PatternType.MATCH) == [literal, prefixed, wildcard]
    assert matches(T, "payments", PatternType.ANY) == [literal]
    assert matches(T, "pay", PatternType.ANY) == [prefixed]
    assert matches(T, None, PatternType.LITERAL) == [literal, wildcard]
    assert matches(ResourceType.ANY, None, PatternType.ANY) == [literal, prefixed, wildcard]
    assert matches(G, None, PatternType.ANY) == []
    assert matches(99, None, PatternType.ANY) == []  # an unknown code matches nothing
    exact = new_filter(T, "x", PatternType.ANY, None, None, 1, 1).pattern
    assert exact.matches_at_most_one and [p.pattern_type for p in exact.exact_patterns()] == [LIT, PRE]
    assert not new_filter(T, "x", PatternType.MATCH, None, None, 1, 1).pattern.matches_at_most_one


def test_entry_filters():
    entry = AccessControlEntry(ALICE, "*", AclOperation.READ, AclPermissionType.ALLOW)
    binding = AclBinding(ResourcePattern(T, "t", LIT), entry)
    assert new_filter(1, None, 1, None, None, 1, 1).matches(binding)  # everything ANY
    assert new_filter(T, "t", LIT, ALICE, "*", 3, 3).matches(binding)
    assert not new_filter(T, "t", LIT, BOB, None, 1, 1).matches(binding)
    assert not new_filter(T, "t", LIT, None, "127.0.0.1", 1, 1).matches(binding)  # hosts compare as strings
    assert not new_filter(T, "t", LIT, None, None, 4, 1).matches(binding)
    assert not new_filter(T, "t", LIT, None, None, 1, 2).matches(binding)


def test_bindings_refuse_filter_only_values():
    assert filter_only_value(new_binding(2, "t", 3, ALICE, "*", 3, 3)) is None
    assert filter_only_value(new_binding(1, "t", 3, ALICE, "*", 3, 3)) == "resourceType must not be ANY"
    assert filter_only_value(new_binding(2, "t", 2, ALICE, "*", 3, 3)) == "patternType must not be MATCH"
    assert filter_only_value(new_binding(2, "t", 3, ALICE, "*", 1, 3)) == "operation must not be ANY"
    assert filter_only_value(new_binding(2, "t", 3, ALICE, "*", 3, 1)) == "permissionType must not be ANY"
    assert new_binding(99, "t", 3, ALICE, "*", 3, 3).is_unknown  # unknown codes become UNKNOWN
    assert str(new_binding(2, "t", 4, ALICE, "*", 3, 3)) == (
        "(pattern=ResourcePattern(resourceType=TOPIC, name=t, patternType=PREFIXED), "
        "entry=(principal=User:alice, host=*, operation=READ, permissionType=ALLOW))")


def test_cache_lists_bindings_in_kafkas_order():
    auth = authorizer({(G, "g", LIT): [allow()], (T, "a", LIT): [allow()], (T, "b", LIT): [allow(ALICE), allow(BOB)],
                       (T, "a", PRE): [allow()]})
    listed = [(b.pattern.resource_type, b.pattern.name, b.pattern.pattern_type, b.entry.principal)
              for b in auth.acls(new_filter(1, None, 1, None, None, 1, 1))]
    assert listed == [(T, "b", LIT, ALICE), (T, "b", LIT, BOB), (T, "a", LIT, ANON), (T, "a", PRE, ANON),
                      (G, "g", LIT, ANON)]
    auth.cache._on_resource(ResourcePattern(T, "b", LIT), None)  # the znode went away
    assert [b.pattern.name for b in auth.acls(new_filter(T, None, 3, None, None, 1, 1))] == ["a"]
