"""AlterUserScramCredentials v0 (controller only; KafkaApis.handleAlterUserScramCredentialsRequest):
not the controller: ErrorCode.not_controller; no Alter on the Cluster: ErrorCode.cluster_authorization_failed; then
controller.scram."""

from typing import TYPE_CHECKING

from fauxka.controller import scram
from fauxka.controller.quotas import NOT_CONTROLLER_MESSAGE
from fauxka.model.errors import ErrorCode
from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .admin_common import active_controller, caller

if TYPE_CHECKING:
    from ..protocol.requests import AlterUserScramCredentialsRequest

_KEY = 51


async def handle(ctx: RequestContext, request: "AlterUserScramCredentialsRequest") -> Response:
    controller = active_controller(ctx)
    if controller is None:
        results = _every_user(request, ErrorCode.not_controller, NOT_CONTROLLER_MESSAGE)
    elif not ctx.authorized("ALTER", "CLUSTER", "kafka-cluster"):
        results = _every_user(request, ErrorCode.cluster_authorization_failed, "Cluster authorization failed.")
    else:
        deletions = [scram.Deletion(d.name, int(d.mechanism)) for d in request.deletions]
        upsertions = [scram.Upsertion(u.name, int(u.mechanism), int(u.iterations), bytes(u.salt),
                                      bytes(u.salted_password)) for u in request.upsertions]
        outcomes = await controller.scram.alter(deletions, upsertions,
                                                            caller(ctx))
        results = [{"user": o.user, "error_code": o.error_code, "error_message": o.error_message} for o in outcomes]
    return build(response_schema(_KEY, ctx.version), {"throttle_time": 0, "results": results})


def _every_user(request, code: int, message: str) -> list[dict]:
    """AlterUserScramCredentialsRequest.getErrorResponse: each user once, sorted."""
    users = sorted({d.name for d in request.deletions} | {u.name for u in request.upsertions})
    return [{"user": user, "error_code": code, "error_message": message} for user in users]
