"""The controller mutation quota (KIP-599) as CreateTopics, CreatePartitions and DeleteTopics apply it:
each topic's partitions are permits, taken in request order; once the client's token bucket is
negative, the remaining topics of a strict request (CreateTopics v6+, CreatePartitions v3+, DeleteTopics
v5+) answer THROTTLING_QUOTA_EXCEEDED, and the response's throttle time is the time until the bucket
refills. Older versions are permissive: everything passes, the throttle time is still reported.
validate_only requests take no permits (Kafka's ControllerMutationQuota is unbounded for them)."""

import time

from ..context import RequestContext

STRICT_FROM = {19: 6, 37: 3, 20: 5}  # api key -> first strict version
MESSAGE = "The throttling quota has been exceeded."


def admit(ctx: RequestContext, permits: int) -> bool:
    """Take `permits` for this request's client; False: refuse this topic with THROTTLING_QUOTA_EXCEEDED."""
    strict = ctx.version >= STRICT_FROM[ctx.request.api.key]
    return ctx.quotas.admit_mutations(ctx.principal, ctx.request.client_id or "", max(permits, 0),
                                      time.time() * 1000, strict)


def throttle_ms(ctx: RequestContext) -> int:
    """The response's throttle time (ms) under the mutation quota."""
    return ctx.quotas.mutation_throttle(ctx.principal, ctx.request.client_id or "", time.time() * 1000)
