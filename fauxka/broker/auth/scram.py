"""SCRAM (RFC 5802, RFC 7677) as Kafka implements it: the messages (ScramMessages) and both ends
of the exchange (ScramSaslServer for the broker, a client for inter-broker connections). The math
and the stored credential format (ScramFormatter, ScramCredentialUtils) are fauxka/model/scram_credential.py.
"""

import base64
import hashlib
import hmac
import re

from fauxka.model.scram_credential import (MIN_ITERATIONS, ScramCredential, b64, hash_name, hmac_of, salted_password,
                                    sasl_name, secure_random_string, username_of)


class ScramError(Exception):
    """The exchange failed. `public`: Kafka passes the message to the client (its
    SaslAuthenticationException); otherwise the client gets Kafka's generic message."""

    def __init__(self, message: str, public: bool = False):
        super().__init__(message)
        self.public = public


# --- messages (ScramMessages' patterns) ------------------------------------------------------

_VALUE_SAFE = r"[\x01-\x2b\x2d-\x3c\x3e-\x7f]+"
_VALUE = r"[\x01-\x2b\x2d-\x7f]+"
_PRINTABLE = r"[\x21-\x2b\x2d-\x7e]+"
_SASLNAME = r"(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D)+"
_B64 = r"(?:[a-zA-Z0-9/+]{4})*(?:[a-zA-Z0-9/+]{3}=|[a-zA-Z0-9/+]{2}==)?"
_RESERVED = rf"(?:m={_VALUE},)?"
_EXTENSIONS = rf"(?:,[A-Za-z]+={_VALUE})*"
CLIENT_FIRST = re.compile(rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,{_RESERVED}n=(?P<saslname>{_SASLNAME}),"
                          rf"r=(?P<nonce>{_PRINTABLE})(?P<extensions>{_EXTENSIONS})")
SERVER_FIRST = re.compile(rf"{_RESERVED}r=(?P<nonce>{_PRINTABLE}),s=(?P<salt>{_B64}),i=(?P<iterations>[0-9]+)"
                          rf"{_EXTENSIONS}")
CLIENT_FINAL = re.compile(rf"c=(?P<channel>{_B64}),r=(?P<nonce>{_PRINTABLE}){_EXTENSIONS},p=(?P<proof>{_B64})")
SERVER_FINAL = re.compile(rf"(?:e=(?P<error>{_VALUE_SAFE}))|(?:v=(?P<signature>{_B64}){_EXTENSIONS})")


def _match(pattern: re.Pattern, data: bytes, what: str) -> re.Match:
    message = data.decode("utf-8", "replace")
    match = pattern.fullmatch(message)
    if match is None:
        raise ScramError(f"Invalid SCRAM {what} message format: {message}")
    return match


def _extensions(text: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in text.split(",") if item)


def _xor(a: bytes, b: bytes) -> bytes:
    if len(a) != len(b):
        raise ScramError("Argument arrays must be of the same length")
    return bytes(x ^ y for x, y in zip(a, b))


