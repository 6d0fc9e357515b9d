"""One connection's SASL authentication on a SASL_PLAINTEXT or SASL_SSL listener (PLAIN, SCRAM,
OAUTHBEARER: oauthbearer.py), as Kafka's SaslServerAuthenticator runs it.

    ApiVersions (optional, once) -> SaslHandshake -> SaslAuthenticate ... (handshake v1+)
                                                  -> raw size-prefixed tokens ... (handshake v0)

Before authentication completes only those requests are read; anything else closes the
connection (IllegalSaslStateException). A failed authentication answers after
`connection.failed.authentication.delay.ms` and then closes the connection (raw tokens: closes
without an answer).

Re-authentication (KIP-368): with `connections.max.reauth.ms` (or
`listener.name.<l>.<mechanism>.connections.max.reauth.ms`) > 0, SaslAuthenticate v1+ tells the
client its session lifetime; a SaslHandshake after authentication starts a re-authentication on the
same connection (the principal must stay the same, else the connection closes), and any other request
after the session expired closes the connection (SocketServer's expired-channel check).
"""

import asyncio
import hmac
import time
from typing import Callable

from fauxka.model.errors import ErrorCode
from fauxka.model.scram_credential import MECHANISMS, ScramCredential, credential_from_string
from fauxka.zkstore.config_entities import sanitize

from ..protocol.codec import RequestParseError
from ..protocol.framing import with_size_prefix
from .oauthbearer import AuthenticationRefused, InvalidCredentials, OAuthBearerServer, UnsecuredValidator
from .sasl_config import ListenerSasl
from .scram import ScramError, ScramServer

API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE = 18, 17, 36
VERSIONS_OR_HANDSHAKE, HANDSHAKE, AUTHENTICATE, COMPLETE, FAILED = (
    "HANDSHAKE_OR_VERSIONS_REQUEST", "HANDSHAKE_REQUEST", "AUTHENTICATE", "COMPLETE", "FAILED")


class IllegalSaslState(RequestParseError):
    """A request Kafka does not read at this point of the authentication: the connection closes."""


class SessionExpired(RequestParseError):
    """KIP-368: a request after the session lifetime without re-authentication: the connection closes."""


