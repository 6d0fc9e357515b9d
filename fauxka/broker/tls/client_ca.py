"""The CAs a TLS listener names when it asks for a client certificate, as Kafka's JSSE does.

Java's SSLEngine sends the subjects of every certificate in its trust store in the CertificateRequest
(TLS 1.2) or its certificate_authorities extension (TLS 1.3). Clients use the list: librdkafka sends no
certificate when none of its chain comes from a named CA (rdkafka_ssl.c's cert callback), and Kafka
then refuses the connection with bad_certificate (stream.py). OpenSSL sends the list its SSL_CTX
holds (SSL_CTX_add_client_CA), which Python's ssl module does not expose: this module calls that
OpenSSL function on the context's SSL_CTX through ctypes, in the very libssl the ssl module loaded.

The SSL_CTX pointer is the first field after the object header of CPython's PySSLContext (Modules/
_ssl.c, unchanged since Python 3.4); it is used only once SSL_CTX_get_options on it gives back the
context's own options, so a different layout leaves the list empty (and logs), never a crash.
"""

import ctypes
import ssl
import sys

_HEADER = ctypes.sizeof(ctypes.c_ssize_t) + ctypes.sizeof(ctypes.c_void_p)  # PyObject_HEAD


def _loaded(name: str) -> str | None:
    """The path of the shared library `name` (libssl, libcrypto) this process has mapped."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.rsplit(" ", 1)[-1].strip()
                if f"/{name}.so" in path:
                    return path
    except OSError:
        return None
    return None


def _openssl():
    libssl, libcrypto = _loaded("libssl"), _loaded("libcrypto")
    if libssl is None or libcrypto is None:
        return None
    ssl_lib, crypto = ctypes.CDLL(libssl), ctypes.CDLL(libcrypto)
    ssl_lib.SSL_CTX_get_options.restype = ctypes.c_uint64
    ssl_lib.SSL_CTX_get_options.argtypes = [ctypes.c_void_p]
    ssl_lib.SSL_CTX_add_client_CA.restype = ctypes.c_int
    ssl_lib.SSL_CTX_add_client_CA.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    crypto.d2i_X509.restype = ctypes.c_void_p
    crypto.d2i_X509.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_long]
    crypto.X509_free.argtypes = [ctypes.c_void_p]
    return ssl_lib, crypto


def name_trusted_cas(context: ssl.SSLContext) -> str | None:
    """Make `context` (a server context with its trust store loaded) name its trusted CAs to clients.
    None when done, else why not (the listener then names none, as before)."""
    if sys.implementation.name != "cpython":
        return "not CPython"
    libraries = _openssl()
    if libraries is None:
        return "libssl not found in /proc/self/maps"
    ssl_lib, crypto = libraries
    ctx = ctypes.c_void_p.from_address(id(context) + _HEADER).value
    if not ctx or ssl_lib.SSL_CTX_get_options(ctx) != int(context.options):
        return "the ssl module's SSL_CTX is not where expected"
    for der in context.get_ca_certs(binary_form=True):
        data = ctypes.c_char_p(der)
        cert = crypto.d2i_X509(None, ctypes.byref(data), len(der))
        if not cert:
            continue
        try:
            ssl_lib.SSL_CTX_add_client_CA(ctx, cert)  # copies the subject name
        finally:
            crypto.X509_free(cert)
    return None
