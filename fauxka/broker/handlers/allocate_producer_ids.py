"""AllocateProducerIds v0 (KIP-730): a broker asks the controller for a block of producer ids.

Only v0 exists. Kafka (KafkaApis.handleAllocateProducerIdsRequest, KafkaController
.processAllocateProducerIds): CLUSTER_ACTION on the Cluster, else CLUSTER_AUTHORIZATION_FAILED;
not the controller: NOT_CONTROLLER; an unknown broker or stale broker epoch: STALE_BROKER_EPOCH;
else the next block of 1000 from /latest_producer_id_block.
"""

from typing import TYPE_CHECKING

from fauxka.model.errors import ControllerMoved, ErrorCode, KafkaError, StoreUnavailable

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .broker_to_controller import refusal

if TYPE_CHECKING:
    from ..protocol.requests import AllocateProducerIdsRequest

_KEY = 67


async def handle(ctx: RequestContext, request: "AllocateProducerIdsRequest") -> Response:
    refused = refusal(ctx, request.broker_id, request.broker_epoch)
    if refused is not None:
        return _answer(ctx.version, refused)
    try:
        block = await ctx.controller.producer_ids.allocate(request.broker_id)
    except ControllerMoved:  # the controller resigned
        return _answer(ctx.version, ErrorCode.not_controller)
    except StoreUnavailable:
        return _answer(ctx.version, ErrorCode.request_timed_out)
    except KafkaError as exc:
        return _answer(ctx.version, exc.code)
    ctx.log.info("producer id block allocated", broker=request.broker_id, start=block.block_start,
                 end=block.block_end)
    return _answer(ctx.version, ErrorCode.none, block.block_start, block.block_end - block.block_start + 1)


def _answer(version: int, error: ErrorCode, start: int = -1, length: int = 0):
    return build(response_schema(_KEY, version), {"throttle_time": 0, "error_code": error,
                                                  "producer_id_start": start, "producer_id_len": length})


def error_response(request, code):
    """AllocateProducerIdsRequest.getErrorResponse (dispatch's NOT_CONTROLLER): no block, start 0."""
    return _answer(request.version, code, 0, 0)
