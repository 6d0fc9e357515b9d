"""CreateAcls v1-v3 (Kafka's AclApis.handleCreateAcls): Alter on the Cluster, then controller.acls."""

from typing import TYPE_CHECKING

from fauxka.model.acl_model import CLUSTER_NAME, filter_only_value, has_unknown_code, new_binding
from fauxka.model.errors import ErrorCode
from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import RequestParseError, response_schema
from ..protocol.requests import Response
from .admin_common import acl_authorizer, active_controller, audit_denied, caller, not_authorized_message

if TYPE_CHECKING:
    from ..protocol.requests import CreateAclsRequest

_KEY = 30
NO_AUTHORIZER = "No Authorizer is configured."


def validate(request) -> None:
    """CreateAclsRequest's constructor: a 0 (UNKNOWN) code makes the request unparsable."""
    if any(has_unknown_code(c.resource_type, c.resource_pattern_type, c.operation, c.permission_type)
           for c in request.creations):
        raise RequestParseError("CreatableAcls contain unknown elements")


async def handle(ctx: RequestContext, request: "CreateAclsRequest") -> Response:
    validate(request)
    bindings = [new_binding(c.resource_type, c.resource_name, c.resource_pattern_type, c.principal, c.host,
                            c.operation, c.permission_type) for c in request.creations]
    authorizer = acl_authorizer(ctx)
    refused = None
    if not ctx.authorized("ALTER", "CLUSTER", CLUSTER_NAME):
        refused = (ErrorCode.cluster_authorization_failed, not_authorized_message(ctx))
    elif authorizer is None:
        results = [_result(ErrorCode.security_disabled, NO_AUTHORIZER) for _ in bindings]
    elif (controller := active_controller(ctx)) is None:
        results = [_result(ErrorCode.not_controller, None) for _ in bindings]
    elif any(filter_only_value(b) for b in bindings):
        refused = (ErrorCode.unknown_server_error, None)  # Kafka's handler throws for the whole request
    else:
        outcomes = await controller.acls.create(authorizer.cache, bindings, caller(ctx))
        results = [_result(o.error_code, o.error_message) for o in outcomes]
    if refused is not None:
        results = [_result(*refused) for _ in bindings]
        for binding in bindings:
            audit_denied(ctx, ctx.controller, "ACL", str(binding), "CREATE_ACLS", *refused)
    return build(response_schema(_KEY, ctx.version), {"throttle_time": 0, "results": results})


def _result(code: int, message: str | None) -> dict:
    return {"error_code": code, "error_message": message}
