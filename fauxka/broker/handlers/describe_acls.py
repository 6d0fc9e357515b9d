"""DescribeAcls v1-v3 (Kafka's AclApis.handleDescribeAcls), answered by any broker from its ACL cache."""

from typing import TYPE_CHECKING

from fauxka.model.acl_model import CLUSTER_NAME, has_unknown_code, new_filter
from fauxka.model.errors import ErrorCode
from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import RequestParseError, response_schema
from ..protocol.requests import Response
from .admin_common import acl_authorizer, not_authorized_message

if TYPE_CHECKING:
    from ..protocol.requests import DescribeAclsRequest

_KEY = 29
NO_AUTHORIZER = "No Authorizer is configured on the broker"


def validate(request) -> None:
    """DescribeAclsRequest's constructor: a 0 (UNKNOWN) code makes the request unparsable."""
    if has_unknown_code(request.resource_type_filter, request.pattern_type_filter, request.operation,
                        request.permission_type):
        raise RequestParseError("DescribeAclsRequest contains UNKNOWN elements")


async def handle(ctx: RequestContext, request: "DescribeAclsRequest") -> Response:
    validate(request)  # Kafka closes the connection
    body = {"throttle_time": 0, "error_code": 0, "error_message": None, "resources": ()}
    authorizer = acl_authorizer(ctx)
    if not ctx.authorized("DESCRIBE", "CLUSTER", CLUSTER_NAME):
        body.update(error_code=ErrorCode.cluster_authorization_failed, error_message=not_authorized_message(ctx))
    elif authorizer is None:
        body.update(error_code=ErrorCode.security_disabled, error_message=NO_AUTHORIZER)
    else:
        acl_filter = new_filter(request.resource_type_filter, request.resource_name_filter,
                                request.pattern_type_filter, request.principal_filter, request.host_filter,
                                request.operation, request.permission_type)
        resources: dict = {}  # DescribeAclsResponse.aclsResources: one entry per resource pattern
        for binding in authorizer.acls(acl_filter):
            entry = binding.entry
            resources.setdefault(binding.pattern, []).append(
                {"principal": entry.principal, "host": entry.host, "operation": int(entry.operation),
                 "permission_type": int(entry.permission_type)})
        body["resources"] = [{"resource_type": int(p.resource_type), "resource_name": p.name,
                              "pattern_type": int(p.pattern_type), "acls": acls} for p, acls in resources.items()]
    return build(response_schema(_KEY, ctx.version), body)
