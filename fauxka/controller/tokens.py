"""Delegation tokens in ZK mode (Kafka's DelegationTokenManager, KIP-48): Create / Renew / Expire
on the controller, each one fenced multi-op (version-checked) with its change notification and an
audit line (rules in fauxka/model/delegation_tokens.py, znode JSON in fauxka/zkstore/token_znodes.py). A token's
HMAC is a secret: it is never logged nor audited."""

import asyncio
import time
from dataclasses import dataclass, replace
from typing import Any, Iterable, Protocol

from fauxka.model.delegation_tokens import (ERROR_TIMESTAMP, TokenInfo, TokenSettings, b64, create_hmac, new_token,
                                     new_token_id, now_ms)
from fauxka.model.errors import ErrorCode
from fauxka.zkstore import MultiFailed, ZkStore
from fauxka.zkstore import paths as zp
from fauxka.zkstore.fenced import ControllerMoved, FencedWriter
from fauxka.zkstore.store import Op
from fauxka.zkstore.token_znodes import from_json, to_json

from .audit import AuditLog, Caller
from .election import ControllerElection

_ATTEMPTS = 3


class TokenStore(Protocol):
    """The broker's token cache (fauxka/broker/auth/token_cache.py), which the writes keep current."""

    def update(self, info: TokenInfo) -> None: ...

    def remove(self, token_id: str) -> None: ...

    def token_for_hmac(self, hmac_b64: str) -> TokenInfo | None: ...

    def tokens(self) -> Iterable[TokenInfo]: ...


