"""fauxka.controller.acls without processes: the read-modify-write of ACL znodes, races, fencing, filters."""

import asyncio
import json
from types import SimpleNamespace

import pytest

from fauxka.controller import acls
from fauxka.zkstore.acl_znodes import decode_acls, encode_acls
from fauxka.controller.audit import Caller
from fauxka.model.acl_model import (AccessControlEntry, AclOperation, AclPermissionType, PatternType, ResourcePattern,
                                  ResourceType, new_binding, new_filter)
from fauxka.zkstore import BadVersion, MultiFailed
from fauxka.zkstore.fenced import ControllerMoved

CALLER = Caller("User:ANONYMOUS", "127.0.0.1", 1, None, "create_acls", 3)
PATH = "/kafka-acl/Topic/t"


class FakeZk:
    def __init__(self, nodes=None):
        self.nodes = {p: (d, 0) for p, d in (nodes or {}).items()}

    async def get(self, path):
        if path not in self.nodes:
            return None
        data, version = self.nodes[path]
        return data, SimpleNamespace(version=version)

    async def ensure_path(self, path):
        pass


class FakeAdmin:
    """Applies written ops to FakeZk; `races` writes are beaten by another writer first. Stands in for
    the fenced writer, the election (active, resign), the waits (wait_cluster), the audit and the log."""

    def __init__(self, zk, races=0, moved=False):
        self.zk, self.races, self.moved, self.active = zk, races, moved, True
        self.writes, self.audits, self.resigned = [], [], []
        self.writer = SimpleNamespace(write=self._write)
        self.audit = SimpleNamespace(record=lambda caller, **event: self.audits.append(event))
        self.logged = []
        self.log = SimpleNamespace(**{level: lambda event, level=level, **kw: self.logged.append((level, event))
                                      for level in ("warning", "info", "error")})

    def resign(self, reason):
        self.resigned.append(reason)
        self.active = False

    async def wait_cluster(self, *args):
        pass

    async def _write(self, ops):
        if self.moved:
            raise ControllerMoved("moved")
        if self.races:
            self.races -= 1
            data, version = self.zk.nodes.get(PATH, (encode_acls([]), 0))
            other = AccessControlEntry("User:other", "*", AclOperation.READ, AclPermissionType.ALLOW)
            self.zk.nodes[PATH] = (encode_acls([*decode_acls(data), other]), version + 1)
            raise MultiFailed(0, BadVersion())
        self.writes.append(ops)
        for op in ops:
            if op.kind == "delete":
                del self.zk.nodes[op.path]
            elif op.kind in ("set", "create") and not op.sequence:
                version = self.zk.nodes[op.path][1] + 1 if op.path in self.zk.nodes else 0
                self.zk.nodes[op.path] = (op.data, version)


class FakeCache:
    def __init__(self, zk):
        self.zk = zk

    def patterns(self):
        return [ResourcePattern(ResourceType.TOPIC, p.rsplit("/", 1)[1], PatternType.LITERAL) for p in self.zk.nodes]

    def entries(self, pattern):
        got = self.zk.nodes.get(f"/kafka-acl/Topic/{pattern.name}")
        return tuple(decode_acls(got[0])) if got else ()

    async def wait_until(self, check, timeout_s):
        return check()


def run(coro):
    return asyncio.run(coro)


def writes(admin: FakeAdmin) -> acls.AclWrites:
    return acls.AclWrites(admin.zk, admin.writer, admin, admin, admin.audit, admin.log)


def binding(name="t", principal="User:alice", op=3):
    return new_binding(2, name, 3, principal, "*", op, 3)


def test_create_writes_the_znode_and_a_notification():
    zk = FakeZk()
    admin = FakeAdmin(zk)
    outcomes = run(writes(admin).create(FakeCache(zk), [binding(), binding(op=4), binding()], CALLER))
    assert [(o.error_code, o.error_message) for o in outcomes] == [(0, None)] * 3
    [ops] = admin.writes  # one multi-op for the resource: its znode, then the change notification
    assert [(op.kind, op.path, op.sequence) for op in ops] == [
        ("create", PATH, False), ("create", "/kafka-acl-changes/acl_changes_", True)]
    assert ops[1].data == b"TOPIC:t"
    assert [e.operation for e in decode_acls(zk.nodes[PATH][0])] == [3, 4]
    assert [a["resource_type"] for a in admin.audits] == ["ACL"] * 3
    run(writes(admin).create(FakeCache(zk), [binding()], CALLER))
    assert len(admin.writes) == 1  # nothing new: nothing written


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch):
    monkeypatch.setattr(acls, "RETRY_BACKOFF_S", 0)
    monkeypatch.setattr(acls, "RETRY_JITTER_S", 0)


def test_a_lost_race_is_read_again_and_retried():
    zk = FakeZk({PATH: encode_acls([])})
    admin = FakeAdmin(zk, races=2)
    [outcome] = run(writes(admin).create(FakeCache(zk), [binding()], CALLER))
    assert outcome.error_code == 0
    principals = [e.principal for e in decode_acls(zk.nodes[PATH][0])]
    assert principals == ["User:other", "User:alice"]  # the winner's entry is kept
    assert zk.nodes[PATH][1] == 3


def test_endless_races_and_a_moved_controller():
    zk = FakeZk()
    admin = FakeAdmin(zk, races=99)
    [outcome] = run(writes(admin).create(FakeCache(zk), [binding()], CALLER))
    assert (outcome.error_code, admin.races) == (-1, 99 - acls.MAX_ATTEMPTS)
    moved = FakeAdmin(FakeZk(), moved=True)
    outcomes = run(writes(moved).create(FakeCache(moved.zk), [binding("a"), binding("b")], CALLER))
    assert [o.error_code for o in outcomes] == [41, 41] and moved.resigned == ["moved"]


def test_a_bad_principal_fails_its_whole_resource():
    zk = FakeZk()
    admin = FakeAdmin(zk)
    outcomes = run(writes(admin).create(FakeCache(zk), [binding(principal="alice"), binding(),
                                                          binding("u")], CALLER))
    assert [(o.error_code, o.error_message) for o in outcomes] == [(-1, None), (-1, None), (0, None)]
    assert PATH not in zk.nodes


def test_delete_attributes_each_binding_to_the_first_matching_filter():
    zk = FakeZk({PATH: encode_acls([binding(op=3).entry, binding(op=4).entry]),
                 "/kafka-acl/Topic/u": encode_acls([binding("u").entry])})
    admin = FakeAdmin(zk)
    filters = [new_filter(2, "t", 3, None, None, 4, 1), new_filter(2, None, 1, None, None, 1, 1),
               new_filter(2, "nothing", 1, None, None, 1, 1)]
    results = run(writes(admin).delete(FakeCache(zk), filters, CALLER))
    found = [[(d.binding.pattern.name, int(d.binding.entry.operation)) for d in r.deleted] for r in results]
    assert found == [[("t", 4)], [("t", 3), ("u", 3)], []]
    assert zk.nodes == {}  # no ACL left: the znodes are deleted
    assert all(r.outcome.error_code == 0 for r in results)
    notifications = [op.data for ops in admin.writes for op in ops if op.sequence]
    assert notifications == [b"TOPIC:t", b"TOPIC:u"]
    assert json.loads(encode_acls([])) == {"version": 1, "acls": []}
