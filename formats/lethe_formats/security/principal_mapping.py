"""``ssl.principal.mapping.rules``: a client certificate's DN to the principal's name.

Theory of operation
-------------------
Kafka's ``SslPrincipalMapper`` takes a comma-separated list of rules, tried in
order; the first that yields a name wins::

    DEFAULT                        the DN unchanged (the default setting)
    RULE:<pattern>/<replacement>/  if <pattern> matches the whole DN: the DN with every
    RULE:<pattern>/<replacement>/L match replaced (Java's replaceAll: $1.. are groups);
    RULE:<pattern>/<replacement>/U L / U lower- or upper-cases the result

e.g. ``RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,DEFAULT`` makes
``CN=kafka-client,OU=ServiceUsers,O=acme`` the principal ``User:kafka-client``.
A rule that does not parse is a config error (``Invalid rule: ...``); a DN no
rule maps fails that connection (Kafka: "No rules apply to <DN>").

Patterns are Java regular expressions run by Python's ``re``; the common
subset (groups, classes, anchors, lazy quantifiers) behaves the same. In a
replacement, ``$n`` takes the longest run of digits naming an existing group
(``$12`` with 3 groups is group 1 then ``2``), a ``$n`` naming no group is the
literal text (as Kafka escapes it), and ``\\x`` is ``x``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

__all__ = ["NoMatchingRuleError", "PrincipalMapper", "principal_mapper"]

_RULE = r"(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)"
_SPLITTER = re.compile(r"\s*(" + _RULE + r")\s*(,\s*|$)")
_PARSER = re.compile(_RULE)


class NoMatchingRuleError(ValueError):
    """No rule maps this DN: the connection fails."""


@dataclass(frozen=True, slots=True)
class _Rule:
    pattern: re.Pattern[str] | None = None  # None: DEFAULT
    replacement: str = ""
    case: str = ""  # "", "L" or "U"

    def apply(self, dn: str) -> str | None:
        if self.pattern is None:
            return dn
        if self.pattern.fullmatch(dn) is None:
            return None
        result = self.pattern.sub(lambda m: _expand(self.replacement, m), dn)
        if self.case == "L":
            return result.lower()
        return result.upper() if self.case == "U" else result


def _expand(replacement: str, match: re.Match[str]) -> str:
    """Java's ``Matcher.appendReplacement`` of ``replacement`` (module docstring)."""
    out, i, groups = [], 0, match.re.groups
    while i < len(replacement):
        ch = replacement[i]
        if ch == "\\" and i + 1 < len(replacement):
            out.append(replacement[i + 1])
            i += 2
        elif ch == "$" and i + 1 < len(replacement) and replacement[i + 1].isdigit():
            j, number = i + 2, int(replacement[i + 1])
            if number > groups and number != 0:
                out.append(replacement[i : i + 2])  # no such group: literal text
                i += 2
                continue
            while j < len(replacement) and replacement[j].isdigit():
                longer = number * 10 + int(replacement[j])
                if longer > groups:
                    break
                number, j = longer, j + 1
            out.append(match.group(number) or "")
            i = j
        else:
            out.append(ch)
            i += 1
    return "".join(out)


class PrincipalMapper:
    """Parsed rules; :meth:`name` maps one DN."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.rules: list[_Rule] = []
        for found in _SPLITTER.finditer(text.strip()):
            rule = found.group(1)
            parsed = _PARSER.match(rule)
            if parsed is None or parsed.end() != len(rule):
                raise ValueError(f"Invalid rule: {rule}")
            if parsed.group(1) is not None:
                self.rules.append(_Rule())
            elif parsed.group(2) is not None:
                try:
                    pattern = re.compile(parsed.group(2))
                except re.error as error:
                    raise ValueError(f"Invalid rule: {rule} ({error})") from None
                self.rules.append(_Rule(pattern, parsed.group(4), parsed.group(6) or ""))
            if found.end() >= len(text.strip()):
                break

    def name(self, dn: str) -> str:
        for rule in self.rules:
            mapped = rule.apply(dn)
            if mapped is not None:
                return mapped
        raise NoMatchingRuleError(f"No rules apply to {dn}, rules {self.text}")


@functools.lru_cache(maxsize=64)
def principal_mapper(text: str) -> PrincipalMapper:
    """The mapper of an ``ssl.principal.mapping.rules`` value (ValueError if invalid)."""
    return PrincipalMapper(text)
