"""AddPartitionsToTxn v0-v4: add partitions to the producer's transaction
(KafkaApis.handleAddPartitionToTxnRequest, TransactionCoordinator.handleAddPartitionsToTransaction).

Versions: v1 nothing new; v2 PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before); v3 flexible;
v4 (KIP-890, brokers only, CLUSTER_ACTION) batches transactions and adds verify_only (answer
whether the partitions are in the ongoing transaction, INVALID_TXN_STATE for the ones that are not).
Per partition: TOPIC_AUTHORIZATION_FAILED without WRITE on the Topic, UNKNOWN_TOPIC_OR_PARTITION,
and then OPERATION_NOT_ATTEMPTED for the rest, as Kafka does.
"""

from typing import TYPE_CHECKING

from fauxka.model.acl_model import CLUSTER_NAME
from fauxka.model.errors import ErrorCode

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .txn_common import fenced, txn_error

if TYPE_CHECKING:
    from ..protocol.requests import AddPartitionsToTxnRequest

_KEY = 24


def coordinator_key(request) -> str | None:
    return request.body.v3_and_below_transactional_id if request.version <= 3 else None


def _partitions(topics) -> list[tuple[str, int]]:
    return [(t.name, int(p)) for t in topics for p in t.partitions]


def _topic_results(results: dict[tuple[str, int], ErrorCode]) -> list[dict]:
    topics: dict[str, list] = {}
    for (topic, index), code in results.items():
        topics.setdefault(topic, []).append({"partition_index": index, "partition_error_code": code})
    return [{"name": n, "results_by_partition": ps} for n, ps in topics.items()]


async def _one(ctx: RequestContext, transactional_id: str, producer_id: int, epoch: int, topics, verify_only: bool,
               version: int) -> dict[tuple[str, int], ErrorCode]:
    wanted = _partitions(topics)
    error = txn_error(ctx, transactional_id)
    if error is not None:
        return dict.fromkeys(wanted, error)
    failed: dict[tuple[str, int], ErrorCode] = {}
    for tp in wanted:
        if not ctx.authorized("WRITE", "TOPIC", tp[0]):
            failed[tp] = ErrorCode.topic_authorization_failed
        elif tp[1] not in ctx.cache.partitions_of(tp[0]):
            failed[tp] = ErrorCode.unknown_topic_or_partition
    if failed:
        return {tp: failed.get(tp, ErrorCode.operation_not_attempted) for tp in wanted}
    coordinator = ctx.transactions
    if verify_only:
        meta = coordinator.metadata(transactional_id)
        ok = meta is not None and meta.producer_id == producer_id and meta.producer_epoch == epoch
        return {tp: ErrorCode.none if ok and tp in meta.partitions else ErrorCode.invalid_txn_state for tp in wanted}
    code = await coordinator.add_partitions(transactional_id, producer_id, epoch, set(wanted))
    return dict.fromkeys(wanted, fenced(code, version, 2))


async def handle(ctx: RequestContext, request: "AddPartitionsToTxnRequest") -> Response:
    version = ctx.version
    if version <= 3:
        results = await _one(ctx, request.v3_and_below_transactional_id, request.v3_and_below_producer_id,
                             request.v3_and_below_producer_epoch, request.v3_and_below_topics, False, version)
        return build(response_schema(_KEY, version), {"throttle_time": 0,
                                                      "results_by_topic_v3_and_below": _topic_results(results)})
    if not ctx.authorized("CLUSTER_ACTION", "CLUSTER", CLUSTER_NAME):
        return error_response(ctx.request, ErrorCode.cluster_authorization_failed)
    answers = []
    for txn in request.transactions:
        if not ctx.transactions.owns(txn.transactional_id):
            results = dict.fromkeys(_partitions(txn.topics), ErrorCode.not_coordinator)
        else:
            results = await _one(ctx, txn.transactional_id, txn.producer_id, txn.producer_epoch, txn.topics,
                                 txn.verify_only, version)
        answers.append({"transactional_id": txn.transactional_id, "topic_results": _topic_results(results)})
    return build(response_schema(_KEY, version), {"throttle_time": 0, "error_code": ErrorCode.none,
                                                  "results_by_transaction": answers})


def error_response(request, code):
    body, version = request.body, request.version
    if version <= 3:
        return build(response_schema(_KEY, version), {"throttle_time": 0, "results_by_topic_v3_and_below":
                                                      _topic_results(dict.fromkeys(_partitions(body.v3_and_below_topics), code))})
    return build(response_schema(_KEY, version), {"throttle_time": 0, "error_code": code,
                                                  "results_by_transaction": []})
