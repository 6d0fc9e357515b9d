"""`ssl.cipher.suites` in Kafka's (IANA / JSSE) names, as OpenSSL names them for Python's ssl module.

TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 -> ECDHE-RSA-AES128-GCM-SHA256, TLS_RSA_WITH_AES_128_CBC_SHA ->
AES128-SHA, TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 -> ECDHE-ECDSA-CHACHA20-POLY1305. OpenSSL names
pass through. TLS 1.3 suites (TLS_AES_128_GCM_SHA256, ...) are dropped: Python cannot restrict them, all
are enabled. Pure string rules.
"""

import re

_KEY_EXCHANGE = {"RSA": "", "ECDHE_RSA": "ECDHE-RSA", "ECDHE_ECDSA": "ECDHE-ECDSA", "DHE_RSA": "DHE-RSA",
                 "DHE_DSS": "DHE-DSS"}
_BULK = re.compile(r"(AES|CAMELLIA|ARIA)_(\d+)_(GCM|CBC|CCM)_(SHA\d*)")
TLS13 = ("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256",
         "TLS_AES_128_CCM_SHA256", "TLS_AES_128_CCM_8_SHA256")


def openssl_name(name: str) -> str | None:
    """The OpenSSL name of one suite; None for a TLS 1.3 suite."""
    if name in TLS13:
        return None
    if not name.startswith(("TLS_", "SSL_")) or "_WITH_" not in name:
        return name  # an OpenSSL name already (or unknown: OpenSSL decides)
    exchange, _, bulk = name[4:].partition("_WITH_")
    prefix = _KEY_EXCHANGE.get(exchange)
    if prefix is None:
        return name
    if bulk.startswith("CHACHA20_POLY1305"):
        body = "CHACHA20-POLY1305"
    else:
        match = _BULK.fullmatch(bulk)
        if match is None:
            return name
        alg, bits, mode, mac = match.groups()
        body = f"{alg}{bits}-{mode}-{mac}" if mode in ("GCM", "CCM") else f"{alg}{bits}-{mac}"
        if mode == "GCM" and alg == "AES" and prefix == "":
            body = f"AES{bits}-GCM-{mac}"
    return f"{prefix}-{body}" if prefix else body


def openssl_cipher_list(suites: list[str]) -> str:
    """The cipher list for SSLContext.set_ciphers ("" = OpenSSL's defaults)."""
    return ":".join(n for n in (openssl_name(s) for s in suites) if n)
