"""AlterUserScramCredentials in ZK mode (Kafka's ZkAdminManager.alterUserScramCredentials):
the checks in Kafka's order and messages, then one fenced write per user of
/config/users/<sanitized user> (other keys, quotas, kept) with its config change notification.
Credentials are stored in Kafka's format (model.scram_credential); nothing secret is ever logged."""

import asyncio
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from fauxka.model.errors import ErrorCode, KafkaError
from fauxka.model.scram_credential import BY_TYPE, MAX_ITERATIONS, MIN_ITERATIONS, credential_from_salted, credential_to_string
from fauxka.zkstore import MultiFailed, ZkStore, ZkUnavailable
from fauxka.zkstore import paths as zp
from fauxka.zkstore.config_entities import decode_config, sanitize
from fauxka.zkstore.fenced import ControllerMoved, FencedWriter
from fauxka.zkstore.store import Op

from .audit import AuditLog, Caller
from .election import ControllerElection

EMPTY_USER = "Username must not be empty"
UNKNOWN_MECHANISM = "Unknown SCRAM mechanism"
UNKNOWN_SERVER_ERROR_MESSAGE = "The server experienced an unexpected error when processing the request."
_ATTEMPTS = 3


@dataclass(frozen=True)
class Upsertion:
    name: str
    mechanism: int  # wire type: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512
    iterations: int
    salt: bytes
    salted_password: bytes


@dataclass(frozen=True)
class Deletion:
    name: str
    mechanism: int


@dataclass
class UserResult:
    user: str
    error_code: int = ErrorCode.none
    error_message: str | None = None


def check(deletions: list[Deletion], upsertions: list[Upsertion]) -> tuple[list[UserResult], list[str]]:
    """Kafka's request-level checks: (failed users' results, users left to alter in order)."""
    illegal: dict[str, str] = {}
    for d in deletions:
        if d.name == "" or d.mechanism not in BY_TYPE:
            illegal[d.name] = EMPTY_USER if d.name == "" else UNKNOWN_MECHANISM
    for u in upsertions:  # an upsertion's complaint replaces a deletion's (Scala's Map ++)
        if u.name == "":
            illegal[u.name] = EMPTY_USER
        elif u.mechanism not in BY_TYPE:
            illegal[u.name] = UNKNOWN_MECHANISM
        elif not MIN_ITERATIONS <= u.iterations <= MAX_ITERATIONS:
            illegal[u.name] = "Too many iterations" if u.iterations > MAX_ITERATIONS else "Too few iterations"
    results = [UserResult(user, ErrorCode.unsupported_sasl_mechanism if msg == UNKNOWN_MECHANISM else ErrorCode.unacceptable_credential,
                          msg) for user, msg in illegal.items()]
    pairs = Counter((x.name, x.mechanism) for x in [*upsertions, *deletions] if x.name not in illegal)
    duplicated = list(dict.fromkeys(user for (user, _), count in pairs.items() if count > 1))
    results += [UserResult(user, ErrorCode.duplicate_resource, "A user credential cannot be altered twice in the same request")
                for user in duplicated]
    return results, list(dict.fromkeys(user for user, _ in pairs if user not in duplicated))


def apply(props: dict[str, str], deletions: list[Deletion], upsertions: list[Upsertion]) -> dict[str, str]:
    """The user's properties after its deletions, then its upsertions (ScramFormatter.generateCredential)."""
    props = dict(props)
    for d in deletions:
        props.pop(BY_TYPE[d.mechanism], None)
    for u in upsertions:
        if not u.salted_password:  # Java's SecretKeySpec refuses an empty key: IllegalArgumentException
            raise KafkaError(ErrorCode.unknown_server_error, UNKNOWN_SERVER_ERROR_MESSAGE)
        mechanism = BY_TYPE[u.mechanism]
        props[mechanism] = credential_to_string(credential_from_salted(mechanism, u.salt, u.salted_password,
                                                                       u.iterations))
    return props


async def _read(zk: ZkStore, user: str) -> tuple[dict[str, str], int | None]:
    got = await zk.get(zp.entity_config_path("users", sanitize(user)))
    return (decode_config(got[0]), got[1].version) if got else ({}, None)


@dataclass(eq=False)
class ScramWrites:
    """The controller's SCRAM credential writes: /config/users/<user> read and written, fenced."""

    zk: ZkStore
    writer: FencedWriter
    election: ControllerElection
    audit: AuditLog
    log: Any

    async def alter(self, deletions: list[Deletion], upsertions: list[Upsertion], caller: Caller) -> list[UserResult]:
        started = time.perf_counter()
        results, users = check(deletions, upsertions)
        current = dict(zip(users, await asyncio.gather(*(_read(self.zk, user) for user in users))))
        missing = [u for u in users if any(d.name == u and BY_TYPE[d.mechanism] not in current[u][0] for d in deletions)]
        results += [UserResult(u, ErrorCode.resource_not_found, "Attempt to delete a user credential that does not exist")
                    for u in missing]
        moved = False
        for user in (u for u in users if u not in missing):
            mine_d = [d for d in deletions if d.name == user]
            mine_u = [u for u in upsertions if u.name == user]
            result = UserResult(user)
            if moved:
                result.error_code, result.error_message = ErrorCode.not_controller, None
            else:
                try:
                    await self._write(user, current[user], mine_d, mine_u)
                except KafkaError as exc:
                    result.error_code, result.error_message = exc.code, exc.message
                except ControllerMoved as exc:
                    self.election.resign(str(exc))
                    moved = True
                    result.error_code = ErrorCode.not_controller
                except Exception as exc:  # ZooKeeper unavailable, or a bug: Kafka's Errors.forException
                    log = self.log.warning if isinstance(exc, ZkUnavailable) else self.log.exception
                    log("scram credential write failed", user=user, error=repr(exc))
                    result.error_code, result.error_message = ErrorCode.unknown_server_error, UNKNOWN_SERVER_ERROR_MESSAGE
            results.append(result)
        latency_ms = (time.perf_counter() - started) * 1000
        for result in results:
            ops = [{"op": "delete", "mechanism": BY_TYPE.get(d.mechanism, str(d.mechanism))}
                   for d in deletions if d.name == result.user]
            ops += [{"op": "upsert", "mechanism": BY_TYPE.get(u.mechanism, str(u.mechanism)), "iterations": u.iterations}
                    for u in upsertions if u.name == result.user]
            self.audit.record(caller, resource_type="USER", resource_name=result.user, action="ALTER_SCRAM_CREDENTIALS",
                              validate_only=False, error_code=result.error_code, error_message=result.error_message,
                              latency_ms=latency_ms, ops=ops)
        return results

    async def _write(self, user: str, current: tuple[dict[str, str], int | None], deletions: list[Deletion],
                     upsertions: list[Upsertion]) -> None:
        name = sanitize(user)
        path = zp.entity_config_path("users", name)
        notify = Op.create(zp.CONFIG_CHANGE_PREFIX, zp.encode_config_change(f"users/{name}"), sequence=True)
        props, version = current
        for attempt in range(_ATTEMPTS):
            data = zp.encode_entity_config(apply(props, deletions, upsertions))
            write = Op.set(path, data, version) if version is not None else Op.create(path, data)
            try:
                await self.writer.write([write, notify])
                return
            except MultiFailed as failed:  # changed meanwhile (a quota, kafka-configs): read again, keep its keys
                self.log.info("scram credential write raced", user=user, error=repr(failed.cause), attempt=attempt)
                props, version = await _read(self.zk, user)
        raise KafkaError(ErrorCode.unknown_server_error, UNKNOWN_SERVER_ERROR_MESSAGE)
