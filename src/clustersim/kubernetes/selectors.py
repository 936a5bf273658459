"""Field and label selectors of list and watch requests, matched against objects as JSON dicts."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from clustersim.errors import ClusterSimError


class SelectorError(ClusterSimError):
    """A selector the facade cannot parse; answered with 400 Bad Request."""


def field_value(obj: Mapping[str, object], path: str) -> str:
    """The value at a dotted path (`status.phase`, `spec.nodeName`), "" when absent, as the apiserver compares."""
    value: object = obj
    for part in path.split("."):
        if not isinstance(value, Mapping):
            return ""
        value = value.get(part)
    return "" if value is None else str(value)


@dataclass(frozen=True)
class Selector:
    """A conjunction of tests; the empty selector matches everything."""

    tests: tuple[Callable[[Mapping[str, object]], bool], ...] = ()

    def __call__(self, obj: Mapping[str, object]) -> bool:
        return all(test(obj) for test in self.tests)

    def __bool__(self) -> bool:
        return bool(self.tests)


def parse_field_selector(text: str) -> Selector:
    """`a.b=x,c!=y` (also `==`): equality tests on dotted paths."""
    tests = []
    for term in filter(None, (t.strip() for t in text.split(","))):
        match = re.fullmatch(r"([^!=]+)(!=|==|=)(.*)", term)
        if match is None:
            raise SelectorError(f"invalid field selector term '{term}': expected path=value or path!=value")
        path, op, value = match.groups()
        tests.append(_field_test(path.strip(), op == "!=", value.strip()))
    return Selector(tuple(tests))


def _field_test(path: str, negate: bool, value: str) -> Callable[[Mapping[str, object]], bool]:
    return lambda obj: (field_value(obj, path) == value) != negate


_SET = re.compile(r"\s*([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)\s*")


def parse_label_selector(text: str) -> Selector:
    """`a=b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, comma-separated."""
    tests = []
    for term in _split_terms(text):
        tests.append(_label_test(term))
    return Selector(tuple(tests))


def _split_terms(text: str) -> list[str]:
    terms, depth, current = [], 0, ""
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            terms.append(current)
            current = ""
        else:
            current += char
    terms.append(current)
    return [t.strip() for t in terms if t.strip()]


def _labels(obj: Mapping[str, object]) -> Mapping[str, object]:
    metadata = obj.get("metadata")
    labels = metadata.get("labels") if isinstance(metadata, Mapping) else None
    return labels if isinstance(labels, Mapping) else {}


def _label_test(term: str) -> Callable[[Mapping[str, object]], bool]:
    match = _SET.fullmatch(term)
    if match:
        key, op, values_text = match.groups()
        values = {v.strip() for v in values_text.split(",")}
        inside = op == "in"
        return lambda obj: (key in _labels(obj) and str(_labels(obj)[key]) in values) == inside
    match = re.fullmatch(r"([\w./-]+)\s*(!=|==|=)\s*([\w./-]*)", term)
    if match:
        key, op, value = match.groups()
        negate = op == "!="
        return lambda obj: (str(_labels(obj).get(key, "\0")) == value) != negate
    match = re.fullmatch(r"(!?)([\w./-]+)", term)
    if match:
        bang, key = match.groups()
        return lambda obj: (key in _labels(obj)) != bool(bang)
    raise SelectorError(f"invalid label selector term '{term}'")
