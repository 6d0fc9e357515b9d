import pytest

from fauxka.broker.protocol import api_table
from fauxka.broker.protocol.build import build
from fauxka.broker.protocol.codec import (RequestParseError, decode_request, decode_response, encode_request,
                                   encode_response, peek, request_schema, response_schema)


def test_api_table_versions_have_schemas():
    """Every version the table serves has a request and response class: kio's, or old_versions'."""
    for api in api_table.TABLE.values():
        for version in range(api.min_version, api.max_version + 1):
            assert request_schema(api.key, version).__api_key__ == api.key
            assert response_schema(api.key, version).__version__ == version


def test_api_table_handlers_resolve():
    from fauxka.broker.handlers import table

    for api in api_table.TABLE.values():
        assert callable(table.handler(api).handle)


def test_request_round_trip_keeps_the_original_frame():
    request = build(request_schema(3, 12), {"topics": None, "allow_auto_topic_creation": False,
                                            "include_topic_authorized_operations": False})
    framed = encode_request(request, correlation_id=9, client_id="me")
    frame = framed[4:]
    assert peek(frame) == (3, 12, 9)
    parsed = decode_request(frame, api_table.lookup(3), 12)
    assert parsed.body == request
    assert parsed.client_id == "me" and parsed.correlation_id == 9
    assert parsed.frame == frame


def test_truncated_request_is_a_parse_error():
    request = build(request_schema(18, 3), {"client_software_name": "a", "client_software_version": "b"})
    frame = encode_request(request, 1, "c")[4:]
    with pytest.raises(RequestParseError):
        decode_request(frame[:-3], api_table.lookup(18), 3)
    with pytest.raises(RequestParseError):
        peek(frame[:5])


def test_build_drops_fields_a_version_lacks_and_converts_codes():
    values = {"throttle_time": 5, "brokers": [{"node_id": 1, "host": "h", "port": 1, "rack": "r"}],
              "cluster_id": "c", "controller_id": 1,
              "topics": [{"error_code": 3, "name": "t", "is_internal": False, "partitions": [],
                          "topic_authorized_operations": 0}]}
    v0 = build(response_schema(3, 0), values)
    assert not hasattr(v0, "cluster_id")
    assert int(v0.topics[0].error_code) == 3
    v12 = build(response_schema(3, 12), {**values, "topics": [{**values["topics"][0], "topic_id": None}]})
    assert v12.throttle_time.total_seconds() == 0.005
    assert v12.brokers[0].rack == "r"


def test_api_versions_response_uses_header_v0_even_when_flexible():
    response = build(response_schema(18, 3), {"error_code": 0, "api_keys": [], "throttle_time": 0})
    framed = encode_response(77, response)
    assert framed[4:8] == (77).to_bytes(4, "big")
    assert decode_response(framed[4:], request_schema(18, 3)) == (77, response)


def test_every_handler_module_is_in_the_api_table():
    """A handler module (one with `handle`) the table does not name is an api brokers close the
    connection on: two merges lost ElectLeaders and IncrementalAlterConfigs that way. The handler
    table (fauxka/broker/handlers/table.py) and the api table name the same apis, each api's module by its
    schema name, and a module that spells its api key agrees with the table."""
    import importlib
    import pkgutil

    import fauxka.broker.handlers
    from fauxka.broker.handlers import table

    named = {api.name for api in api_table.TABLE.values()}
    handlers = {m.name for m in pkgutil.iter_modules(fauxka.broker.handlers.__path__)
                if hasattr(importlib.import_module(f"fauxka.broker.handlers.{m.name}"), "handle")}
    assert handlers - named == set()
    assert table.MODULES.keys() == table.HANDLERS.keys() == api_table.TABLE.keys()
    for key, module in table.MODULES.items():
        assert module.__name__ == f"fauxka.broker.handlers.{api_table.TABLE[key].name}"
        assert getattr(module, "_KEY", key) == key, module.__name__


def test_every_handler_is_typed_with_the_context_and_its_apis_newest_request_class():
    """`handle(ctx: RequestContext, request: <the api's request class>) -> Response`: the request type
    a handler names (fauxka/broker/protocol/requests.py, imported for a type checker only) is the class of
    the newest version the api table serves, so a reader (or an IDE) follows the right fields."""
    import ast
    import inspect
    import typing

    from fauxka.broker.context import RequestContext
    from fauxka.broker.handlers import table
    from fauxka.broker.protocol import requests

    source = ast.parse(inspect.getsource(requests))
    guarded = next(node for node in source.body if isinstance(node, ast.If))  # `if TYPE_CHECKING:`
    classes = {}
    for node in guarded.body:
        if isinstance(node, ast.ImportFrom):
            module = __import__(node.module, fromlist=[a.name for a in node.names])
            classes.update({a.name: getattr(module, a.name) for a in node.names})
    for key, module in table.MODULES.items():
        annotations = module.handle.__annotations__
        assert annotations["ctx"] is RequestContext, module.__name__
        assert annotations["return"] == requests.Response, module.__name__
        newest = request_schema(key, api_table.TABLE[key].max_version)
        named = typing.ForwardRef(annotations["request"]).__forward_arg__
        if newest.__module__.startswith("kio."):
            assert classes[named] is newest, module.__name__
        else:  # declared by fauxka/broker/protocol/declare.py (ControlledShutdown)
            assert named == newest.__name__, module.__name__
