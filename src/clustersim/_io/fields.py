"""Checking values decoded from JSON or YAML; errors name the file, the field path and what was expected.

Readers of structured files (Batsim workloads, cluster descriptions) share these checks so that every such
file fails the same way:
`cluster.yaml, field 'nodes[1].cores': expected an integer >= 1, got 'eight' (a string)`.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Iterable, Mapping
from typing import NoReturn, TypeVar

from clustersim.errors import InputError

T = TypeVar("T")


def child(path: str, key: str) -> str:
    """The path of a mapping entry: `nodes[1].cores`, or `profiles['my profile']` when not a name."""
    if key.isidentifier():
        return f"{path}.{key}" if path else key
    return f"{path}[{key!r}]"


def item(path: str, index: int) -> str:
    return f"{path}[{index}]"


def describe(value: object) -> str:
    """A short description of a decoded value for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"{shown!r} (a string)"
    if isinstance(value, int | float):
        try:
            return repr(value)
        except ValueError:  # an integer too long to print (Python limits int-to-str conversions)
            return "a very large integer"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return f"a {type(value).__name__}"


def listing(names: Iterable[str], limit: int = 12) -> str:
    """Names sorted and comma-separated, cut after `limit` with the total, so huge files give short errors."""
    ordered = sorted(names)
    shown = ", ".join(ordered[:limit])
    return shown if len(ordered) <= limit else f"{shown}, ... ({len(ordered)} in all)"


class Checker:
    """Checks the values of one decoded document; every error names the document and the field path."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, field: str, message: str) -> NoReturn:
        raise InputError(self.source, message, field=field or None)

    def expected(self, field: str, what: str, value: object) -> NoReturn:
        self.fail(field, f"expected {what}, got {describe(value)}")

    def quantity(self, value: object, field: str, parse: Callable[[str | int | float], T], expected: str) -> T:
        """A value read by a quantity parser (`500m`, `2Gi`, `1Gf`): its ValueError becomes this field's error."""
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            self.expected(field, expected, value)
        try:
            return parse(value)
        except ValueError as error:
            self.fail(field, str(error))

    def choice(self, value: object, field: str, choices: Iterable[str]) -> str:
        """One of `choices` (a name); any other value, a list or a mapping included, is this field's error."""
        names = list(choices)
        if not isinstance(value, str) or value not in names:
            self.expected(field, f"one of {', '.join(names)}", value)
        return value

    def mapping(self, value: object, field: str) -> Mapping[str, object]:
        if not isinstance(value, Mapping):
            self.expected(field, "a mapping", value)
        for key in value:
            if not isinstance(key, str):
                self.fail(field, f"keys must be strings, got {describe(key)}")
        return value

    def sequence(self, value: object, field: str) -> list[object]:
        if not isinstance(value, list):
            self.expected(field, "a list", value)
        return value

    def string(self, value: object, field: str) -> str:
        if not isinstance(value, str) or not value:
            self.expected(field, "a non-empty string", value)
        return value

    def integer(self, value: object, field: str, minimum: int | None = None, maximum: int | None = None) -> int:
        """An integer; integral floats such as `4.0` are accepted, booleans are not; `maximum` is a limit."""
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool) or (minimum is not None and value < minimum):
            self.expected(field, "an integer" + (f" >= {minimum}" if minimum is not None else ""), value)
        if maximum is not None and value > maximum:
            self.expected(field, f"an integer <= {maximum} (the limit in docs/limits.md)", value)
        return value

    def number(self, value: object, field: str, minimum: float | None = None, above: bool = False) -> float:
        """A finite number, at least `minimum` (or strictly above it when `above`)."""
        bound = "" if minimum is None else f" {'>' if above else '>='} {minimum:g}"
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.expected(field, f"a number{bound}", value)
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if not math.isfinite(number):
            self.expected(field, f"a finite number{bound}", value)
        if minimum is not None and (number <= minimum if above else number < minimum):
            self.expected(field, f"a number{bound}", value)
        return number

    def required(self, mapping: Mapping[str, object], key: str, field: str) -> object:
        if key not in mapping:
            self.fail(field, f"missing key '{key}'")
        return mapping[key]

    def known_keys(self, mapping: Mapping[str, object], field: str, valid: Iterable[str]) -> None:
        """Refuse keys outside `valid`, so a typo is an error and not a silently ignored setting."""
        allowed = set(valid)
        for key in mapping:
            if key not in allowed:
                close = difflib.get_close_matches(key, allowed, n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                self.fail(child(field, key), f"unknown key '{key}'{hint}; valid keys: {listing(allowed)}")
