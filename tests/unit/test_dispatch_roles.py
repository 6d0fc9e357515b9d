"""The api table's role column and dispatch's one role check (fauxka/broker/dispatch.py)."""

import asyncio
import ipaddress
from types import SimpleNamespace

from fauxka.broker.dispatch import dispatch, refuse_for_role
from fauxka.broker.handlers import table
from fauxka.broker.handlers.table import Handler, error_response
from fauxka.broker.protocol import api_table
from fauxka.broker.protocol.api_table import Api, Role
from fauxka.broker.protocol.build import build, error_codes
from fauxka.broker.protocol.codec import decode_request, encode_request, request_schema
from fauxka.broker.protocol.principal import serialize_principal
from fauxka.model.errors import ErrorCode


def _ctx(key: int, version: int, values: dict, *, active: bool, forwarded_by=None, **services):
    frame = encode_request(build(request_schema(key, version), values), correlation_id=1, client_id="c")[4:]
    request = decode_request(frame, api_table.lookup(key), version)
    return SimpleNamespace(request=request, forwarded_by=forwarded_by, controller_active=lambda: active,
                           faults=None, **services)


def _envelope_values():
    inner = build(request_schema(19, 7), {"topics": [], "timeout": 1000, "validate_only": True})
    return {"request_data": encode_request(inner, correlation_id=7, client_id="c")[4:],
            "request_principal": serialize_principal("User:bob"),
            "client_host_address": ipaddress.ip_address("10.0.0.7").packed}


def test_api_stays_constructible_positionally_with_role_a_keyword():
    api = Api(99, "metadata", 0, 1, True)
    assert api.role is Role.ANY and api.forwardable
    assert Api(99, "metadata", 0, 1, role=Role.LEADER).role is Role.LEADER
    assert api_table.lookup(19).role is Role.CONTROLLER and api_table.lookup(3).role is Role.ANY
    assert api_table.lookup(58).role is Role.CONTROLLER and not api_table.lookup(58).forwardable


def test_controller_only_api_on_a_non_controller_gets_not_controller():
    ctx = _ctx(58, 0, _envelope_values(), active=False)
    refused = refuse_for_role(ctx, ctx.request.api, table.HANDLERS[58])
    assert refused.error_code == ErrorCode.not_controller and refused.response_data is None
    assert refuse_for_role(_ctx(58, 0, _envelope_values(), active=True), ctx.request.api, table.HANDLERS[58]) is None


def test_forwardable_controller_api_is_left_to_its_handler_inside_an_envelope():
    ctx = _ctx(19, 7, {"topics": [], "timeout": 1000, "validate_only": True}, active=False, forwarded_by=2)
    assert refuse_for_role(ctx, ctx.request.api, table.HANDLERS[19]) is None


def test_coordinator_role_answers_not_coordinator_through_the_module_hooks():
    ctx = _ctx(3, 12, {"topics": None, "allow_auto_topic_creation": False,
                       "include_topic_authorized_operations": False},
               active=True, groups=SimpleNamespace(owns=lambda key: key == "mine"),
               transactions=SimpleNamespace(owns=lambda key: key == "ours"))
    api = Api(3, "metadata", 0, 12, role=Role.GROUP_COORDINATOR)
    assert refuse_for_role(ctx, api, table.HANDLERS[3]) is None  # no coordinator_key: nothing to check
    theirs = Handler(None, error_response=lambda request, code: code, coordinator_key=lambda request: "theirs")
    mine = Handler(None, error_response=lambda request, code: code, coordinator_key=lambda request: "mine")
    assert refuse_for_role(ctx, api, theirs) == ErrorCode.not_coordinator
    assert refuse_for_role(ctx, api, mine) is None
    txn_api = Api(3, "metadata", 0, 12, role=Role.TXN_COORDINATOR)  # the transaction role asks its own coordinator
    ours = Handler(None, error_response=lambda request, code: code, coordinator_key=lambda request: "ours")
    assert refuse_for_role(ctx, txn_api, mine) == ErrorCode.not_coordinator
    assert refuse_for_role(ctx, txn_api, ours) is None


def test_dispatch_passes_a_handler_answering_nothing_on():
    async def handle(ctx, body):
        return None
    ctx = _ctx(3, 12, {"topics": None, "allow_auto_topic_creation": False,
                       "include_topic_authorized_operations": False}, active=True)
    assert asyncio.run(dispatch(ctx, Handler(handle))) is None


def test_generic_error_response_carries_the_code():
    ctx = _ctx(19, 7, {"topics": [{"name": "t", "num_partitions": 1, "replication_factor": 1, "assignments": [],
                                   "configs": []}], "timeout": 1000, "validate_only": False}, active=False)
    assert table.handler(ctx.request.api).error_response is None  # create_topics has no builder of its own
    assert error_codes(error_response(ctx.request, ErrorCode.not_controller)) == {41}
