"""DescribeLogDirs v1-v4: this broker's log directories and the size of each replica in them.

Versions: v1 nothing new for a broker (v0 is not in kio); v2 flexible; v3 top-level error_code
(CLUSTER_AUTHORIZATION_FAILED there; before v3 an unauthorized caller gets no results);
v4 total_bytes and usable_bytes of the directory (KIP-827). topics null = every replica.
offset_lag is the distance to the high watermark for a follower, 0 for a leader, as Kafka's
"how far behind the current replica" (it has no future replicas: is_future_key false).
"""

import shutil
from typing import TYPE_CHECKING

from fauxka.model.acl_model import CLUSTER_NAME
from fauxka.model.errors import ErrorCode

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response

if TYPE_CHECKING:
    from ..protocol.requests import DescribeLogDirsRequest

_KEY = 35


async def handle(ctx: RequestContext, request: "DescribeLogDirsRequest") -> Response:
    if not ctx.authorized("DESCRIBE", "CLUSTER", CLUSTER_NAME):
        return build(response_schema(_KEY, ctx.version), {
            "throttle_time": 0, "error_code": ErrorCode.cluster_authorization_failed, "results": ()})
    replicas = ctx.replicas
    wanted = None
    if request.topics is not None:
        wanted = {(t.topic, p) for t in request.topics for p in t.partitions}
    dirs = list(ctx.config["log.dirs"]) if ctx.config["fauxka.log.in.memory"] else replicas.logs.log_dirs  # absolute
    by_dir: dict[str, dict[str, list[dict]]] = {d: {} for d in dirs}
    for (topic, index), partition in sorted(replicas.partitions.items()):
        if wanted is not None and (topic, index) not in wanted:
            continue
        log = partition.log
        where = replicas.logs.log_dir_of(topic, index) or dirs[0]
        lag = 0 if partition.is_leader else max(log.high_watermark - log.log_end_offset, 0)
        by_dir.setdefault(where, {}).setdefault(topic, []).append(
            {"partition_index": index, "partition_size": log.size_bytes, "offset_lag": lag, "is_future_key": False})
    results = []
    for where, topics in by_dir.items():
        total, usable = _space(where, ctx.config["fauxka.log.in.memory"])
        results.append({"error_code": ErrorCode.none, "log_dir": where, "total_bytes": total, "usable_bytes": usable,
                        "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]})
    return build(response_schema(_KEY, ctx.version), {"throttle_time": 0, "error_code": ErrorCode.none,
                                                      "results": results})


def _space(path: str, in_memory: bool) -> tuple[int, int]:
    if in_memory:
        return -1, -1
    try:
        usage = shutil.disk_usage(path)
    except OSError:
        return -1, -1
    return usage.total, usage.free
