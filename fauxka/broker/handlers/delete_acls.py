"""DeleteAcls v1-v3 (Kafka's AclApis.handleDeleteAcls): Alter on the Cluster, then controller.acls."""

from typing import TYPE_CHECKING

from fauxka.model.acl_model import CLUSTER_NAME, has_unknown_code, new_filter
from fauxka.model.errors import ErrorCode
from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import RequestParseError, response_schema
from ..protocol.requests import Response
from .admin_common import acl_authorizer, active_controller, audit_denied, caller, not_authorized_message

if TYPE_CHECKING:
    from ..protocol.requests import DeleteAclsRequest

_KEY = 31
NO_AUTHORIZER = "No Authorizer is configured."


def validate(request) -> None:
    """DeleteAclsRequest's constructor: a 0 (UNKNOWN) code makes the request unparsable."""
    if any(has_unknown_code(f.resource_type_filter, f.pattern_type_filter, f.operation, f.permission_type)
           for f in request.filters):
        raise RequestParseError("Filters contain UNKNOWN elements")


async def handle(ctx: RequestContext, request: "DeleteAclsRequest") -> Response:
    validate(request)
    filters = [new_filter(f.resource_type_filter, f.resource_name_filter, f.pattern_type_filter, f.principal_filter,
                          f.host_filter, f.operation, f.permission_type) for f in request.filters]
    authorizer = acl_authorizer(ctx)
    if not ctx.authorized("ALTER", "CLUSTER", CLUSTER_NAME):
        message = not_authorized_message(ctx)
        results = [_result(ErrorCode.cluster_authorization_failed, message, ()) for _ in filters]
        for acl_filter in filters:
            audit_denied(ctx, ctx.controller, "ACL", str(acl_filter), "DELETE_ACLS",
                         ErrorCode.cluster_authorization_failed, message)
    elif authorizer is None:
        results = [_result(ErrorCode.security_disabled, NO_AUTHORIZER, ()) for _ in filters]
    elif (controller := active_controller(ctx)) is None:
        results = [_result(ErrorCode.not_controller, None, ()) for _ in filters]
    else:
        found = await controller.acls.delete(authorizer.cache, filters, caller(ctx))
        results = [_result(r.outcome.error_code, r.outcome.error_message, [_matching(d) for d in r.deleted])
                   for r in found]
    return build(response_schema(_KEY, ctx.version), {"throttle_time": 0, "filter_results": results})


def _result(code: int, message: str | None, matching) -> dict:
    return {"error_code": code, "error_message": message, "matching_acls": matching}


def _matching(deleted) -> dict:
    pattern, entry = deleted.binding.pattern, deleted.binding.entry
    return {"error_code": deleted.outcome.error_code, "error_message": deleted.outcome.error_message,
            "resource_type": int(pattern.resource_type), "resource_name": pattern.name,
            "pattern_type": int(pattern.pattern_type), "principal": entry.principal, "host": entry.host,
            "operation": int(entry.operation), "permission_type": int(entry.permission_type)}
