"""CreatePartitions v0-v3: translate to controller.partitions and back."""

from typing import TYPE_CHECKING

from fauxka.controller.partitions import PartitionIncrease, kafka_map_order
from fauxka.model.errors import ErrorCode
from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from . import throttling
from .admin_common import active_controller, caller, timeout_ms

if TYPE_CHECKING:
    from ..protocol.requests import CreatePartitionsRequest

_KEY = 37


async def handle(ctx: RequestContext, request: "CreatePartitionsRequest") -> Response:
    controller = active_controller(ctx)
    if controller is None:
        # Kafka answers from a Map: one result per distinct name
        results = [_result(name, ErrorCode.not_controller, None) for name in kafka_map_order([t.name for t in request.topics])]
    else:
        names = [t.name for t in request.topics]
        throttled = set()
        if not request.validate_only:  # KIP-599: the partitions added are the permits, in request order
            for t in request.topics:
                if names.count(t.name) == 1 and not throttling.admit(
                        ctx, t.count - len(ctx.cache.partitions_of(t.name))):
                    throttled.add(t.name)
        requests = [PartitionIncrease(t.name, t.count, _assignments(t)) for t in request.topics
                    if t.name not in throttled]
        outcomes = await controller.partitions.create(requests, request.validate_only, timeout_ms(request),
                                           caller(ctx), lambda name: ctx.authorized("ALTER", "TOPIC", name))
        results = [_result(o.name, o.error_code, o.error_message) for o in outcomes]
        if throttled:  # one answer per distinct name, in Kafka's map order
            answered = {r["name"]: r for r in results}
            answered |= {n: _result(n, ErrorCode.throttling_quota_exceeded, throttling.MESSAGE) for n in throttled}
            results = [answered[n] for n in kafka_map_order(names) if n in answered]
    throttle = 0 if controller is None else throttling.throttle_ms(ctx)
    return build(response_schema(_KEY, ctx.version), {"throttle_time": throttle, "results": results})


def _assignments(topic) -> list[list[int]] | None:
    # null (Kafka places the new partitions) differs from [] (a manual assignment of nothing)
    return None if topic.assignments is None else [list(a.broker_ids) for a in topic.assignments]


def _result(name: str, code: int, message: str | None) -> dict:
    return {"name": name, "error_code": code, "error_message": message}