@dataclass(eq=False)
class TokenWrites:
    """The controller's delegation token writes: what they read (ZooKeeper, the token cache) and write."""

    zk: ZkStore
    writer: FencedWriter
    election: ControllerElection
    tokens: TokenStore
    audit: AuditLog
    log: Any

    async def create(self, s: TokenSettings | None, owner: str, requester: str, renewers: list[str],
                     max_lifetime_ms: int, caller: Caller) -> tuple[int, TokenInfo | None, bytes]:
        """(error code, token, hmac) as createToken answers; the write is fenced."""
        started = time.perf_counter()
        info, code, hmac = None, ErrorCode.delegation_token_auth_disabled, b""
        if s is not None:
            info = new_token(new_token_id(), owner, requester, renewers, max_lifetime_ms, now_ms(), s)
            code = await self._write([Op.create(zp.token_path(info.token_id), to_json(info)),
                                      self._notify(info.token_id)])
            if code == ErrorCode.none:
                hmac = create_hmac(info.token_id, s.secret)
                self.tokens.update(info)
                self.log.info("created a delegation token", token_id=info.token_id, owner=owner)
        self._audit(caller, info.token_id if info else "", "CREATE_DELEGATION_TOKEN", code, started,
                    owner=owner, renewers=list(renewers), max_lifetime_ms=max_lifetime_ms)
        return code, (info if code == ErrorCode.none else None), hmac

    async def renew(self, s: TokenSettings | None, principal: str, hmac: bytes, period_ms: int,
                    caller: Caller) -> tuple[int, int]:
        """renewToken: (error code, new expiry timestamp or -1)."""
        return await self._change(s, principal, hmac, period_ms, caller, expire=False)

    async def expire(self, s: TokenSettings | None, principal: str, hmac: bytes, period_ms: int,
                     caller: Caller) -> tuple[int, int]:
        """expireToken: (error code, expiry timestamp or -1); a negative period removes the token now."""
        return await self._change(s, principal, hmac, period_ms, caller, expire=True)

    async def _change(self, s, principal, hmac, period_ms, caller, expire: bool) -> tuple[int, int]:
        started = time.perf_counter()
        action = "EXPIRE_DELEGATION_TOKEN" if expire else "RENEW_DELEGATION_TOKEN"
        if s is None:
            self._audit(caller, "", action, ErrorCode.delegation_token_auth_disabled, started, period_ms=period_ms)
            return ErrorCode.delegation_token_auth_disabled, ERROR_TIMESTAMP
        cached = self.tokens.token_for_hmac(b64(hmac))
        token_id = cached.token_id if cached else ""
        code, stamp = ErrorCode.delegation_token_not_found, ERROR_TIMESTAMP
        for _ in range(_ATTEMPTS if cached else 0):
            got = await self.zk.get(zp.token_path(token_id))
            info = from_json(got[0]) if got else None
            now = now_ms()
            if info is None:
                code = ErrorCode.delegation_token_not_found
                break
            if not info.owner_or_renewer(principal):
                code = ErrorCode.delegation_token_owner_mismatch
                break
            if info.expired(now):
                code = ErrorCode.delegation_token_expired
                break
            if expire and period_ms < 0:
                ops, stamp, updated = [Op.delete(zp.token_path(token_id), got[1].version)], now, None
            else:
                period = s.renew_ms if not expire and period_ms < 0 else period_ms
                updated = replace(info, expiry_ms=min(info.max_ms, now + period))
                ops, stamp = [Op.set(zp.token_path(token_id), to_json(updated), got[1].version)], updated.expiry_ms
            code = await self._write([*ops, self._notify(token_id)], raced_ok=True)
            if code is None:  # changed meanwhile: read it again
                continue
            if code == ErrorCode.none:
                if updated is None:
                    self.tokens.remove(token_id)
                else:
                    self.tokens.update(updated)
                self.log.info("delegation token " + ("expired" if updated is None else "updated"), token_id=token_id)
            break
        else:
            if cached:
                code = ErrorCode.unknown_server_error
        if code != ErrorCode.none:
            stamp = ERROR_TIMESTAMP
        self._audit(caller, token_id, action, code, started, period_ms=period_ms)
        return code, stamp

    async def expire_due(self) -> None:
        """expireTokens: remove every token past its expiry or maximum time (the controller, periodically)."""
        for info in self.tokens.tokens():
            if info.expired(now_ms()):
                got = await self.zk.get(zp.token_path(info.token_id))
                current = from_json(got[0]) if got else None
                if current is not None and current.expired(now_ms()):
                    code = await self._write([Op.delete(zp.token_path(info.token_id), got[1].version),
                                              self._notify(info.token_id)], raced_ok=True)
                    if code == ErrorCode.none:
                        self.tokens.remove(info.token_id)
                        self.log.info("delegation token expired", token_id=info.token_id, owner=info.owner)

    @staticmethod
    def _notify(token_id: str) -> Op:
        return Op.create(zp.TOKEN_CHANGE_PREFIX, token_id.encode("utf-8"), sequence=True)

    async def _write(self, ops: list[Op], raced_ok: bool = False) -> int | None:
        """The error code of a fenced write; None (with raced_ok) when a version check failed."""
        try:
            await self.writer.write(ops)
            return ErrorCode.none
        except ControllerMoved as exc:
            self.election.resign(str(exc))
            return ErrorCode.not_controller
        except MultiFailed as failed:
            if raced_ok:
                self.log.info("delegation token write raced", error=repr(failed.cause))
                return None
            self.log.warning("delegation token write failed", error=repr(failed.cause))
        except Exception as exc:  # ZooKeeper unavailable, or a bug
            self.log.warning("delegation token write failed", error=repr(exc))
        return ErrorCode.unknown_server_error

    def _audit(self, caller: Caller, token_id: str, action: str, code: int, started: float, **extra) -> None:
        self.audit.record(caller, resource_type="DELEGATION_TOKEN", resource_name=token_id, action=action,
                          validate_only=False, error_code=code, error_message=None,
                          latency_ms=(time.perf_counter() - started) * 1000, **extra)

    async def expire_periodically(self, s: TokenSettings) -> None:
        """The controller's delete-expired-tokens task: at once, then every check interval, while controller."""
        while self.election.active:
            try:
                await self.expire_due()
            except Exception as exc:  # ZooKeeper unavailable: try again next round
                self.log.warning("delegation token expiry check failed", error=repr(exc))
            await asyncio.sleep(s.check_interval_ms / 1000)
