"""CreatePartitions v0-v3: translate to controller.partitions and back."""

from controller.partitions import PartitionIncrease, create_partitions, kafka_map_order
from model.errors import ErrorCode
from ..protocol.build import build
from ..protocol.codec import response_schema
from .admin_common import admin, caller, timeout_ms

_KEY = 37


async def handle(ctx, request):
    controller = admin(ctx)
    if controller is None:
        # Kafka answers from a Map: one result per distinct name
        results = [_result(name, ErrorCode.not_controller, None) for name in kafka_map_order([t.name for t in request.topics])]
    else:
        requests = [PartitionIncrease(t.name, t.count, _assignments(t)) for t in request.topics]
        outcomes = await create_partitions(controller, requests, request.validate_only, timeout_ms(request),
                                           caller(ctx), lambda name: ctx.authorized("ALTER", "TOPIC", name))
        results = [_result(o.name, o.error_code, o.error_message) for o in outcomes]
    return build(response_schema(_KEY, ctx.version), {"throttle_time": 0, "results": results})


def _assignments(topic) -> list[list[int]] | None:
    # null (Kafka places the new partitions) differs from [] (a manual assignment of nothing)
    return None if topic.assignments is None else [list(a.broker_ids) for a in topic.assignments]


def _result(name: str, code: int, message: str | None) -> dict:
    return {"name": name, "error_code": code, "error_message": message}
