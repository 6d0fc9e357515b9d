"""Pieces the admin handlers share: who is asking, timeouts, the controller check."""

import time
import uuid

from fauxka.controller.areas import ControllerAreas
from fauxka.controller.audit import Caller

from ..auth.acl_authorizer import AclAuthorizer
from ..context import RequestContext

ZERO_UUID = uuid.UUID(int=0)


def caller(ctx: RequestContext) -> Caller:
    return Caller(principal=ctx.principal, client_address=ctx.client_host, receiving_broker=ctx.broker_id,
                  forwarded_by=ctx.forwarded_by, api=ctx.request.api.name, api_version=ctx.version)


def timeout_ms(request) -> int:
    return int(request.timeout.total_seconds() * 1000)


def forwarded_wait_s(ctx: RequestContext, request, received: float) -> float:
    """How long a forwarding broker may still wait on its own cache (after_forward): what is left
    of the request's timeout and of request.timeout.ms, both counted from when it received the
    request, so the wait never stretches the client's request past either."""
    limit_ms = min(timeout_ms(request), ctx.config["request.timeout.ms"])
    return received + limit_ms / 1000 - time.monotonic()


def active_controller(ctx: RequestContext) -> ControllerAreas | None:
    """The controller's areas, or None when this broker is not the active controller."""
    controller = ctx.controller
    return controller if controller.active else None


def dynamic_broker_layers(ctx: RequestContext) -> tuple[dict, dict]:
    """This broker's dynamic configs and the cluster-wide dynamic defaults, as the broker applies them."""
    dynamic, dynamic_default, _static = ctx.controller.topics.broker_layers()
    return dynamic, dynamic_default


def not_authorized_message(ctx: RequestContext) -> str:
    """AuthHelper.authorizeClusterOperation's ClusterAuthorizationException message, which names the
    request as RequestChannel.Request.toString does (the connection id as far as fauxka knows it)."""
    conn = ctx.connection
    endpoint = conn.endpoint if conn is not None else None
    listener = endpoint.listener if endpoint else ctx.listener
    protocol = endpoint.security_protocol if endpoint else "PLAINTEXT"
    bound = endpoint  # the connection's listener as bound (its port, if 0 was configured)
    local = f"{(bound.host if bound else '') or ctx.client_host}:{bound.port if bound else 0}"
    connection_id = getattr(conn, "connection_id", None) or f"{local}-{ctx.client_host}:0-0"
    return (f"Request Request(processor=0, connectionId={connection_id}, "
            f"session=Session({ctx.principal},/{ctx.client_host}), listenerName=ListenerName({listener}), "
            f"securityProtocol={protocol}, buffer=null, envelope=None) is not authorized.")


def audit_denied(ctx: RequestContext, controller: ControllerAreas, resource_type: str, name: str, action: str, code: int,
                 message: str | None, validate_only: bool = False) -> None:
    """The audit line of a resource refused by authorization before the controller saw it."""
    controller.audit.record(caller(ctx), resource_type=resource_type, resource_name=name, action=action,
                            validate_only=validate_only, error_code=code, error_message=message, latency_ms=0.0)


def acl_authorizer(ctx: RequestContext) -> AclAuthorizer | None:
    """The broker's ACL authorizer; None when no authorizer is configured (Kafka: SECURITY_DISABLED)."""
    authorizer = ctx.authorizer
    return authorizer if isinstance(authorizer, AclAuthorizer) else None
