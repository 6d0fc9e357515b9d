"""The SCRAM credential format as Kafka stores it (ScramFormatter, ScramCredentialUtils): the
salted-password math, a credential's string under /config/users/<user>, the mechanisms and their
wire types, and SASL name escaping. Plain functions; the exchange itself is fauxka/broker/auth/scram.py.
"""

import base64
import binascii
import hashlib
import hmac
import secrets
from dataclasses import dataclass

MIN_ITERATIONS, MAX_ITERATIONS = 4096, 16384
# mechanism name -> (hashlib name, wire type of AlterUserScramCredentials / DescribeUserScramCredentials)
MECHANISMS = {"SCRAM-SHA-256": ("sha256", 1), "SCRAM-SHA-512": ("sha512", 2)}
BY_TYPE = {wire: name for name, (_, wire) in MECHANISMS.items()}


@dataclass(frozen=True)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int


def hash_name(mechanism: str) -> str:
    return MECHANISMS[mechanism][0]


def hmac_of(mechanism: str, key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, hash_name(mechanism)).digest()


def salted_password(mechanism: str, password: str, salt: bytes, iterations: int) -> bytes:
    """Hi(Normalize(password), salt, i): PBKDF2 with HMAC and one block, i.e. the digest size."""
    return hashlib.pbkdf2_hmac(hash_name(mechanism), password.encode(), salt, iterations)


def credential_from_salted(mechanism: str, salt: bytes, salted: bytes, iterations: int) -> ScramCredential:
    """ScramFormatter.generateCredential(salt, saltedPassword, iterations)."""
    client_key = hmac_of(mechanism, salted, b"Client Key")
    stored_key = hashlib.new(hash_name(mechanism), client_key).digest()
    return ScramCredential(salt, stored_key, hmac_of(mechanism, salted, b"Server Key"), iterations)


def new_credential(mechanism: str, password: str, iterations: int, salt: bytes | None = None) -> ScramCredential:
    salt = secure_random_string().encode() if salt is None else salt
    return credential_from_salted(mechanism, salt, salted_password(mechanism, password, salt, iterations), iterations)


def secure_random_string() -> str:
    """ScramFormatter.secureRandomString: a random 130-bit number in base 36."""
    value, digits = secrets.randbits(130), []
    while True:
        value, digit = divmod(value, 36)
        digits.append("0123456789abcdefghijklmnopqrstuvwxyz"[digit])
        if value == 0:
            return "".join(reversed(digits))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def credential_to_string(credential: ScramCredential) -> str:
    """What Kafka stores under the mechanism's key in /config/users/<user>."""
    return (f"salt={b64(credential.salt)},stored_key={b64(credential.stored_key)},"
            f"server_key={b64(credential.server_key)},iterations={credential.iterations}")


def credential_from_string(text: str) -> ScramCredential:
    """ScramCredentialUtils.credentialFromString; ValueError as Kafka's IllegalArgumentException."""
    props = {}
    for token in text.split(","):
        index = token.find("=")
        if index <= 0:
            raise ValueError(f"Credentials not valid: {text}")
        props[token[:index]] = token[index + 1:]
    if set(props) != {"salt", "stored_key", "server_key", "iterations"}:
        raise ValueError(f"Credentials not valid: {text}")
    try:
        salt, stored, server = (base64.b64decode(props[k], validate=True) for k in ("salt", "stored_key", "server_key"))
    except binascii.Error as exc:
        raise ValueError(f"Credentials not valid: {exc}") from None
    return ScramCredential(salt, stored, server, int(props["iterations"]))


def sasl_name(username: str) -> str:
    return username.replace("=", "=3D").replace(",", "=2C")


def username_of(name: str) -> str:
    """ScramFormatter.username: ValueError on an '=' that is not =2C or =3D."""
    username = name.replace("=2C", ",")
    if "=" in username.replace("=3D", ""):
        raise ValueError(f"Invalid username: {name}")
    return username.replace("=3D", "=")
