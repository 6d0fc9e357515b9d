"""DescribeClientQuotas v0-v1, answered by any broker from ZooKeeper as Kafka's
ZkAdminManager.describeClientQuotas does: the same reads, the same filter, the same errors."""

import asyncio
from typing import TYPE_CHECKING

from fauxka.model.acl_model import CLUSTER_NAME
from fauxka.model.entity_names import desanitize_entity, sanitize_entity
from fauxka.model.errors import ErrorCode, KafkaError
from fauxka.model.quota_entities import CLIENT_ID, IP, IP_KEYS, JAVA_DOUBLE, QUOTA_KEYS, USER

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response

if TYPE_CHECKING:
    from ..protocol.requests import DescribeClientQuotasRequest

_KEY = 48
EXACT, DEFAULT, SPECIFIED = 0, 1, 2  # match types
ANY = object()  # the match of a SPECIFIED component (Kafka's null match)
ABSENT = object()  # an entity without this entity type
_WORDS = {USER: "user", CLIENT_ID: "client", IP: "ip"}


async def handle(ctx: RequestContext, request: "DescribeClientQuotasRequest") -> Response:
    body = {"throttle_time": 0, "error_code": 0, "error_message": None, "entries": None}
    if not ctx.authorized("DESCRIBE_CONFIGS", "CLUSTER", CLUSTER_NAME):
        body["error_code"] = ErrorCode.cluster_authorization_failed  # no message: it would be the default one
        return build(response_schema(_KEY, ctx.version), body)
    try:
        found = parse_filter([(c.entity_type, c.match_type, c.match) for c in request.components])
        results = await describe(found, request.strict, ctx.entity_configs)
        body["entries"] = [{"entity": [{"entity_type": t, "entity_name": n} for t, n in entity],
                            "values": [{"key": k, "value": v} for k, v in sorted(values.items())]}
                           for entity, values in results]
    except KafkaError as exc:
        body["error_code"], body["error_message"] = exc.code, exc.message
    except Exception as exc:  # ZooKeeper unavailable, or a bug: Kafka answers UNKNOWN_SERVER_ERROR
        ctx.log.warning("describe client quotas failed", error=repr(exc))
        body["error_code"] = ErrorCode.unknown_server_error
    return build(response_schema(_KEY, ctx.version), body)


def parse_filter(components: list[tuple[str, int, str | None]]) -> dict[str, str | None]:
    """entity type -> match: a name (EXACT), None (DEFAULT) or ANY (SPECIFIED); an absent type has
    no component. DescribeClientQuotasRequest.filter() first, then describeClientQuotas' checks."""
    parsed = []
    for entity_type, match_type, match in components:
        if match_type not in (EXACT, DEFAULT, SPECIFIED) or (match_type == EXACT and match is None):
            raise KafkaError(ErrorCode.unknown_server_error, None)  # IllegalArgumentException, NullPointerException
        parsed.append((entity_type, match if match_type == EXACT else None if match_type == DEFAULT else ANY))
    found: dict[str, str | None] = {}
    for entity_type, match in parsed:
        if entity_type in _WORDS:
            if entity_type in found:
                raise KafkaError(ErrorCode.invalid_request, f"Duplicate {_WORDS[entity_type]} filter component entity type")
            found[entity_type] = match
        elif entity_type == "":
            raise KafkaError(ErrorCode.invalid_request, "Unexpected empty filter component entity type")
        else:
            raise KafkaError(ErrorCode.unsupported_version, f"Custom entity type '{entity_type}' not supported")
    if (USER in found or CLIENT_ID in found) and IP in found:
        raise KafkaError(ErrorCode.invalid_request, "Invalid entity filter component combination, IP filter component "
                                            "should not be used with user or clientId filter component.")
    return found


Entity = list[tuple[str, str | None]]


async def describe(found: dict[str, str | None], strict: bool, reader) -> list[tuple[Entity, dict[str, float]]]:
    results = []
    if IP not in found:
        results += await _user_client_quotas(found, strict, reader)
    if USER not in found and CLIENT_ID not in found:
        results += await _ip_quotas(found, strict, reader)
    return results


def matches(found: dict[str, str | None], entity_type: str, name, strict: bool) -> bool:
    """Kafka's `matches`: `name` is the entity's name for the type, None (default) or ABSENT."""
    if entity_type not in found:
        return name is ABSENT or not strict
    if found[entity_type] is ANY:
        return name is not ABSENT
    return name is not ABSENT and name == found[entity_type]


async def _user_client_quotas(found, strict: bool, reader) -> list:
    user, client = found.get(USER, ANY), found.get(CLIENT_ID, ANY)
    exact_user, exact_client = user is not ANY, client is not ANY  # EXACT or DEFAULT
    exclude_user, exclude_client = strict and USER not in found, strict and CLIENT_ID not in found

    async def none():
        return []

    async def one(path: str, entity: tuple):
        return [(entity, await reader.one("users" if entity[0] is not ABSENT else "clients", path))]

    async def every(config_type: str):
        named = await reader.all(config_type)
        return [((desanitize_entity(n), ABSENT) if config_type == "users" else (ABSENT, desanitize_entity(n)), p)
                for n, p in sorted(named.items())]

    async def pairs():
        named = await reader.all_user_clients()
        return [((desanitize_entity(u), desanitize_entity(c)), p) for (u, c), p in sorted(named.items())]

    s_user = sanitize_entity(user) if exact_user else ""
    s_client = sanitize_entity(client) if exact_client else ""
    groups = await asyncio.gather(
        one(s_user, (user, ABSENT)) if exact_user and exclude_client
        else every("users") if not exclude_user and not exact_client else none(),
        one(s_client, (ABSENT, client)) if exclude_user and exact_client
        else every("clients") if not exact_user and not exclude_client else none(),
        one(f"{s_user}/clients/{s_client}", (user, client)) if exact_user and exact_client
        else pairs() if not exclude_user and not exclude_client else none(),
    )
    results = []
    for (u, c), props in (item for group in groups for item in group):
        values = {k: _double(v) for k, v in props.items() if k in QUOTA_KEYS}
        if values and matches(found, USER, u, strict) and matches(found, CLIENT_ID, c, strict):
            results.append(([(t, n) for t, n in ((USER, u), (CLIENT_ID, c)) if n is not ABSENT], values))
    return results


async def _ip_quotas(found, strict: bool, reader) -> list:
    ip = found.get(IP, ANY)
    if IP in found and ip is not ANY:
        named = [(ip, await reader.one("ips", sanitize_entity(ip)))]
    elif IP in found or not strict:
        named = [(desanitize_entity(n), p) for n, p in sorted((await reader.all("ips")).items())]
    else:
        named = []
    results = []
    for name, props in named:
        values = {k: _double(v) for k, v in props.items() if k in IP_KEYS}
        if values:
            results.append(([(IP, name)], values))
    return results


def _double(text: str) -> float:
    """Double.parseDouble; a value that is not a number fails the request (IllegalStateException)."""
    stripped = text.strip("".join(map(chr, range(33))))
    if not JAVA_DOUBLE.fullmatch(stripped):
        raise KafkaError(ErrorCode.unknown_server_error, None)
    return float(stripped.rstrip("fFdD").replace("Infinity", "inf"))
