"""Every broker's copy of the delegation tokens (Kafka's DelegationTokenCache), fed by ZooKeeper
watches on /delegation_token/tokens and each token's znode. Kafka's brokers follow the change
notifications (/delegation_token/token_changes) instead; watching the znodes also sees writes
that announce nothing. Only runs with a secret key: each broker computes the HMACs itself, and
the SCRAM credentials of a token (its base64 HMAC as password, 4096 iterations, a random salt)
when first asked, as Kafka's prepareScramCredentials does."""

from typing import Any

from fauxka.model.delegation_tokens import TokenInfo, TokenSettings, b64, create_hmac
from fauxka.model.scram_credential import MECHANISMS, MIN_ITERATIONS, ScramCredential, new_credential
from fauxka.zkstore import ZkStore
from fauxka.zkstore import paths as zp
from fauxka.zkstore.token_znodes import from_json
from fauxka.zkstore.watch_set import WatchSet


class TokenCache:
    def __init__(self, zk: ZkStore, token_settings: TokenSettings | None, log: Any):
        self._zk = zk
        self._settings = token_settings
        self._log = log
        self._tokens: dict[str, TokenInfo] = {}
        self._hmacs: dict[str, str] = {}  # token id -> base64 HMAC
        self._by_hmac: dict[str, str] = {}  # base64 HMAC -> token id
        self._credentials: dict[tuple[str, str], ScramCredential] = {}
        self._watches = WatchSet(zk)

    @property
    def enabled(self) -> bool:
        return self._settings is not None

    async def start(self, timeout_s: float) -> None:
        """createDelegationTokenPaths, then the watches; returns once the tokens are loaded."""
        if self._settings is None:
            return
        for path in (zp.DELEGATION_TOKENS, zp.DELEGATION_TOKEN_CHANGES):
            await self._zk.ensure_path(path)
        self._watch("children", zp.DELEGATION_TOKENS, self._on_ids)
        await self._watches.wait_synced(timeout_s)

    def stop(self) -> None:
        self._watches.cancel_all()

    # --- queries -------------------------------------------------------------------------------

    def tokens(self) -> list[TokenInfo]:
        return sorted(self._tokens.values(), key=lambda t: (t.issue_ms, t.token_id))

    def token(self, token_id: str) -> TokenInfo | None:
        return self._tokens.get(token_id)

    def token_for_hmac(self, base64_hmac: str) -> TokenInfo | None:
        token_id = self._by_hmac.get(base64_hmac)
        return None if token_id is None else self._tokens.get(token_id)

    def hmac(self, token_id: str) -> bytes:
        return create_hmac(token_id, self._settings.secret)

    def credential(self, token_id: str, mechanism: str) -> ScramCredential | None:
        """DelegationTokenCache.credential: the SCRAM credential of a known token."""
        if token_id not in self._tokens or mechanism not in MECHANISMS:
            return None
        key = (token_id, mechanism)
        if key not in self._credentials:
            self._credentials[key] = new_credential(mechanism, self._hmacs[token_id], MIN_ITERATIONS)
        return self._credentials[key]

    # --- updates (watches, and the controller right after its own writes) ------------------------

    def update(self, info: TokenInfo) -> None:
        if info.token_id not in self._hmacs:
            encoded = b64(self.hmac(info.token_id))
            self._hmacs[info.token_id] = encoded
            self._by_hmac[encoded] = info.token_id
        self._tokens[info.token_id] = info

    def remove(self, token_id: str) -> None:
        self._tokens.pop(token_id, None)
        self._by_hmac.pop(self._hmacs.pop(token_id, ""), None)
        for mechanism in MECHANISMS:
            self._credentials.pop((token_id, mechanism), None)

    # --- watches ---------------------------------------------------------------------------------

    def _watch(self, kind: str, path: str, callback) -> None:
        self._watches.add(kind, path, callback)

    def _on_ids(self, children: list[str] | None) -> None:
        ids = set(children or ())
        for gone in [p[len(zp.DELEGATION_TOKENS) + 1:] for p in self._watches.paths(zp.DELEGATION_TOKENS + "/")]:
            if gone not in ids:
                self._watches.remove(zp.token_path(gone))
                self.remove(gone)
        for token_id in ids:
            self._watch("data", zp.token_path(token_id), lambda v, t=token_id: self._on_token(t, v))

    def _on_token(self, token_id: str, value) -> None:
        try:
            info = from_json(value[0]) if value else None
        except (ValueError, KeyError, TypeError) as exc:
            self._log.error("bad delegation token znode", path=zp.token_path(token_id), error=repr(exc))
            return
        if info is None:
            self.remove(token_id)
        else:
            self.update(info)