class AuthenticationFailed(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


CredentialLookup = Callable[[str, str], ScramCredential | None]  # (username, mechanism) -> stored credential
# (token id, mechanism) -> (owner name, credential), or None: SCRAM with extension tokenauth=true
TokenLookup = Callable[[str, str], tuple[str, ScramCredential] | None]


class SaslSession:
    def __init__(self, conn, settings: ListenerSasl, lookup: CredentialLookup, failure_delay_s: float,
                 max_receive: int, token_lookup: TokenLookup | None = None,
                 reauth_ms: Callable[[str], int] = lambda mechanism: 0):
        self._conn = conn  # broker.connection.Connection: its principal is set on success
        self.settings = settings
        self._lookup = lookup
        self._token_lookup = token_lookup
        self._failure_delay_s = failure_delay_s
        self.max_receive = max_receive  # sasl.server.max.receive.size, until authenticated
        self.state = VERSIONS_OR_HANDSHAKE
        self.legacy = False  # SaslHandshake v0: the tokens follow as raw frames
        self.mechanism: str | None = None
        self._scram: ScramServer | None = None
        self._oauth: OAuthBearerServer | None = None
        self._reauth_ms = reauth_ms  # mechanism -> connections.max.reauth.ms
        self.session_lifetime_ms = 0  # told in SaslAuthenticate v1+; 0: no re-authentication
        self.expires_at: float | None = None  # time.monotonic() when the session ends
        self._previous_principal: str | None = None  # during a re-authentication

    @property
    def complete(self) -> bool:
        return self.state == COMPLETE

    @property
    def expects_raw_token(self) -> bool:
        return self.state == AUTHENTICATE and self.legacy

    def admit(self, api_key: int, api_name: str, supported: bool) -> None:
        """Raise IllegalSaslState unless a request of `api_key` may be read now (SessionExpired: the
        session lifetime passed without re-authentication)."""
        if self.state == COMPLETE:
            if self.expires_at is None:
                return
            if api_key == SASL_HANDSHAKE:  # KafkaChannel.maybeBeginServerReauthentication
                self._previous_principal = self._conn.principal
                self.state, self.mechanism, self._scram, self._oauth = HANDSHAKE, None, None, None
                return
            if time.monotonic() >= self.expires_at:
                raise SessionExpired(f"SASL session expired {self.session_lifetime_ms} ms after authentication "
                                     "without re-authentication (KIP-368)")
            return
        if self.state == VERSIONS_OR_HANDSHAKE and api_key == API_VERSIONS:
            if supported:  # an unsupported version is answered and changes nothing
                self.state = HANDSHAKE
            return
        if api_key == SASL_HANDSHAKE and self.state in (VERSIONS_OR_HANDSHAKE, HANDSHAKE, AUTHENTICATE):
            return  # during AUTHENTICATE it gets ErrorCode.illegal_sasl_state, then the connection closes
        if api_key == SASL_AUTHENTICATE and self.state == AUTHENTICATE:
            return
        if api_key == API_VERSIONS and self.state == HANDSHAKE:
            raise IllegalSaslState(f"Unexpected ApiVersions request received during SASL authentication state "
                                   f"{self.state}")
        during = "authentication" if self.state == AUTHENTICATE else "handshake"
        raise IllegalSaslState(f"Unexpected Kafka request of type {api_name.upper()} during SASL {during}.")

    async def handshake(self, mechanism: str, version: int) -> tuple[int, list[str]]:
        """SaslHandshake: (error code, enabled mechanisms)."""
        enabled = list(self.settings.mechanisms)
        if self.state == AUTHENTICATE:
            await self._fail()
            return ErrorCode.illegal_sasl_state, []
        if mechanism not in enabled:
            await self._fail()
            return ErrorCode.unsupported_sasl_mechanism, enabled
        self.state, self.mechanism, self.legacy = AUTHENTICATE, mechanism, version == 0
        if mechanism in MECHANISMS:
            self._scram = ScramServer(mechanism, lambda user: self._lookup(user, mechanism),
                                      None if self._token_lookup is None else
                                      lambda token_id: self._token_lookup(token_id, mechanism))
        elif mechanism == "OAUTHBEARER":
            self._oauth = OAuthBearerServer(UnsecuredValidator(self.settings.entries[mechanism].options))
        return 0, enabled

    async def authenticate(self, token: bytes) -> tuple[int, str | None, bytes]:
        """SaslAuthenticate: (error code, error message, server token)."""
        try:
            reply = self._evaluate(token)
        except AuthenticationFailed as exc:
            await self._fail()
            return ErrorCode.sasl_authentication_failed, exc.message, b""
        return 0, None, reply

    async def raw_token(self, frame: bytes) -> bytes | None:
        """A raw token after SaslHandshake v0: the framed server token, or None (failed: close)."""
        code, _, reply = await self.authenticate(frame)
        return None if code else with_size_prefix(reply)

    async def _fail(self) -> None:
        self.state = FAILED
        self._conn.close_after_response = True
        await asyncio.sleep(self._failure_delay_s)

    def _evaluate(self, token: bytes) -> bytes:
        if self._oauth is not None:
            return self._evaluate_oauth(token)
        if self._scram is None:
            user = check_plain(token, self.settings.plain_password)
            self._succeed(user)
            return b""
        try:
            reply = self._scram.evaluate(token)
        except ScramError as exc:
            raise AuthenticationFailed(str(exc) if exc.public else "Authentication failed during authentication "
                                       f"due to invalid credentials with SASL mechanism {self.mechanism}") from None
        if self._scram.complete:
            self._succeed(self._scram.authorization_id, self._scram.token_authenticated)
        return reply

    def _evaluate_oauth(self, token: bytes) -> bytes:
        try:
            reply = self._oauth.evaluate(token, int(time.time() * 1000))
        except AuthenticationRefused as exc:
            raise AuthenticationFailed(str(exc)) from None
        except InvalidCredentials:  # a SaslException: its text is not for the client
            raise AuthenticationFailed("Authentication failed during authentication due to invalid credentials with "
                                       "SASL mechanism OAUTHBEARER") from None
        if self._oauth.complete:
            self._succeed(self._oauth.token.principal, credential_expires_ms=self._oauth.token.lifetime_ms)
        return reply

    def _succeed(self, user: str, token_authenticated: bool = False, credential_expires_ms: int | None = None) -> None:
        principal = f"User:{user}"
        if self._previous_principal is not None and principal != self._previous_principal:
            raise AuthenticationFailed(f"Cannot change principals during re-authentication from "
                                       f"{self._previous_principal}: {principal}")
        self.state = COMPLETE
        self._conn.principal = principal
        self._conn.token_authenticated = token_authenticated
        # SaslServerAuthenticator.calcCompletionTimesAndReturnSessionLifetimeMs: the credential's own
        # expiry (an OAUTHBEARER token's exp) bounds the session too, and then always sets its end
        max_reauth_ms = self._reauth_ms(self.mechanism or "PLAIN")
        if credential_expires_ms is None:
            self.session_lifetime_ms = max(max_reauth_ms, 0)
        else:
            remaining = max(credential_expires_ms - int(time.time() * 1000), 0)
            self.session_lifetime_ms = min(remaining, max_reauth_ms) if max_reauth_ms > 0 else remaining
        self.expires_at = (time.monotonic() + self.session_lifetime_ms / 1000
                           if self.session_lifetime_ms > 0 or credential_expires_ms is not None else None)


def check_plain(token: bytes, password_of: Callable[[str], str | None]) -> str:
    """PlainSaslServer.evaluateResponse (RFC 4616): the authenticated user name."""
    text = token.decode("utf-8", "replace")
    tokens, start = [], 0
    for _ in range(4):
        end = text.find("\0", start)
        if end < 0:
            tokens.append(text[start:])
            break
        tokens.append(text[start:end])
        start = end + 1
    if len(tokens) != 3:
        raise AuthenticationFailed(f"Invalid SASL/PLAIN response: expected 3 tokens, got {len(tokens)}")
    authzid, user, password = tokens
    if not user:
        raise AuthenticationFailed("Authentication failed: username not specified")
    if not password:
        raise AuthenticationFailed("Authentication failed: password not specified")
    expected = password_of(user)
    if expected is None or not _equal(expected, password):
        raise AuthenticationFailed("Authentication failed: Invalid username or password")
    if authzid and authzid != user:
        raise AuthenticationFailed("Authentication failed: Client requested an authorization id that is different "
                                   "from username")
    return user


def _equal(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode("utf-8", "surrogatepass"), b.encode("utf-8", "surrogatepass"))


def new_session(conn, config, cache, tokens) -> SaslSession | None:
    """The SASL state of a new connection on a SASL listener; None on a PLAINTEXT one. `cache`: the
    SCRAM credentials (user configs); `tokens`: delegation tokens."""
    settings = config.sasl_listener(conn.listener)
    if settings is None:
        return None

    def lookup(username: str, mechanism: str) -> ScramCredential | None:
        text = cache.user_configs.get(sanitize(username), {}).get(mechanism)
        return None if text is None else credential_from_string(text)

    def token_lookup(token_id: str, mechanism: str) -> tuple[str, ScramCredential] | None:
        info, credential = tokens.token(token_id), tokens.credential(token_id, mechanism)
        return None if info is None or credential is None else (info.owner.partition(":")[2], credential)

    def reauth_ms(mechanism: str) -> int:
        key = f"listener.name.{conn.listener.lower()}.{mechanism.lower()}.connections.max.reauth.ms"
        return int(config.originals[key]) if key in config.originals else config["connections.max.reauth.ms"]

    return SaslSession(conn, settings, lookup, config["connection.failed.authentication.delay.ms"] / 1000,
                       config["sasl.server.max.receive.size"], token_lookup if tokens.enabled else None, reauth_ms)
