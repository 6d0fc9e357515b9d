"""SASL/OAUTHBEARER's unsecured JWT validation and exchange without sockets, with the cases of Kafka's
OAuthBearerClientInitialResponseTest, OAuthBearerUnsecuredJwsTest and OAuthBearerSaslServerTest."""

import base64
import json

import pytest

from fauxka.broker.auth.oauthbearer import (AuthenticationRefused, IllegalToken, InvalidCredentials,
                                            OAuthBearerServer, UnsecuredValidator, parse_initial_response)

NOW_MS = 1_800_000_000_000
OPTIONS = {"unsecuredValidatorRequiredScope": "requiredScope"}


def part(value: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


def jwt(claims: dict, header: dict | None = None, signature: str = "") -> str:
    """As librdkafka's enable.sasl.oauthbearer.unsecure.jwt writes one: header.claims. (no signature)."""
    return f"{part(header or {'alg': 'none'})}.{part(claims)}.{signature}"


def first_message(token: str, authzid: str = "", extensions: str = "") -> bytes:
    return f"n,{'a=' + authzid if authzid else ''},\x01auth=Bearer {token}\x01{extensions}\x01".encode()


GOOD = {"sub": "admin", "exp": NOW_MS / 1000 + 3600, "iat": NOW_MS / 1000, "scope": ["requiredScope", "other"]}


def test_initial_response_with_authzid_and_extensions():
    authzid, token, extensions = parse_initial_response(first_message("abc.def.", "admin", "traceId=42\x01"))
    assert (authzid, token, extensions) == ("admin", "abc.def.", {"traceId": "42"})


@pytest.mark.parametrize("message", [b"n,,\x01auth=Bearer x", b"y,,\x01auth=Bearer x\x01\x01", b"n,,\x01\x01",
                                     b"n,,\x01auth=Basic abc\x01\x01", b"n,,\x01auth=Bearer\x01\x01"])
def test_malformed_first_messages(message):
    with pytest.raises(InvalidCredentials):
        parse_initial_response(message)


def test_a_good_token():
    token = UnsecuredValidator(OPTIONS).validate(jwt(GOOD), NOW_MS)
    assert (token.principal, token.lifetime_ms) == ("admin", NOW_MS + 3_600_000)
    # a string scope claim is one scope; another principal claim name
    other = UnsecuredValidator({**OPTIONS, "unsecuredValidatorPrincipalClaimName": "client_id"})
    assert other.validate(jwt({"client_id": "app", "exp": NOW_MS / 1000 + 1, "scope": "requiredScope"}),
                          NOW_MS).principal == "app"


@pytest.mark.parametrize("claims,header,signature,fragment", [
    ({**GOOD, "exp": NOW_MS / 1000}, None, "", "was on or after the Expiration Time value"),
    ({k: v for k, v in GOOD.items() if k != "exp"}, None, "", "No expiration time in JWT"),
    ({k: v for k, v in GOOD.items() if k != "sub"}, None, "", "No principal name in JWT claim: sub"),
    ({**GOOD, "iat": NOW_MS / 1000 + 10}, None, "", "The Issued At value"),
    ({**GOOD, "iat": GOOD["exp"] + 1}, None, "", "The Issued At value"),
    (GOOD, {"alg": "HS256"}, "", "Unsecured JWS must have 'none' for an algorithm"),
    (GOOD, None, "c2ln", "Unsecured JWS must not contain a digital signature"),
    ({**GOOD, "scope": ["other"]}, None, "", "was missing a required scope (requiredScope)"),
])
def test_refused_tokens(claims, header, signature, fragment):
    with pytest.raises(IllegalToken) as refused:
        UnsecuredValidator(OPTIONS).validate(jwt(claims, header, signature), NOW_MS)
    assert fragment in str(refused.value)


def test_clock_skew_allows_a_just_expired_token():
    skewed = UnsecuredValidator({**OPTIONS, "unsecuredValidatorAllowableClockSkewMs": "5000"})
    assert skewed.validate(jwt({**GOOD, "exp": NOW_MS / 1000 - 1, "iat": NOW_MS / 1000 - 60}),
                           NOW_MS).principal == "admin"
    with pytest.raises(IllegalToken, match=r"The Expiration Time time \(1799999999.000000 seconds\) was not after"):
        skewed.validate(jwt({**GOOD, "exp": NOW_MS / 1000 - 1, "iat": NOW_MS / 1000}), NOW_MS)


def test_exchange_success_and_errors():
    server = OAuthBearerServer(UnsecuredValidator(OPTIONS))
    assert server.evaluate(first_message(jwt(GOOD)), NOW_MS) == b"" and server.complete
    assert server.token.principal == "admin"
    # a missing scope: Kafka's JSON, then the client's ^A fails the authentication with it
    scoped = OAuthBearerServer(UnsecuredValidator(OPTIONS))
    reply = scoped.evaluate(first_message(jwt({**GOOD, "scope": []})), NOW_MS)
    assert reply == b'{"status":"insufficient_scope", "scope":"[requiredScope]"}' and not scoped.complete
    with pytest.raises(AuthenticationRefused, match='insufficient_scope'):
        scoped.evaluate(b"\x01", NOW_MS)
    expired = OAuthBearerServer(UnsecuredValidator(OPTIONS))
    assert expired.evaluate(first_message(jwt({**GOOD, "exp": 1})), NOW_MS) == b'{"status":"invalid_token"}'
    other = OAuthBearerServer(UnsecuredValidator(OPTIONS))
    with pytest.raises(AuthenticationRefused, match=r"authorization id \(bob\) that is different from the token's "
                                                    r"principal name \(admin\)"):
        other.evaluate(first_message(jwt(GOOD), authzid="bob"), NOW_MS)