class ScramServer:
    """ScramSaslServer: client-first -> server-first, client-final -> server-final.

    `lookup(username)` gives the stored credential or None. Failures raise ScramError."""

    def __init__(self, mechanism: str, lookup, token_lookup=None):
        self.mechanism = mechanism
        self._lookup = lookup
        self._token_lookup = token_lookup  # token id -> (owner name, credential) or None (delegation tokens)
        self._first_bare = self._server_first = None
        self._credential: ScramCredential | None = None
        self.username: str | None = None
        self.authorization_id: str | None = None  # the principal's name: the user, or the token's owner
        self.token_authenticated = False
        self.complete = False
        self._step = self._first

    def evaluate(self, token: bytes) -> bytes:
        step, self._step = self._step, None
        if step is None:
            raise ScramError("Unexpected challenge in Sasl server state")
        try:
            return step(token)
        finally:
            if self._step is None:  # failed or complete: forget the credential (clearCredentials)
                self._credential = None

    def _first(self, token: bytes) -> bytes:
        match = _match(CLIENT_FIRST, token, "client first")
        extensions = _extensions(match["extensions"])
        token = extensions.get("tokenauth", "").lower() == "true"  # ScramExtensions.tokenAuthenticated
        try:
            username = username_of(match["saslname"])
            if token:  # the user name is a token id, its owner the authorization id
                found = self._token_lookup(username) if self._token_lookup else None
                if found is None or found[0] is None:
                    raise ScramError(f"Token Authentication failed: Invalid tokenId : {username}")
                authorization_id, credential = found
            else:
                authorization_id, credential = username, self._lookup(username)
        except ScramError:
            raise
        except Exception:
            raise ScramError("Authentication failed: Credentials could not be obtained") from None
        if credential is None:
            raise ScramError("Authentication failed: Invalid user credentials")
        if (match["authzid"] or "") not in ("", username):
            raise ScramError("Authentication failed: Client requested an authorization id that is different from "
                             "username", public=True)
        if credential.iterations < MIN_ITERATIONS:
            raise ScramError(f"Iterations {credential.iterations} is less than the minimum {MIN_ITERATIONS} "
                             f"for {self.mechanism}")
        ext = ",".join(f"{k}={v}" for k, v in extensions.items())
        self._first_bare = f"n={match['saslname']},r={match['nonce']}" + (f",{ext}" if ext else "")
        nonce = match["nonce"] + secure_random_string()
        self._server_first = f"r={nonce},s={b64(credential.salt)},i={credential.iterations}"
        self._nonce, self._credential, self.username = nonce, credential, username
        self.authorization_id, self.token_authenticated = authorization_id, token
        self._step = self._final
        return self._server_first.encode()

    def _final(self, token: bytes) -> bytes:
        match = _match(CLIENT_FINAL, token, "client final")
        if not match["nonce"].endswith(self._nonce):
            raise ScramError("Invalid client nonce in the final client message.")
        channel = base64.b64decode(match["channel"])
        auth = f"{self._first_bare},{self._server_first},c={b64(channel)},r={match['nonce']}".encode()
        credential = self._credential
        signature = hmac_of(self.mechanism, credential.stored_key, auth)
        computed = hashlib.new(hash_name(self.mechanism), _xor(signature, base64.b64decode(match["proof"]))).digest()
        if not hmac.compare_digest(computed, credential.stored_key):
            raise ScramError("Invalid client credentials")
        self.complete = True
        return f"v={b64(hmac_of(self.mechanism, credential.server_key, auth))}".encode()


class ScramClient:
    """The client side (ScramSaslClient): first() -> client-first, final(server-first) -> client-final,
    verify(server-final). Failures raise ScramError."""

    def __init__(self, mechanism: str, username: str, password: str, extensions: dict[str, str] | None = None):
        self.mechanism, self._password = mechanism, password
        self._nonce = secure_random_string()
        ext = "".join(f",{k}={v}" for k, v in (extensions or {}).items())  # e.g. tokenauth=true
        self._first_bare = f"n={sasl_name(username)},r={self._nonce}{ext}"

    def first(self) -> bytes:
        return f"n,,{self._first_bare}".encode()

    def final(self, server_first: bytes) -> bytes:
        match = _match(SERVER_FIRST, server_first, "server first")
        nonce, iterations = match["nonce"], int(match["iterations"])
        if not nonce.startswith(self._nonce) or nonce == self._nonce:
            raise ScramError("Invalid server nonce: does not start with client nonce")
        if iterations < MIN_ITERATIONS:
            raise ScramError(f"Requested iterations {iterations} is less than the minimum {MIN_ITERATIONS} "
                             f"for {self.mechanism}")
        salted = salted_password(self.mechanism, self._password, base64.b64decode(match["salt"]), iterations)
        without_proof = f"c=biws,r={nonce}"
        auth = f"{self._first_bare},{server_first.decode()},{without_proof}".encode()
        client_key = hmac_of(self.mechanism, salted, b"Client Key")
        stored_key = hashlib.new(hash_name(self.mechanism), client_key).digest()
        proof = _xor(client_key, hmac_of(self.mechanism, stored_key, auth))
        self._expected = hmac_of(self.mechanism, hmac_of(self.mechanism, salted, b"Server Key"), auth)
        return f"{without_proof},p={b64(proof)}".encode()

    def verify(self, server_final: bytes) -> None:
        match = _match(SERVER_FINAL, server_final, "server final")
        if match["error"]:
            raise ScramError(f"Sasl authentication using {self.mechanism} failed with error: {match['error']}")
        if not hmac.compare_digest(base64.b64decode(match["signature"]), self._expected):
            raise ScramError("Invalid server signature in server final message")
