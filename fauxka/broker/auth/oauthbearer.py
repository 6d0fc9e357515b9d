"""SASL/OAUTHBEARER on the broker as Kafka serves it without a server callback handler class: the
unsecured JWT validator (OAuthBearerUnsecuredValidatorCallbackHandler, the default), for development
and tests, as librdkafka's `enable.sasl.oauthbearer.unsecure.jwt` and kafkajs's specs send tokens.

- The client's first message (RFC 7628, OAuthBearerClientInitialResponse):
  `n,[a=<authzid>],^Aauth=Bearer <token>^A[<key>=<value>^A...]^A`; a malformed one fails with Kafka's
  generic "invalid credentials" answer.
- The token (OAuthBearerUnsecuredJws): three '.'-separated parts, the header's `alg` "none", no
  signature; the claims checked as OAuthBearerValidationUtils checks them: the principal claim
  (`unsecuredValidatorPrincipalClaimName`, default `sub`) a non-blank string, `exp` required, `iat`
  optional, both against now with `unsecuredValidatorAllowableClockSkewMs` (default 0), `exp` after
  `iat`, and every scope of `unsecuredValidatorRequiredScope` (space separated) in the token's scope
  claim (`unsecuredValidatorScopeClaimName`, default `scope`: a string or a list).
- A token that fails is answered with Kafka's JSON (`{"status":"invalid_token"}`, or
  `insufficient_scope` with the required scope); the client then sends ^A and authentication fails
  with that JSON as the message.
- Success: the principal is the claim's value; the token's `exp` bounds the session (KIP-368), as
  Kafka's CREDENTIAL_LIFETIME_MS negotiated property does.
"""

import base64
import binascii
import json
import re
from dataclasses import dataclass

OAUTHBEARER_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
SEPARATOR = "\x01"
_SASLNAME = r"(?:[\x01-\x2B\x2D-\x3C\x3E-\x7F]|=2C|=3D)+"  # Java's [\x01-\x7F&&[^=,]]
_KEY = r"[A-Za-z]+"
_VALUE = r"[\x21-\x7E \t\r\n]+"
_INITIAL = re.compile(rf"n,(a=(?P<authzid>{_SASLNAME}))?,{SEPARATOR}"
                      rf"(?P<kvpairs>({_KEY}={_VALUE}{SEPARATOR})*){SEPARATOR}")
_AUTH = re.compile(r"(?P<scheme>\w+) +(?P<token>[-_~+/.a-zA-Z0-9]+(=*))")


class InvalidCredentials(Exception):
    """A SaslException: the client is told only that its credentials were invalid."""


class AuthenticationRefused(Exception):
    """A SaslAuthenticationException: its message goes to the client."""


class IllegalToken(Exception):
    def __init__(self, message: str, scope: list[str] | None = None):
        super().__init__(message)
        self.scope = scope  # a failed scope check: the required scope


@dataclass(frozen=True)
class Token:
    principal: str
    lifetime_ms: int  # the `exp` claim in milliseconds since the epoch


def parse_initial_response(data: bytes) -> tuple[str, str, dict[str, str]]:
    """(authorization id, token, extensions) of the client's first message."""
    text = data.decode("utf-8", "replace")
    match = _INITIAL.fullmatch(text)
    if not match:
        raise InvalidCredentials("Invalid OAUTHBEARER client first message")
    properties = dict(pair.split("=", 1) for pair in match["kvpairs"].split(SEPARATOR) if pair)
    auth = properties.pop("auth", None)
    if auth is None:
        raise InvalidCredentials("Invalid OAUTHBEARER client first message: 'auth' not specified")
    auth_match = _AUTH.fullmatch(auth)
    if not auth_match:
        raise InvalidCredentials("Invalid OAUTHBEARER client first message: invalid 'auth' format")
    if auth_match["scheme"].lower() != "bearer":
        raise InvalidCredentials(f"Invalid scheme in OAUTHBEARER client first message: {auth_match['scheme']}")
    return match["authzid"] or "", auth_match["token"], properties


