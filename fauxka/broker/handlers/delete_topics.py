"""DeleteTopics v1-v6 (by name, or by topic id from v6)."""

from typing import TYPE_CHECKING

from fauxka.model.errors import ErrorCode

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from . import throttling
from .admin_common import ZERO_UUID, active_controller, audit_denied, caller, forwarded_wait_s, timeout_ms

if TYPE_CHECKING:
    from ..protocol.requests import DeleteTopicsRequest

_KEY = 20


async def after_forward(ctx: RequestContext, request, response, received: float) -> None:
    """A forwarding broker passes the answer on once its own cache no longer lists the deleted
    topics (bounded by the request's timeout)."""
    deleted = {r.name for r in response.responses if int(r.error_code) == 0 and r.name is not None}
    if deleted and timeout_ms(request) > 0:
        topics = ctx.controller.topics
        await topics.purgatory.wait(deleted, topics.gone, forwarded_wait_s(ctx, request, received))


def _requested(ctx: RequestContext, request) -> list[tuple[str | None, object]]:
    if ctx.version >= 6:
        return [(t.name, t.topic_id or ZERO_UUID) for t in request.topics]
    return [(name, ZERO_UUID) for name in request.topic_names]


async def handle(ctx: RequestContext, request: "DeleteTopicsRequest") -> Response:
    requested = _requested(ctx, request)
    controller = active_controller(ctx)
    if controller is None:
        results = [_result(name, tid, ErrorCode.not_controller) for name, tid in requested]
    elif not ctx.config["delete.topic.enable"]:
        code = ErrorCode.invalid_request if ctx.version < 3 else ErrorCode.topic_deletion_disabled
        results = [_result(name, tid, code) for name, tid in requested]
    elif any(name is not None and tid != ZERO_UUID for name, tid in requested):
        message = "Topic name and topic ID can not both be specified."
        results = [_result(name, tid, ErrorCode.invalid_request, message) for name, tid in requested]
    else:
        results = []
        to_delete = []
        for name, tid in requested:
            if tid != ZERO_UUID:
                name = ctx.cache.topic_by_id(tid)
                if name is None:
                    results.append(_result(None, tid, ErrorCode.unknown_topic_id))
                    continue
                if not ctx.authorized("DESCRIBE", "TOPIC", name):  # the name stays hidden, the id is no secret
                    results.append(_refused(ctx, controller, None, tid, name))
                    continue
            if not ctx.authorized("DELETE", "TOPIC", name):
                results.append(_refused(ctx, controller, name, tid, name))
                continue
            if name not in ctx.cache.topics:
                results.append(_result(name, tid, ErrorCode.unknown_topic_or_partition))
                continue
            if name not in to_delete and not throttling.admit(ctx, len(ctx.cache.partitions_of(name))):
                results.append(_result(name, tid, ErrorCode.throttling_quota_exceeded, throttling.MESSAGE))
                continue
            results.append(_result(name, tid, 0))
            to_delete.append(name)
        if to_delete:
            outcomes = await controller.topics.delete_topics(list(dict.fromkeys(to_delete)), timeout_ms(request), caller(ctx))
            for result in results:
                outcome = outcomes.get(result["name"]) if result["error_code"] == 0 else None
                if outcome is not None:
                    result["error_code"], result["error_message"] = outcome.error_code, outcome.error_message
    throttle = 0 if controller is None else throttling.throttle_ms(ctx)
    return build(response_schema(_KEY, ctx.version), {"throttle_time": throttle, "responses": results})


def _refused(ctx: RequestContext, controller, shown: str | None, topic_id, name: str) -> dict:
    audit_denied(ctx, controller, "TOPIC", name, "DELETE", ErrorCode.topic_authorization_failed, None)
    return _result(shown, topic_id, ErrorCode.topic_authorization_failed)


def _result(name, topic_id, code: int, message: str | None = None) -> dict:
    return {"name": name, "topic_id": topic_id, "error_code": code, "error_message": message}
