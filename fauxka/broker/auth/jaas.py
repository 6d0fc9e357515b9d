"""JAAS configuration text as Kafka's `sasl.jaas.config` reads it (org.apache.kafka.common.security.JaasConfig).

    <loginModuleClass> <controlFlag> (<optionName>=<optionValue>)*;

Tokens follow java.io.StreamTokenizer as Kafka configures it: words of letters, digits, '.', '-',
'_' and '$' (not starting with a digit, '.' or '-'), quoted strings with backslash escapes, `//`
and `/* */` comments. An unquoted value that starts with a digit is a number, which Kafka refuses
("Value not specified for key"): quote it.
"""

from dataclasses import dataclass, field

PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
FLAGS = ("REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL")
_WORD_START = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_$") | {chr(c) for c in range(160, 256)}
_NUMERIC = set("0123456789.-")
_WORD = _WORD_START | _NUMERIC
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
WORD, STRING, NUMBER, EOF = "word", "string", "number", "eof"


class JaasError(ValueError):
    """The text is not a JAAS configuration Kafka accepts; the message is Kafka's."""


@dataclass(frozen=True)
class JaasEntry:
    login_module: str
    flag: str
    options: dict[str, str] = field(default_factory=dict)


def _tokens(text: str):
    """(kind, value): kind is WORD, STRING, NUMBER (value None, as StreamTokenizer's sval), an
    ordinary character, or EOF."""
    i, n = 0, len(text)
    while True:
        while i < n and ord(text[i]) <= 32:
            i += 1
        if i >= n:
            yield EOF, None
            return
        c = text[i]
        if c == "/":
            if text.startswith("/*", i):
                end = text.find("*/", i + 2)
                i = n if end < 0 else end + 2
            else:  # '//' and, as StreamTokenizer's comment character, a lone '/'
                while i < n and text[i] not in "\r\n":
                    i += 1
            continue
        if c in _NUMERIC and not (c == "-" and (i + 1 >= n or text[i + 1] not in "0123456789.")):
            i += 1
            while i < n and text[i] in "0123456789.":
                i += 1
            yield NUMBER, None
        elif c in _WORD_START:
            start = i
            while i < n and text[i] in _WORD:
                i += 1
            yield WORD, text[start:i]
        elif c in "\"'":
            value, i = _quoted(text, i + 1, c)
            yield STRING, value
        else:
            i += 1
            yield c, None


def _quoted(text: str, i: int, quote: str) -> tuple[str, int]:
    out = []
    n = len(text)
    while i < n and text[i] != quote and text[i] not in "\r\n":
        c = text[i]
        i += 1
        if c == "\\" and i < n:
            c = text[i]
            i += 1
            if c in "01234567":
                digits = c
                while i < n and len(digits) < (3 if c <= "3" else 2) and text[i] in "01234567":
                    digits += text[i]
                    i += 1
                c = chr(int(digits, 8))
            else:
                c = _ESCAPES.get(c, c)
        out.append(c)
    if i < n and text[i] == quote:
        i += 1
    return "".join(out), i


def parse(text: str) -> list[JaasEntry]:
    """Every login module entry of `text`, as JaasConfig parses them."""
    tokens = _tokens(text)
    entries = []
    kind, value = next(tokens)
    while kind != EOF:
        login_module = value
        kind, flag = next(tokens)
        if kind == EOF:
            raise JaasError("Login module control flag not specified in JAAS config")
        if flag is None or flag.upper() not in FLAGS:
            if flag is None:
                raise JaasError("Login module control flag is not available in the JAAS config")
            raise JaasError(f"Invalid login module control flag '{flag}' in JAAS config")
        options = {}
        kind, key = next(tokens)
        while kind not in (EOF, ";"):
            eq, _ = next(tokens)
            kind, option = next(tokens) if eq == "=" else (EOF, None)
            if eq != "=" or kind == EOF or option is None:
                raise JaasError(f"Value not specified for key '{key}' in JAAS config")
            options[key] = option
            kind, key = next(tokens)
        if kind != ";":
            raise JaasError("JAAS config entry not terminated by semi-colon")
        if not login_module:
            raise JaasError("Login module name not specified in JAAS config")
        entries.append(JaasEntry(login_module, flag.upper(), options))
        kind, value = next(tokens)
    if not entries:
        raise JaasError("Login module not specified in JAAS config")
    return entries


def server_entry(text: str) -> JaasEntry:
    """The one login module of a broker's `listener.name.<l>.<mechanism>.sasl.jaas.config`
    (JaasContext.load): exactly one module is allowed."""
    entries = parse(text)
    if len(entries) != 1:
        raise JaasError(f"JAAS config property contains {len(entries)} login modules, should be 1 module")
    return entries[0]
