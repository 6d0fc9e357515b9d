"""ControlledShutdown v0-v3: a broker about to stop asks the controller to move its leaderships.

v0 has a request header without client id; v2 adds broker_epoch (a stale one: STALE_BROKER_EPOCH);
v3 is flexible. kio lacks this api: its schemas are declared in fauxka/broker/protocol/declare.py.
Kafka (KafkaApis.handleControlledShutdownRequest, KafkaController.doControlledShutdown):
CLUSTER_ACTION on the Cluster; not the controller: NOT_CONTROLLER; an unknown broker:
BROKER_NOT_AVAILABLE; else leaderships move to another live in-sync replica, the broker leaves
the other ISRs, and the answer lists the partitions (replication factor > 1) it still leads.
"""

from typing import TYPE_CHECKING

from fauxka.model.errors import ControllerMoved, ErrorCode, StoreUnavailable

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .broker_to_controller import refusal

if TYPE_CHECKING:
    from ..protocol.requests import ControlledShutdownRequest

_KEY = 7


async def handle(ctx: RequestContext, request: "ControlledShutdownRequest") -> Response:
    refused = refusal(ctx)  # the broker epoch is checked by the controller (BROKER_NOT_AVAILABLE first)
    if refused is not None:
        return _answer(ctx, refused)
    try:
        remaining = await ctx.controller.leadership.controlled_shutdown(request.broker_id,
                                                             getattr(request, "broker_epoch", -1))
    except LookupError:
        return _answer(ctx, ErrorCode.broker_not_available)
    except PermissionError:
        return _answer(ctx, ErrorCode.stale_broker_epoch)
    except ControllerMoved:
        return _answer(ctx, ErrorCode.not_controller)
    except StoreUnavailable:
        return _answer(ctx, ErrorCode.request_timed_out)
    return _answer(ctx, ErrorCode.none, remaining)


def _answer(ctx: RequestContext, error: ErrorCode, remaining=()):
    return build(response_schema(_KEY, ctx.version), {
        "error_code": error,
        "remaining_partitions": [{"topic_name": t, "partition_index": p} for t, p in remaining]})
