"""The delegation token znodes' JSON (/delegation_token/tokens/<id>: DelegationTokenManager's
toJsonCompatibleMap and fromBytes, version 3), principals sanitized as config entity names."""

import json

from fauxka.model.delegation_tokens import TokenInfo, parse_principal

from .config_entities import desanitize, sanitize

CURRENT_VERSION = 3


def to_json(info: TokenInfo) -> bytes:
    """toJsonCompatibleMap (version 3): principals sanitized."""
    return json.dumps({
        "version": CURRENT_VERSION, "owner": sanitize(info.owner), "tokenRequester": sanitize(info.requester),
        "renewers": [sanitize(r) for r in info.renewers], "issueTimestamp": info.issue_ms,
        "maxTimestamp": info.max_ms, "expiryTimestamp": info.expiry_ms, "tokenId": info.token_id,
    }, separators=(",", ":")).encode()


def from_json(data: bytes | None) -> TokenInfo | None:
    """DelegationTokenManager.fromBytes: None for empty data; ValueError/KeyError/TypeError for bad data."""
    if not data:
        return None
    js = json.loads(data)
    version = int(js["version"])
    if not 0 < version <= CURRENT_VERSION:
        raise ValueError(f"unsupported delegation token version {version}")
    owner = parse_principal(desanitize(js["owner"]))
    requester = parse_principal(desanitize(js["tokenRequester"])) if version >= 3 else owner
    renewers = tuple(parse_principal(desanitize(r)) for r in js["renewers"])
    return TokenInfo(str(js["tokenId"]), owner, requester, renewers, int(js["issueTimestamp"]),
                     int(js["maxTimestamp"]), int(js["expiryTimestamp"]))
