"""AlterClientQuotas v0-v1: translate to controller.quotas and back (controller only)."""

from typing import TYPE_CHECKING

from fauxka.controller import quotas
from fauxka.model.acl_model import CLUSTER_NAME
from fauxka.model.errors import ErrorCode
from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .admin_common import active_controller, audit_denied, caller

if TYPE_CHECKING:
    from ..protocol.requests import AlterClientQuotasRequest

_KEY = 49


async def handle(ctx: RequestContext, request: "AlterClientQuotasRequest") -> Response:
    controller = active_controller(ctx)
    if controller is None:  # Kafka's getErrorResponse: every entry as sent, with the error's own message
        entries = [_entry([(e.entity_type, e.entity_name) for e in entry.entity], ErrorCode.not_controller,
                          quotas.NOT_CONTROLLER_MESSAGE) for entry in request.entries]
    elif not ctx.authorized("ALTER_CONFIGS", "CLUSTER", CLUSTER_NAME):  # getErrorResponse again
        entries = [_entry([(e.entity_type, e.entity_name) for e in entry.entity], ErrorCode.cluster_authorization_failed,
                          "Cluster authorization failed.") for entry in request.entries]
        for entry in entries:
            label = quotas.entity_label({e["entity_type"]: e["entity_name"] for e in entry["entity"]})
            audit_denied(ctx, controller, "CLIENT_QUOTA", label, "ALTER_CLIENT_QUOTAS", ErrorCode.cluster_authorization_failed,
                         entry["error_message"], request.validate_only)
    else:
        alterations = [
            quotas.Alteration(entity=as_request_map([(e.entity_type, e.entity_name) for e in entry.entity]),
                              ops=[(op.key, None if op.remove else float(op.value)) for op in entry.ops])
            for entry in request.entries
        ]
        outcomes = await controller.quotas.alter(alterations, request.validate_only, caller(ctx))
        entries = [_entry(list(o.entity.items()), o.error_code, o.error_message) for o in outcomes]
    return build(response_schema(_KEY, ctx.version), {"throttle_time": 0, "entries": entries})


def _entry(entity: list[tuple[str, str | None]], code: int, message: str | None) -> dict:
    return {"error_code": code, "error_message": message,
            "entity": [{"entity_type": t, "entity_name": n} for t, n in entity]}


def as_request_map(entity: list[tuple[str, str | None]]) -> dict[str, str | None]:
    """AlterClientQuotasRequest.entries(): the entity as a `new HashMap<>(size)` (a repeated type keeps
    its last name), in that HashMap's iteration order, which Kafka's response follows."""
    last = dict(entity)
    return {t: last[t] for t in java_hashmap_order([t for t, _ in entity], len(entity))}


def java_hashmap_order(keys: list[str], initial_capacity: int) -> list[str]:
    """Iteration order of java.util.HashMap(initial_capacity) after putting `keys` in order: by bucket
    of the spread String.hashCode in the final table, then insertion order (resizes keep it)."""
    distinct = list(dict.fromkeys(keys))
    capacity = 1
    while capacity < initial_capacity:
        capacity *= 2
    while len(distinct) > int(capacity * 0.75):
        capacity *= 2
    return sorted(distinct, key=lambda k: _spread(_java_hash(k)) & (capacity - 1))


def _java_hash(text: str) -> int:
    h = 0
    units = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(units), 2):
        h = (31 * h + int.from_bytes(units[i:i + 2], "big")) & 0xFFFFFFFF
    return h


def _spread(h: int) -> int:
    return h ^ (h >> 16)
