"""A true JKS store (magic 0xFEEDFEED, Kafka's default `ssl.*.type`) read by the JRE's own `keytool`,
which every fauxka machine has for ZooKeeper: Java's reader, so a store opens here exactly when it opens
in Kafka, with the same passwords. No maintained Python library reads JKS (pyjks's last release is
from 2020 and pulls in a C extension).

- entries: `keytool -list -rfc` (in English, whatever the locale) gives each entry's alias, type and
  certificates as PEM;
- the private key: `keytool -importkeystore -srcalias A -srckeypass K` copies the one key entry into a
  PKCS12 file in a private temporary directory, which `cryptography` then opens (the key password is
  only accepted with one alias, so each key entry is copied on its own).

Passwords reach keytool through its `:env` form, never on a command line others can read.
"""

import functools
import os
import secrets
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

KEYTOOL_TIMEOUT_S = 60.0  # a JVM start takes ~0.2 s; this only bounds a hung one
ENGLISH = ["-J-Duser.language=en", "-J-Duser.country=US"]


class JksError(Exception):
    """keytool refused the store (wrong password, damaged file) or is missing: the text says why."""


@dataclass(frozen=True)
class Entry:
    alias: str
    kind: str  # PrivateKeyEntry, trustedCertEntry, SecretKeyEntry
    certificates: tuple[bytes, ...]  # PEM, leaf first for a key entry's chain


def _keytool() -> str:
    home = os.environ.get("JAVA_HOME")
    found = os.path.join(home, "bin", "keytool") if home else None
    found = found if found and os.access(found, os.X_OK) else shutil.which("keytool")
    if not found:
        raise JksError("reading a JKS store needs the JRE's keytool (not found on PATH nor in $JAVA_HOME/bin)")
    return found


def _run(args: list[str], secrets_env: dict[str, str]) -> str:
    env = {**os.environ, **secrets_env, "LC_ALL": "C"}
    try:
        done = subprocess.run([_keytool(), *ENGLISH, *args], env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=KEYTOOL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise JksError(f"keytool did not answer within {KEYTOOL_TIMEOUT_S:.0f} s") from None
    if done.returncode != 0:
        lines = [line for line in (done.stdout + done.stderr).splitlines() if line.startswith("keytool error")]
        cause = lines[-1].split(": ", 1)[-1] if lines else (done.stderr or done.stdout).strip()
        # "java.io.IOException: Keystore was tampered with, or password was incorrect" -> the message
        raise JksError(cause.split(": ", 1)[-1] if cause.startswith("java.") else cause)
    return done.stdout


def _store_args(path: str, password: str | None, prefix: str = "") -> tuple[list[str], dict[str, str]]:
    args = [f"-{prefix}keystore", path, f"-{prefix}storetype", "JKS"]
    if password is None:  # Kafka loads a trust store without a password, unchecked: so does keytool
        return args, {}
    return args + [f"-{prefix}storepass:env", "FAUXKA_JKS_STOREPASS"], {"FAUXKA_JKS_STOREPASS": password}


def _version(path: str) -> tuple[int, int]:
    try:
        st = os.stat(path)
    except OSError as exc:
        raise JksError(exc.strerror) from None
    return st.st_mtime_ns, st.st_size


def entries(path: str, password: str | None) -> list[Entry]:
    """Every entry of the store, in keytool's order (a store read once per process while unchanged: the
    listeners and the inter-broker client usually share one)."""
    return list(_entries(path, password, _version(path)))


@functools.lru_cache(maxsize=16)
def _entries(path: str, password: str | None, version: tuple[int, int]) -> tuple[Entry, ...]:
    args, env = _store_args(path, password)
    out = _run(["-list", "-rfc", *args], env)
    found: list[Entry] = []
    for block in out.split("\nAlias name: ")[1:]:
        alias, _, rest = block.partition("\n")
        kind = next((line.split(": ", 1)[1].strip() for line in rest.splitlines()
                     if line.startswith("Entry type: ")), "")
        pems, pos = [], 0
        while (begin := rest.find("-----BEGIN CERTIFICATE-----", pos)) >= 0:
            end = rest.index("-----END CERTIFICATE-----", begin) + len("-----END CERTIFICATE-----")
            pems.append(rest[begin:end].encode() + b"\n")
            pos = end
        found.append(Entry(alias, kind, tuple(pems)))
    return tuple(found)


def private_key_pkcs12(path: str, store_password: str, key_password: str, alias: str) -> tuple[bytes, bytes]:
    """The key entry `alias` as a PKCS12 file's bytes and the password that opens it."""
    return _private_key_pkcs12(path, store_password, key_password, alias, _version(path))


@functools.lru_cache(maxsize=16)
def _private_key_pkcs12(path: str, store_password: str, key_password: str, alias: str,
                        version: tuple[int, int]) -> tuple[bytes, bytes]:
    transfer = secrets.token_urlsafe(24)
    src, env = _store_args(path, store_password, "src")
    env |= {"FAUXKA_JKS_KEYPASS": key_password, "FAUXKA_JKS_TRANSFER": transfer}
    with tempfile.TemporaryDirectory(prefix="fauxka-jks-") as tmp:  # 0700: only this user reads it
        out = os.path.join(tmp, "key.p12")
        _run(["-importkeystore", "-noprompt", *src, "-srcalias", alias, "-srckeypass:env", "FAUXKA_JKS_KEYPASS",
              "-destkeystore", out, "-deststoretype", "PKCS12", "-deststorepass:env", "FAUXKA_JKS_TRANSFER",
              "-destkeypass:env", "FAUXKA_JKS_TRANSFER"], env)
        with open(out, "rb") as f:
            return f.read(), transfer.encode()
