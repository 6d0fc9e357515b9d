"""CreateTopics v2-v7: translate to controller.admin and back."""

import functools
from collections import Counter
from typing import TYPE_CHECKING

from fauxka.controller.topics import NewTopic
from fauxka.model.acl_model import CLUSTER_NAME
from fauxka.model.errors import ErrorCode
from fauxka.model.topic_configs import effective_topic_configs

from ..context import RequestContext
from ..protocol.build import build, entity_class
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from . import throttling
from .admin_common import (ZERO_UUID, active_controller, audit_denied, caller, dynamic_broker_layers, forwarded_wait_s,
                           timeout_ms)

if TYPE_CHECKING:
    from ..protocol.requests import CreateTopicsRequest

_KEY = 19
_FIRST_WITH_CONFIGS = 5  # v5 added the topic's configs, counts and config error code to the response
AUTHORIZATION_FAILED = "Authorization failed."


async def handle(ctx: RequestContext, request: "CreateTopicsRequest") -> Response:
    controller = active_controller(ctx)
    if controller is None:
        results = [_result(t.name, ErrorCode.not_controller, None) for t in request.topics]
    else:
        results = await _create(ctx, controller, request)
    throttle = 0 if controller is None else throttling.throttle_ms(ctx)
    return build(response_schema(_KEY, ctx.version), {"throttle_time": throttle, "topics": results})


async def _create(ctx: RequestContext, controller, request) -> list[dict]:
    """KafkaApis.handleCreateTopicsRequest: Create on the Cluster, else on each topic (a topic named
    twice is INVALID_REQUEST either way); configs and counts only for topics the client may
    DescribeConfigs, the others get topic_config_error_code ErrorCode.topic_authorization_failed."""
    names = [t.name for t in request.topics]
    counts = Counter(names)
    distinct = set(counts)
    if ctx.authorized("CREATE", "CLUSTER", CLUSTER_NAME, log_if_denied=False):
        may_create = distinct
    else:
        may_create = {n for n in distinct if ctx.authorized("CREATE", "TOPIC", n)}
    described = {n for n in distinct if ctx.authorized("DESCRIBE_CONFIGS", "TOPIC", n, log_if_denied=False)}
    denied = {n for n in distinct - may_create if counts[n] == 1}
    throttled = set()
    if not request.validate_only:  # KIP-599: a topic's partitions are its permits, in request order
        for t in request.topics:
            if t.name not in denied and counts[t.name] == 1 and not throttling.admit(ctx, _partitions(ctx, t)):
                throttled.add(t.name)
    topics = [
        NewTopic(name=t.name, num_partitions=t.num_partitions, replication_factor=t.replication_factor,
                 assignments={a.partition_index: list(a.broker_ids) for a in t.assignments},
                 configs={c.name: c.value for c in t.configs})
        for t in request.topics if t.name not in denied and t.name not in throttled
    ]
    outcomes = iter(await controller.topics.create_topics(topics, request.validate_only, timeout_ms(request), caller(ctx)))
    results = []
    for name in names:
        if name in throttled:
            result = _result(name, ErrorCode.throttling_quota_exceeded, throttling.MESSAGE)
        elif name in denied:
            result = _result(name, ErrorCode.topic_authorization_failed, AUTHORIZATION_FAILED)
            audit_denied(ctx, controller, "TOPIC", name, "CREATE", ErrorCode.topic_authorization_failed, AUTHORIZATION_FAILED,
                         request.validate_only)
        else:
            result = _outcome(ctx, next(outcomes), request.validate_only, name in described)
        # Kafka resets the flag for a topic the creation itself failed (not a refused or duplicate one)
        if name not in described and (name in denied or counts[name] > 1 or result["error_code"] == 0):
            result["topic_config_error_code"] = ErrorCode.topic_authorization_failed
        results.append(result)
    return results


def _partitions(ctx: RequestContext, topic) -> int:
    if topic.assignments:
        return len(topic.assignments)
    return topic.num_partitions if topic.num_partitions > 0 else ctx.config["num.partitions"]


async def after_forward(ctx: RequestContext, request, response, received: float) -> None:
    """A forwarding broker passes the answer on once its own cache shows the created topics with
    leaders (bounded by the request's timeout): the client's next Metadata here finds them."""
    created = {t.name for t in response.topics if int(t.error_code) == 0}
    if created and not request.validate_only and timeout_ms(request) > 0:
        topics = ctx.controller.topics
        await topics.purgatory.wait(created, topics.have_leaders, forwarded_wait_s(ctx, request, received))


def _result(name: str, code: int, message: str | None) -> dict:
    return {"name": name, "topic_id": ZERO_UUID, "error_code": code, "error_message": message,
            "topic_config_error_code": 0, "num_partitions": -1, "replication_factor": -1, "configs": ()}


def _outcome(ctx: RequestContext, outcome, validate_only: bool, described: bool) -> dict:
    result = _result(outcome.name, outcome.error_code, outcome.error_message)
    plan = outcome.plan
    if outcome.error_code == 0 and plan is not None and described and ctx.version >= _FIRST_WITH_CONFIGS:
        dynamic, dynamic_default = dynamic_broker_layers(ctx)
        entries = effective_topic_configs(plan.configs, dynamic, dynamic_default, ctx.config.originals,
                                          include_synonyms=False)
        result.update(
            topic_id=ZERO_UUID if validate_only else plan.topic_id,
            num_partitions=len(plan.assignment),
            replication_factor=plan.replication_factor,
            configs=[_config_entity(ctx.version, e.name, e.value, e.read_only, e.source, e.sensitive)
                     for e in entries],
        )
    return result


@functools.lru_cache(maxsize=4096)  # kio entities are immutable; most topics report the same ~35 entries
def _config_entity(version: int, name: str, value: str | None, read_only: bool, source: int, sensitive: bool):
    cls = entity_class(response_schema(_KEY, version), "topics", "configs")
    return build(cls, {"name": name, "value": value, "read_only": read_only, "config_source": source,
                       "is_sensitive": sensitive})
