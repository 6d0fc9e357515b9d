"""What the transaction apis share: the transactional id's coordinator key (fauxka/broker/dispatch.py
answers NOT_COORDINATOR), WRITE on the TransactionalId (TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
the coordinator's load status (COORDINATOR_LOAD_IN_PROGRESS), and Kafka's translation of
PRODUCER_FENCED to INVALID_PRODUCER_EPOCH for clients older than KIP-588."""

from fauxka.model.errors import ErrorCode

from ..context import RequestContext


def transactional_id_key(request) -> str | None:
    return request.body.transactional_id


def txn_error(ctx: RequestContext, transactional_id: str) -> ErrorCode | None:
    """The error a request for `transactional_id` gets before the coordinator looks at it, or None."""
    if not ctx.authorized("WRITE", "TRANSACTIONAL_ID", transactional_id):
        return ErrorCode.transactional_id_authorization_failed
    code = ctx.transactions.status(transactional_id)
    return None if code == ErrorCode.none else code


def fenced(code: ErrorCode, version: int, first_version_with_fenced: int) -> ErrorCode:
    if code == ErrorCode.producer_fenced and version < first_version_with_fenced:
        return ErrorCode.invalid_producer_epoch
    return code
