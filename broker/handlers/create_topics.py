"""CreateTopics v2-v7: translate to controller.admin and back."""

from controller.topics import NewTopic
from controller.topic_configs import effective_topic_configs

from ..protocol.build import build
from ..protocol.codec import response_schema
from .admin_common import NOT_CONTROLLER, ZERO_UUID, admin, caller, dynamic_broker_layers, timeout_ms

_KEY = 19


async def handle(ctx, request):
    controller = admin(ctx)
    if controller is None:
        results = [_result(t.name, NOT_CONTROLLER, None) for t in request.topics]
    else:
        topics = [
            NewTopic(name=t.name, num_partitions=t.num_partitions, replication_factor=t.replication_factor,
                     assignments={a.partition_index: list(a.broker_ids) for a in t.assignments},
                     configs={c.name: c.value for c in t.configs})
            for t in request.topics
        ]
        outcomes = await controller.create_topics(topics, request.validate_only, timeout_ms(request), caller(ctx))
        results = [_outcome(ctx, o, request.validate_only) for o in outcomes]
    return build(response_schema(_KEY, ctx.version), {"throttle_time": 0, "topics": results})


def _result(name: str, code: int, message: str | None) -> dict:
    return {"name": name, "topic_id": ZERO_UUID, "error_code": code, "error_message": message,
            "topic_config_error_code": 0, "num_partitions": -1, "replication_factor": -1, "configs": ()}


def _outcome(ctx, outcome, validate_only: bool) -> dict:
    result = _result(outcome.name, outcome.error_code, outcome.error_message)
    plan = outcome.plan
    if outcome.error_code == 0 and plan is not None:
        dynamic, dynamic_default = dynamic_broker_layers(ctx)
        entries = effective_topic_configs(plan.configs, dynamic, dynamic_default, ctx.config.originals,
                                          include_synonyms=False)
        result.update(
            topic_id=ZERO_UUID if validate_only else plan.topic_id,
            num_partitions=len(plan.assignment),
            replication_factor=plan.replication_factor,
            configs=[{"name": e.name, "value": e.value, "read_only": e.read_only, "config_source": e.source,
                      "is_sensitive": e.sensitive} for e in entries],
        )
    return result
