"""Which module answers each api: the api key -> its handler module, imported by name so that a
reader (and the import graph) can follow a request from here to its code. The api's versions, role
and forwardability are fauxka/broker/protocol/api_table.py's (protocol/ cannot import the handlers, which
import it); tests/unit/test_protocol.py checks that the two tables name the same apis.

A handler module defines `handle(ctx: RequestContext, request: <its api's request class, named in
fauxka/broker/protocol/requests.py>) -> Response` and, where the api needs them, `precheck`,
`after_forward`, `error_response` and `coordinator_key` (see Handler, fauxka/broker/dispatch.py). The
modules keep their kio schema names (a Python module name cannot start with the key's digits, as
kfake's 00_produce.go does).

Envelope (58) answers a request inside it as a client's: its `dispatch` is bound here, as dispatch
reaches every handler through this table (a static import back would be a loop).
"""

import dataclasses
import functools
from types import ModuleType

from .. import dispatch as dispatching
from ..context import RequestContext
from ..dispatch import Handler
from ..protocol.api_table import Api
from ..protocol.codec import Request
from ..protocol.requests import Response
from . import error_responses
from . import (add_offsets_to_txn, add_partitions_to_txn, allocate_producer_ids, alter_client_quotas, alter_configs,
               alter_partition, alter_partition_reassignments, alter_replica_log_dirs, alter_user_scram_credentials,
               api_versions, controlled_shutdown, create_acls, create_delegation_token, create_partitions,
               create_topics, delete_acls, delete_groups, delete_records, delete_topics, describe_acls,
               describe_client_quotas, describe_cluster, describe_configs, describe_delegation_token,
               describe_groups, describe_log_dirs, describe_producers, describe_transactions,
               describe_user_scram_credentials, elect_leaders, end_txn, envelope, expire_delegation_token, fetch,
               find_coordinator, heartbeat, incremental_alter_configs, init_producer_id, join_group, leader_and_isr,
               leave_group, list_groups, list_offsets, list_partition_reassignments, list_transactions, metadata, offset_commit,
               offset_delete, offset_fetch, offset_for_leader_epoch, produce, renew_delegation_token,
               sasl_authenticate, sasl_handshake, stop_replica, sync_group, txn_offset_commit, update_features,
               update_metadata, write_txn_markers)


MODULES: dict[int, ModuleType] = {
    0: produce,
    1: fetch,
    2: list_offsets,
    3: metadata,
    4: leader_and_isr,
    5: stop_replica,
    6: update_metadata,
    7: controlled_shutdown,
    8: offset_commit,
    9: offset_fetch,
    10: find_coordinator,
    11: join_group,
    12: heartbeat,
    13: leave_group,
    14: sync_group,
    15: describe_groups,
    16: list_groups,
    17: sasl_handshake,
    18: api_versions,
    19: create_topics,
    20: delete_topics,
    21: delete_records,
    22: init_producer_id,
    23: offset_for_leader_epoch,
    24: add_partitions_to_txn,
    25: add_offsets_to_txn,
    26: end_txn,
    27: write_txn_markers,
    28: txn_offset_commit,
    29: describe_acls,
    30: create_acls,
    31: delete_acls,
    32: describe_configs,
    33: alter_configs,
    34: alter_replica_log_dirs,
    35: describe_log_dirs,
    36: sasl_authenticate,
    37: create_partitions,
    38: create_delegation_token,
    39: renew_delegation_token,
    40: expire_delegation_token,
    41: describe_delegation_token,
    42: delete_groups,
    43: elect_leaders,
    44: incremental_alter_configs,
    45: alter_partition_reassignments,
    46: list_partition_reassignments,
    47: offset_delete,
    48: describe_client_quotas,
    49: alter_client_quotas,
    50: describe_user_scram_credentials,
    51: alter_user_scram_credentials,
    56: alter_partition,
    57: update_features,
    58: envelope,
    60: describe_cluster,
    61: describe_producers,
    65: describe_transactions,
    66: list_transactions,
    67: allocate_producer_ids,
}
HANDLERS: dict[int, Handler] = {key: Handler.of(module) for key, module in MODULES.items()}


def handler(api: Api) -> Handler:
    return HANDLERS[api.key]


async def dispatch(ctx: RequestContext) -> Response:
    """The response to `ctx`'s request (fauxka/broker/dispatch.py), answered by its api's handler."""
    return await dispatching.dispatch(ctx, HANDLERS[ctx.request.api.key])


def error_response(request: Request, code: int) -> Response:
    """The api's error response: its handler module's own, else error_responses.py's."""
    return error_responses.error_response(request, code, HANDLERS[request.api.key].error_response)


HANDLERS[58] = dataclasses.replace(HANDLERS[58], handle=functools.partial(envelope.handle, dispatch=dispatch))
