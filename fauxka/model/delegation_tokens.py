"""Delegation tokens' rules (Kafka's DelegationTokenManager, TokenInformation, KIP-48), socket-free:
the settings, a token's record, ids, HMACs, lifetimes and who may see a token. Their znodes'
JSON is fauxka/zkstore/token_znodes.py; Create / Renew / Expire are the controller's (fauxka/controller/tokens.py)."""

import base64
import hashlib
import hmac as hmac_lib
import time
import uuid
from dataclasses import dataclass

ERROR_TIMESTAMP = -1  # a failed Renew/Expire's timestamp


@dataclass(frozen=True)
class TokenSettings:
    secret: str
    max_lifetime_ms: int  # delegation.token.max.lifetime.ms
    renew_ms: int  # delegation.token.expiry.time.ms: the default renewal period
    check_interval_ms: int  # delegation.token.expiry.check.interval.ms


def settings(config) -> TokenSettings | None:
    """KafkaConfig.tokenAuthEnabled: a non-empty secret key (the 3.x name, or the old master key)."""
    secret = config["delegation.token.secret.key"] or config["delegation.token.master.key"]
    if not secret:
        return None
    return TokenSettings(secret, config["delegation.token.max.lifetime.ms"], config["delegation.token.expiry.time.ms"],
                         config["delegation.token.expiry.check.interval.ms"])


@dataclass(frozen=True)
class TokenInfo:
    """TokenInformation; principals as `Type:Name`."""
    token_id: str
    owner: str
    requester: str
    renewers: tuple[str, ...]
    issue_ms: int
    max_ms: int
    expiry_ms: int

    def owner_or_renewer(self, principal: str) -> bool:
        return principal == self.owner or principal in self.renewers

    def expired(self, now_ms: int) -> bool:
        return self.max_ms < now_ms or self.expiry_ms < now_ms


def new_token_id() -> str:
    """CoreUtils.generateUuidAsBase64: a random UUID, URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()


def create_hmac(token_id: str, secret: str) -> bytes:
    """DelegationTokenManager.createHmac: HmacSHA512 of the token id, keyed by the secret's UTF-8 bytes."""
    return hmac_lib.new(secret.encode("utf-8"), token_id.encode("utf-8"), hashlib.sha512).digest()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def parse_principal(text: str) -> str:
    """SecurityUtils.parseKafkaPrincipal: `Type:Name` (ValueError otherwise)."""
    if not text or ":" not in text:
        raise ValueError(f"expected a string in format principalType:principalName but got {text}")
    return text


def new_token(token_id: str, owner: str, requester: str, renewers: list[str], max_lifetime_ms: int, now_ms: int,
              s: TokenSettings) -> TokenInfo:
    """createToken's timestamps: a request's max lifetime <= 0 means the broker's, and never beyond it."""
    lifetime = s.max_lifetime_ms if max_lifetime_ms <= 0 else min(max_lifetime_ms, s.max_lifetime_ms)
    max_ms = now_ms + lifetime
    return TokenInfo(token_id, owner, requester, tuple(renewers), now_ms, max_ms, min(max_ms, now_ms + s.renew_ms))


def visible(token: TokenInfo, requester: str, owners: list[str] | None, may_describe_token, may_describe_owner) -> bool:
    """DelegationTokenManager.filterToken (DescribeDelegationToken)."""
    if owners is not None and not any(token.owner_or_renewer(o) for o in owners):
        return False
    return token.owner_or_renewer(requester) or may_describe_token(token.token_id) or may_describe_owner(token.owner)


def now_ms() -> int:
    return int(time.time() * 1000)
