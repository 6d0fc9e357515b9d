"""Kafka's `ssl.principal.mapping.rules` (SslPrincipalMapper, KIP-371): the principal name of a TLS
client from its certificate's distinguished name (RFC 2253, as Java's X500Principal.getName()).

Rules are comma separated; each is `DEFAULT` (the DN unchanged) or `RULE:pattern/replacement/[LU]`
(the first rule whose pattern matches the whole DN wins; the replacement uses Java's `$1` group
references; L / U lower- or upper-case the result). No matching rule: authentication fails. Plain
data and regular expressions, no I/O.
"""

import re
from dataclasses import dataclass

_RULE = r"(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)"
_SPLITTER = re.compile(r"\s*(" + _RULE + r")\s*(,\s*|$)")
_PARSER = re.compile(_RULE)
_GROUP_REF = re.compile(r"\\(.)|\$(\d+)")


class InvalidRule(ValueError):
    """IllegalArgumentException of SslPrincipalMapper: the configuration is rejected at start-up."""


class NoMatchingRule(LookupError):
    """No rule applies to the DN: Kafka fails the TLS authentication."""


@dataclass(frozen=True)
class Rule:
    is_default: bool
    pattern: re.Pattern | None = None
    replacement: str = ""  # already in Python's re.sub syntax
    case: str = ""  # "L", "U" or ""

    def apply(self, dn: str) -> str | None:
        if self.is_default:
            return dn
        if self.pattern.fullmatch(dn) is None:
            return None
        result = self.pattern.sub(self.replacement, dn)
        return result.lower() if self.case == "L" else result.upper() if self.case == "U" else result


def _python_replacement(java: str) -> str:
    """Java's Matcher replacement (`$1`, `\\x` = literal x) as an re.sub template."""
    def convert(match: re.Match) -> str:
        if match.group(2) is not None:
            return f"\\g<{match.group(2)}>"
        return match.group(1).replace("\\", "\\\\")
    out, last = [], 0
    for match in _GROUP_REF.finditer(java):
        out.append(java[last:match.start()].replace("\\", "\\\\"))
        out.append(convert(match))
        last = match.end()
    out.append(java[last:].replace("\\", "\\\\"))
    return "".join(out)


def parse_rules(text: str | None) -> list[Rule]:
    """SslPrincipalMapper.fromRules: InvalidRule names the offending rule."""
    rules = []
    for match in _SPLITTER.finditer((text if text is not None else "DEFAULT").strip()):
        rule = match.group(1)
        parsed = _PARSER.match(rule)
        if parsed is None or parsed.end() != len(rule):
            raise InvalidRule(f"Invalid rule: {rule}")
        if parsed.group(2) is not None:
            try:
                pattern = re.compile(parsed.group(2))
            except re.error as exc:
                raise InvalidRule(f"Invalid rule: {rule}: {exc}") from None
            rules.append(Rule(False, pattern, _python_replacement(parsed.group(4)), parsed.group(6) or ""))
        elif parsed.group(1) is not None:
            rules.append(Rule(True))
        # an empty rule (",,") is ignored, as Kafka does
    return rules


def principal_name(rules: list[Rule], dn: str) -> str:
    """SslPrincipalMapper.getName: the first rule that applies; NoMatchingRule when none does."""
    for rule in rules:
        name = rule.apply(dn)
        if name is not None:
            return name
    raise NoMatchingRule(f"No rules apply to {dn}, rules {rules}")
