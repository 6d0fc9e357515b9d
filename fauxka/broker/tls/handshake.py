"""The server side of a TLS connection: the handshake (fauxka/broker/tls/stream.py), then the principal of the client
certificate.

Kafka's SslTransportLayer + DefaultKafkaPrincipalBuilder: on an SSL listener the principal is
`User:` + ssl.principal.mapping.rules applied to the certificate's subject DN (RFC 2253, most specific
attribute first, as X500Principal.getName()), or User:ANONYMOUS without a client certificate. A failed
or cut handshake, a plaintext client, a rejected certificate or a DN no rule maps closes the connection
(TlsRejected carries the log line's reason).
"""

import asyncio
import ssl

from fauxka.model.ssl_principal import NoMatchingRule, principal_name

from .settings import ListenerTls
from .stream import TlsStream


class TlsRejected(Exception):
    def __init__(self, reason: str, kind: str):
        super().__init__(reason)
        self.kind = kind  # metric label: tls_handshake, tls_timeout, tls_principal


def subject_dn(der: bytes) -> str:
    """The RFC 2253 subject of a DER certificate (cryptography's RFC 4514 string: the same order and escaping)."""
    from cryptography import x509

    return x509.load_der_x509_certificate(der).subject.rfc4514_string()


async def accept(tls: ListenerTls, stream: TlsStream, timeout_s: float) -> str | None:
    """Run the handshake on `stream`; the principal of the client certificate (None without one)."""
    try:
        async with asyncio.timeout(timeout_s):
            await stream.handshake()
    except (asyncio.TimeoutError, TimeoutError):
        raise TlsRejected(f"TLS handshake not finished within {timeout_s}s", "tls_timeout") from None
    except ssl.SSLError as exc:
        raise TlsRejected(f"TLS handshake failed: {exc.reason or exc}", "tls_handshake") from None
    except (ConnectionError, OSError, EOFError) as exc:
        raise TlsRejected(f"TLS handshake failed: {str(exc) or type(exc).__name__}", "tls_handshake") from None
    der = stream.ssl_object.getpeercert(binary_form=True)
    if not der:
        return None
    dn = subject_dn(der)
    try:
        return f"User:{principal_name(tls.rules, dn)}"
    except NoMatchingRule as exc:
        raise TlsRejected(f"TLS authentication failed: {exc}", "tls_principal") from None
