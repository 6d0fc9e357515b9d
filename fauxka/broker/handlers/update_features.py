"""UpdateFeatures v0-v1 (KIP-584), as a Kafka 3.9 broker in ZooKeeper mode answers it.

v0: AllowDowngrade (true: a SAFE downgrade, else an upgrade); v1: UpgradeType (1 upgrade, 2 safe
downgrade, 3 unsafe downgrade) and ValidateOnly, which Kafka's ZK-mode controller ignores.
Forwardable. Kafka (KafkaApis.handleUpdateFeatures): ALTER on the Cluster, else top-level
CLUSTER_AUTHORIZATION_FAILED "Cluster authorization failed." and no results; NOT_CONTROLLER at
the top level on a broker that is not the controller; else one result per feature
(fauxka/controller/features.py, fauxka/model/features.py).
"""

from typing import TYPE_CHECKING

from fauxka.model.errors import ErrorCode

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .admin_common import active_controller, timeout_ms
from .error_responses import MESSAGES, NOT_CONTROLLER

if TYPE_CHECKING:
    from ..protocol.requests import UpdateFeaturesRequest

_KEY = 57
UNAUTHORIZED = "Cluster authorization failed."


async def handle(ctx: RequestContext, request: "UpdateFeaturesRequest") -> Response:
    if not ctx.authorized("ALTER", "CLUSTER", "kafka-cluster"):
        return _response(ctx.version, ErrorCode.cluster_authorization_failed, UNAUTHORIZED, {})
    if active_controller(ctx) is None:
        return _response(ctx.version, ErrorCode.not_controller, NOT_CONTROLLER, {})
    first: dict[str, tuple[str, int, int]] = {}  # a feature named twice: its first entry, twice (find(name))
    updates = []
    for u in request.feature_updates:
        kind = (2 if u.allow_downgrade else 1) if ctx.version == 0 else int(u.upgrade_type)
        updates.append(first.setdefault(u.feature, (u.feature, int(u.max_version_level), kind)))
    results = await ctx.controller.features.update(updates, timeout_ms(request))
    return _response(ctx.version, ErrorCode.none, None, results)


def _response(version: int, code: int, message: str | None, results: dict):
    return build(response_schema(_KEY, version), {
        "throttle_time": 0, "error_code": code, "error_message": message,
        "results": [{"feature": name, "error_code": c, "error_message": m} for name, (c, m) in results.items()]})


def error_response(request, code: int):
    """UpdateFeaturesRequest.getErrorResponse: the top-level error, no results."""
    return _response(request.version, code, MESSAGES.get(code), {})
