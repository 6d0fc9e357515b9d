"""Pieces the admin handlers share: who is asking, timeouts, the controller check."""

import uuid

from controller.audit import Caller

ZERO_UUID = uuid.UUID(int=0)
NOT_CONTROLLER = 41


def caller(ctx) -> Caller:
    return Caller(principal=ctx.principal, client_address=ctx.client_host, receiving_broker=ctx.broker.broker_id,
                  forwarded_by=ctx.forwarded_by, api=ctx.request.api.name, api_version=ctx.version)


def timeout_ms(request) -> int:
    return int(request.timeout.total_seconds() * 1000)


def admin(ctx):
    """The controller's admin plane, or None when this broker is not the active controller."""
    controller = ctx.broker.admin
    return controller if controller.active else None


def dynamic_broker_layers(ctx) -> tuple[dict, dict]:
    """This broker's dynamic configs and the cluster-wide dynamic defaults, as the broker applies them."""
    dynamic, dynamic_default, _static = ctx.broker.admin.broker_layers()
    return dynamic, dynamic_default
