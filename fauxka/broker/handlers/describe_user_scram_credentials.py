"""DescribeUserScramCredentials v0, answered by any broker from ZooKeeper as Kafka's
ZkAdminManager.describeUserScramCredentials does (mechanisms and iterations, never secrets)."""

from collections import Counter
from typing import TYPE_CHECKING

from fauxka.model.entity_names import sanitize
from fauxka.model.errors import ErrorCode
from fauxka.model.scram_credential import MECHANISMS, credential_from_string

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response

if TYPE_CHECKING:
    from ..protocol.requests import DescribeUserScramCredentialsRequest

_KEY = 50
UNKNOWN_SERVER_ERROR_MESSAGE = "The server experienced an unexpected error when processing the request."


async def handle(ctx: RequestContext, request: "DescribeUserScramCredentialsRequest") -> Response:
    body = {"throttle_time": 0, "error_code": 0, "error_message": None, "results": []}
    if not ctx.authorized("DESCRIBE", "CLUSTER", "kafka-cluster"):  # getErrorResponse: results without names
        error = {"error_code": ErrorCode.cluster_authorization_failed, "error_message": "Cluster authorization failed."}
        body.update(error, results=[{"user": "", **error} for _ in request.users or ()])
    else:
        try:
            body["results"] = await describe([u.name for u in request.users] if request.users else None,
                                             ctx.entity_configs)
        except Exception as exc:  # ZooKeeper unavailable: Kafka's top-level UNKNOWN_SERVER_ERROR
            ctx.log.warning("describe user scram credentials failed", error=repr(exc))
            body["error_code"], body["error_message"] = ErrorCode.unknown_server_error, UNKNOWN_SERVER_ERROR_MESSAGE
    body["results"] = [{"credential_infos": [], **r} for r in body["results"]]
    return build(response_schema(_KEY, ctx.version), body)


def credential_infos(props: dict[str, str]) -> list[dict] | None:
    """(mechanism type, iterations) of each SCRAM key; None when the user has none. ValueError: bad data."""
    if not any(name in props for name in MECHANISMS):
        return None
    return [{"mechanism": wire, "iterations": credential_from_string(props[name]).iterations}
            for name, (_, wire) in MECHANISMS.items() if name in props]


def _result(user: str, props: dict[str, str], explicit: bool) -> dict | None:
    try:
        infos = credential_infos(props)
    except ValueError:  # bad data in ZooKeeper
        return {"user": user, "error_code": ErrorCode.unknown_server_error, "error_message": UNKNOWN_SERVER_ERROR_MESSAGE}
    if infos is not None:
        return {"user": user, "error_code": 0, "error_message": None, "credential_infos": infos}
    if explicit:
        return {"user": user, "error_code": ErrorCode.resource_not_found,
                "error_message": f"Attempt to describe a user credential that does not exist: {user}"}
    return None


async def describe(users: list[str] | None, reader) -> list[dict]:
    if not users:  # every user with a credential, by znode name (Kafka does not desanitize here), sorted
        found = [_result(name, props, False) for name, props in (await reader.all("users")).items()]
        return sorted((r for r in found if r is not None), key=lambda r: r["user"])
    counts = Counter(users)
    results: dict[str, dict] = {}
    for user in dict.fromkeys(users):
        if user == "":
            results[user] = {"user": user, "error_code": ErrorCode.resource_not_found, "error_message": "Username must not be empty"}
        elif counts[user] > 1:
            results[user] = {"user": user, "error_code": ErrorCode.duplicate_resource, "error_message":
                             f"Cannot describe SCRAM credentials for the same user twice in a single request: {user}"}
        else:
            try:
                results[user] = _result(user, await reader.one("users", sanitize(user)), True)
            except Exception:
                results[user] = {"user": user, "error_code": ErrorCode.unknown_server_error,
                                 "error_message": UNKNOWN_SERVER_ERROR_MESSAGE}
    return list(results.values())


def error_response(request, code):
    """DescribeUserScramCredentialsRequest.getErrorResponse: the top-level error, and each user named
    answers it too."""
    return build(response_schema(_KEY, request.version), {
        "throttle_time": 0, "error_code": code, "error_message": None,
        "results": [{"user": u.name, "error_code": code, "error_message": None, "credential_infos": []}
                    for u in request.body.users or ()]})
