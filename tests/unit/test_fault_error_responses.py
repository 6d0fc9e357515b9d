"""An `error` fault on an api without partitions answers as Kafka's getErrorResponse does: the
error where that api carries errors (per topic, per group, per resource, top level), never a
response that cannot be built."""

from types import SimpleNamespace

import pytest

from fauxka.broker.handlers.table import HANDLERS, error_response
from fauxka.broker.protocol.api_table import TABLE
from fauxka.broker.protocol.build import error_codes, field_names
from fauxka.broker.protocol.codec import encode_response
from fauxka.model.faults import PARTITION_APIS
from tests.unit.test_dispatch_roles import _ctx

NAMED = {19, 20, 37, 33, 44, 49, 30, 31, 51, 38, 43}  # error_responses.py's branches that read the request


@pytest.mark.parametrize("key", sorted(k for k, api in TABLE.items()
                                       if HANDLERS[k].error_response is None and k not in NAMED | PARTITION_APIS))
def test_every_top_level_error_answer_builds_and_encodes_in_every_version(key):
    api = TABLE[key]
    for version in range(api.min_version, api.max_version + 1):
        request = SimpleNamespace(api=SimpleNamespace(key=key), body=None, version=version)
        response = error_response(request, 15)
        # where the version has no error field (DescribeLogDirs v0-2), Kafka's answer carries none either
        assert 15 in error_codes(response) or "error_code" not in field_names(type(response)), (api.name, version)
        assert encode_response(1, response)


@pytest.mark.parametrize("key, version, values, per_entity", [
    (3, 12, {"topics": [{"topic_id": None, "name": "t"}, {"topic_id": None, "name": "u"}],
             "allow_auto_topic_creation": False, "include_topic_authorized_operations": False},
     lambda r: [(t.name, t.error_code) for t in r.topics] == [("t", 15), ("u", 15)] and r.brokers == ()),
    (3, 0, {"topics": [{"name": "t"}]}, lambda r: [(t.name, t.error_code) for t in r.topics] == [("t", 15)]),
    (15, 5, {"groups": ["g1", "g2"], "include_authorized_operations": False},
     lambda r: [(g.group_id, g.error_code) for g in r.groups] == [("g1", 15), ("g2", 15)]),
    (32, 4, {"resources": [{"resource_type": 2, "resource_name": "t", "configuration_keys": None}],
             "include_synonyms": False, "include_documentation": False},
     lambda r: [(x.resource_name, x.error_code, x.configs) for x in r.results] == [("t", 15, ())]),
    (50, 0, {"users": [{"name": "alice"}]},
     lambda r: r.error_code == 15 and [(x.user, x.error_code) for x in r.results] == [("alice", 15)]),
    (19, 7, {"topics": [{"name": "t", "num_partitions": 1, "replication_factor": 1, "assignments": [],
                         "configs": []}], "timeout": 1000, "validate_only": False},
     lambda r: [(t.name, t.error_code) for t in r.topics] == [("t", 15)]),
    (42, 2, {"groups_names": ["g1"]}, lambda r: [(x.group_id, x.error_code) for x in r.results] == [("g1", 15)]),
    (10, 4, {"key_type": 0, "coordinator_keys": ["g1", "g2"]},
     lambda r: [(c.key, c.error_code) for c in r.coordinators] == [("g1", 15), ("g2", 15)]),
])
def test_the_error_goes_where_the_api_carries_it(key, version, values, per_entity):
    response = error_response(_ctx(key, version, values, active=True).request, 15)
    assert per_entity(response)
    assert encode_response(1, response)
