"""Java .properties files, as Kafka reads server.properties."""

import re

_SEPARATOR = re.compile(r"(?<!\\)[=:\s]")


def parse_properties(text: str) -> dict[str, str]:
    props: dict[str, str] = {}
    logical = ""
    for raw in text.splitlines():
        line = raw.strip() if not logical else raw.lstrip()
        if not logical and (not line or line[0] in "#!"):
            continue
        if _continues(line):
            logical += line[:-1]
            continue
        logical += line
        key, value = _split(logical)
        props[key] = value
        logical = ""
    if logical:
        key, value = _split(logical)
        props[key] = value
    return props


def _continues(line: str) -> bool:
    trailing = len(line) - len(line.rstrip("\\"))
    return trailing % 2 == 1


def _split(line: str) -> tuple[str, str]:
    match = _SEPARATOR.search(line)
    if match is None:
        return _unescape(line), ""
    key, rest = line[: match.start()], line[match.start():]
    rest = rest.lstrip()
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip()
    return _unescape(key), _unescape(rest)


def _unescape(s: str) -> str:
    if "\\" not in s:
        return s
    return re.sub(r"\\(.)", lambda m: {"t": "\t", "n": "\n", "r": "\r"}.get(m.group(1), m.group(1)), s)