def _claims(part: str) -> dict:
    """OAuthBearerUnsecuredJws.toMap: java.util.Base64's basic decoder (padding optional), then JSON."""
    try:
        raw = base64.b64decode(part + "=" * (-len(part) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise IllegalToken("malformed Base64 URL encoded value") from None
    try:
        value = json.loads(raw)
    except ValueError:
        raise IllegalToken("malformed JSON") from None
    if not isinstance(value, dict):
        raise IllegalToken("malformed JSON")
    return value


def _number(claims: dict, name: str) -> float | None:
    value = claims.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise IllegalToken(f"The {name} claim had the incorrect type: {type(value).__name__}")
    return float(value)


class UnsecuredValidator:
    """OAuthBearerUnsecuredValidatorCallbackHandler with its JAAS options."""

    def __init__(self, options: dict[str, str]):
        self.principal_claim = options.get("unsecuredValidatorPrincipalClaimName", "sub").strip() or "sub"
        self.scope_claim = options.get("unsecuredValidatorScopeClaimName", "scope").strip() or "scope"
        self.required_scope = options.get("unsecuredValidatorRequiredScope", "").split()
        self.skew_ms = int(options.get("unsecuredValidatorAllowableClockSkewMs", "0") or 0)

    def validate(self, token: str, now_ms: int) -> Token:
        if ".." in token:
            raise IllegalToken("Malformed compact serialization contains '..'")
        parts = token.split(".")
        if len(parts) == 2 and token.endswith("."):
            parts.append("")
        if len(parts) != 3:
            raise IllegalToken("Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded "
                               "values")
        header, claims = _claims(parts[0]), _claims(parts[1])
        if header.get("alg") != "none":
            raise IllegalToken("Unsecured JWS must have 'none' for an algorithm")
        if parts[2]:
            raise IllegalToken("Unsecured JWS must not contain a digital signature")
        expires = _number(claims, "exp")
        if expires is None:
            raise IllegalToken("No expiration time in JWT")
        principal = claims.get(self.principal_claim)
        if not isinstance(principal, str) or not principal.strip():
            raise IllegalToken(f"No principal name in JWT claim: {self.principal_claim}")
        issued = _number(claims, "iat")
        if issued is not None and 1000 * issued > now_ms + self.skew_ms:
            raise IllegalToken(f"The Issued At value ({issued:f} seconds) was after the indicated time ({now_ms} ms) "
                               f"plus allowable clock skew ({self.skew_ms} ms)")
        if now_ms - self.skew_ms >= 1000 * expires:
            raise IllegalToken(f"The indicated time ({now_ms} ms) minus allowable clock skew ({self.skew_ms} ms) was "
                               f"on or after the Expiration Time value ({expires:f} seconds)")
        if issued is not None and expires <= issued:
            raise IllegalToken(f"The Expiration Time time ({expires:f} seconds) was not after the Issued At time "
                               f"({issued:f} seconds)")
        scope = claims.get(self.scope_claim)
        held = {scope.strip()} if isinstance(scope, str) and scope.strip() else \
            {s.strip() for s in scope if isinstance(s, str) and s.strip()} if isinstance(scope, list) else set()
        missing = [s for s in self.required_scope if s not in held]
        if missing:
            raise IllegalToken(f"The provided scope ([{', '.join(sorted(held))}]) was missing a required scope "
                               f"({missing[0]}).  All required scope elements: [{', '.join(self.required_scope)}]",
                               self.required_scope)
        return Token(principal, int(1000 * expires))


class OAuthBearerServer:
    """OAuthBearerSaslServer: one authentication's exchange."""

    def __init__(self, validator: UnsecuredValidator):
        self._validator = validator
        self._error: str | None = None
        self.token: Token | None = None

    @property
    def complete(self) -> bool:
        return self.token is not None

    def evaluate(self, response: bytes, now_ms: int) -> bytes:
        if response == SEPARATOR.encode() and self._error is not None:
            raise AuthenticationRefused(self._error)  # the client's ^A after our error
        self._error = None
        authzid, token_value, _extensions = parse_initial_response(response)  # extensions: all accepted
        try:
            token = self._validator.validate(token_value, now_ms)
        except IllegalToken as exc:
            self._error = ('{"status":"insufficient_scope", "scope":"[' + ", ".join(exc.scope) + ']"}'
                           if exc.scope is not None else '{"status":"invalid_token"}')
            return self._error.encode()
        if authzid and authzid != token.principal:
            raise AuthenticationRefused(f"Authentication failed: Client requested an authorization id ({authzid}) "
                                        f"that is different from the token's principal name ({token.principal})")
        self.token = token
        return b""
