"""What AlterConfigs and IncrementalAlterConfigs share: both answer through controller.configs."""

from fauxka.controller.configs import AlterOp, ResourceChange
from fauxka.model import broker_configs as bc
from fauxka.model.acl_model import CLUSTER_NAME
from fauxka.model.config_resources import BROKER_LOGGER, TOPIC
from fauxka.model.errors import ErrorCode
from .. import logs
from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from .admin_common import active_controller, caller


async def loggers_here(ctx: RequestContext, request):
    """ConfigAdminManager.preprocess: BROKER_LOGGER changes are the log levels of the broker the client
    sent them to, applied there and never forwarded. A request naming only loggers is answered by the
    receiving broker (dispatch's precheck) even when it is not the controller."""
    controller = ctx.controller
    if controller.active or not request.resources or any(r.resource_type != BROKER_LOGGER for r in request.resources):
        return None  # the controller answers it (a forwarded logger resource is checked against the controller's id)
    return await _answer(ctx, request, True, controller)


async def answer(ctx: RequestContext, request, incremental: bool):
    return await _answer(ctx, request, incremental, active_controller(ctx))


async def _answer(ctx: RequestContext, request, incremental: bool, controller):
    if controller is None:
        results = [_result(r.resource_type, r.resource_name, ErrorCode.not_controller, None) for r in request.resources]
    else:
        changes = [ResourceChange(r.resource_type, r.resource_name,
                                  [AlterOp(c.name, c.value, c.config_operation) if incremental
                                   else AlterOp(c.name, c.value) for c in r.configs])
                   for r in request.resources]
        outcomes = await controller.configs.alter(changes, request.validate_only, incremental, caller(ctx),
                                       lambda resource_type, name: _may_alter(ctx, resource_type, name))
        results = [_result(o.resource_type, o.name, o.error_code, o.error_message) for o in outcomes]
        if any(o.resource_type == BROKER_LOGGER and o.error_code == 0 for o in outcomes) and not request.validate_only:
            level = bc.loggers(ctx.config["log.level"])[bc.ROOT_LOGGER]
            logs.set_level(level)  # this broker's loggers follow at once (fauxka has the root logger only)
            ctx.log.warning("log level changed", logger=bc.ROOT_LOGGER, level=level)
    return build(response_schema(request.__api_key__, ctx.version), {"throttle_time": 0, "responses": results})


def _may_alter(ctx: RequestContext, resource_type: int, name: str) -> bool:
    """AlterConfigs on the topic; on the cluster for BROKER and BROKER_LOGGER resources."""
    if resource_type == TOPIC:
        return ctx.authorized("ALTER_CONFIGS", "TOPIC", name)
    return ctx.authorized("ALTER_CONFIGS", "CLUSTER", CLUSTER_NAME)


def _result(resource_type: int, name: str, code: int, message: str | None) -> dict:
    return {"error_code": code, "error_message": message, "resource_type": resource_type, "resource_name": name}
