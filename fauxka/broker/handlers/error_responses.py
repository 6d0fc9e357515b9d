"""Each api's error response (Kafka's AbstractRequest.getErrorResponse): what a client gets when
its forwarded request cannot be answered by the controller, or when dispatch refuses it for its
role. A handler module's own `error_response(request, code)` wins (fauxka/broker/handlers/table.py passes it);
the forwardable apis' are here."""

import dataclasses
import typing

from ..protocol.build import build
from ..protocol.codec import Request, response_schema
from .admin_common import ZERO_UUID
from .token_common import create_response

NOT_CONTROLLER = "This is not the correct controller for this cluster."  # NotControllerException's message
MESSAGES = {
    7: "The request timed out.",
    -1: "The server experienced an unexpected error when processing the request.",
}


def error_response(request: Request, code: int, own=None):
    """`own(request, code)`, the handler module's builder (fauxka/broker/handlers/table.py), where it has one."""
    if own is not None:
        return own(request, code)
    body, version = request.body, request.version
    message = MESSAGES.get(code)
    error = {"error_code": code, "error_message": message}
    key = request.api.key
    if key == 19:
        values = {"topics": [{"name": t.name, "topic_id": ZERO_UUID, "topic_config_error_code": 0,
                              "num_partitions": -1, "replication_factor": -1, "configs": (), **error}
                             for t in body.topics]}
    elif key == 20:
        names = ([(t.name, t.topic_id) for t in body.topics] if version >= 6
                 else [(n, ZERO_UUID) for n in body.topic_names])
        values = {"responses": [{"name": n, "topic_id": i, **error} for n, i in names]}
    elif key == 37:
        values = {"results": [{"name": t.name, **error} for t in body.topics]}
    elif key in (33, 44):
        values = {"responses": [{"resource_type": r.resource_type, "resource_name": r.resource_name, **error}
                                for r in body.resources]}
    elif key == 49:
        values = {"entries": [{"entity": [{"entity_type": e.entity_type, "entity_name": e.entity_name}
                                          for e in entry.entity], **error} for entry in body.entries]}
    elif key == 30:
        values = {"results": [error for _ in body.creations]}
    elif key == 31:
        values = {"filter_results": [{"matching_acls": (), **error} for _ in body.filters]}
    elif key == 51:
        users = sorted({d.name for d in body.deletions} | {u.name for u in body.upsertions})
        values = {"results": [{"user": u, **error} for u in users]}
    elif key == 38:  # CreateDelegationTokenRequest.getErrorResponse: ANONYMOUS owner and requester
        return create_response(version, code, "User:ANONYMOUS", "User:ANONYMOUS")
    elif key == 43:  # ElectLeadersRequest.getErrorResponse: every named partition, and top level (v1+)
        values = {"error_code": code, "replica_election_results": [
            {"topic": t.topic, "partition_result": [{"partition_id": p, **error} for p in t.partitions]}
            for t in body.topic_partitions or ()]}
    elif key in (39, 40):  # expiry timestamp left at 0
        values = {"error_code": code, "expiry_timestamp": 0}
    else:  # one top-level error (ApiVersions, DescribeAcls, DescribeCluster, DescribeLogDirs v3+, ...)
        values = {**_blanks(response_schema(key, version)), **error}
    return build(response_schema(key, version), {"throttle_time": 0, **values})


def _blanks(cls) -> dict:
    """What an error answer leaves empty: every required list (), string "", bytes b"", nullable
    field null (as the Java response objects' defaults)."""
    hints = typing.get_type_hints(cls)
    blanks = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
            continue
        tp = hints[f.name]
        if typing.get_origin(tp) is tuple:
            blanks[f.name] = ()
        elif isinstance(tp, type) and issubclass(tp, (str, bytes)):
            blanks[f.name] = tp()
        elif type(None) in typing.get_args(tp):
            blanks[f.name] = None  # a nullable list: null, as DescribeClientQuotas' entries on an error
    return blanks
