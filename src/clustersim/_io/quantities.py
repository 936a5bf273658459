"""Quantities as users write them: Kubernetes quantities (`500m`, `2Gi`, `1e3`) and SimGrid speeds (`1Gf`).

Kubernetes quantities are parsed exactly (as fractions), then rounded up the way Kubernetes rounds them, so
`0.1` cpu is 100 millicores and never 99 through a float error. Errors are `ValueError`s that say what a valid
value looks like; readers add the file and field.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

_BINARY: dict[str, int] = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL: dict[str, int | Fraction] = {
    "m": Fraction(1, 1000),
    "": 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
}
_QUANTITY = re.compile(r"([+-]?)(\d+\.?\d*|\.\d+)(?:[eE]([+-]?\d{1,3})|(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E))?")
_MAX_EXPONENT = 30  # far beyond any real resource; keeps a hostile `1e999` from building a huge integer
_QUANTITY_HELP = (
    "expected a number with an optional suffix (m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei) "
    "or exponent (1e3)"
)

_SPEED_PREFIXES = (
    ("k", "kilo", 1e3),
    ("M", "mega", 1e6),
    ("G", "giga", 1e9),
    ("T", "tera", 1e12),
    ("P", "peta", 1e15),
    ("E", "exa", 1e18),
    ("Z", "zeta", 1e21),
    ("Y", "yotta", 1e24),
)
_SPEED_UNITS: dict[str, float] = {"": 1.0, "f": 1.0, "flops": 1.0}
for _short, _long, _scale in _SPEED_PREFIXES:
    _SPEED_UNITS[_short + "f"] = _scale
    _SPEED_UNITS[_long + "flops"] = _scale
_SPEED_UNITS["zettaflops"] = 1e21  # SimGrid spells it `zeta`; accept the usual spelling too
_SPEED = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-z]*)")


def parse_quantity(text: str) -> Fraction:
    """The exact value of a Kubernetes quantity such as `500m`, `1.5`, `2Gi`, `1e3` or `-1k`."""
    match = _QUANTITY.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"'{text}' is not a quantity: {_QUANTITY_HELP}")
    sign, number, exponent, suffix = match.groups()
    value = Fraction(number)
    if exponent is not None:
        power = int(exponent)
        if abs(power) > _MAX_EXPONENT:
            raise ValueError(f"'{text}': exponent {power} is out of range (|exponent| <= {_MAX_EXPONENT})")
        value *= Fraction(10**power) if power >= 0 else Fraction(1, 10**-power)
    elif suffix:
        value *= _BINARY[suffix] if suffix in _BINARY else _DECIMAL[suffix]
    return -value if sign == "-" else value


def _exact(value: str | int | float, what: str) -> Fraction:
    if isinstance(value, bool):
        raise ValueError(f"expected {what}, got a boolean")
    if isinstance(value, int):
        exact = Fraction(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"expected {what}, got {value}")
        exact = Fraction(str(value))  # the decimal the user wrote, not the binary float's expansion
    elif isinstance(value, str):
        exact = parse_quantity(value)
    else:
        raise ValueError(f"expected {what}, got {type(value).__name__}")
    if exact < 0:
        raise ValueError(f"expected {what}, got a negative value ({value})")
    return exact


def parse_bytes(value: str | int | float) -> int:
    """A memory size in bytes (`500Mi`, `2Gi`, `1e3`, plain ints are bytes), rounded up like Kubernetes."""
    return math.ceil(_exact(value, "a memory size such as 512Mi, 2Gi or a number of bytes"))


def parse_millicores(value: str | int | float) -> int:
    """A CPU amount in millicores (`100m`, `1.5`, `2`), rounded up to a whole millicore like Kubernetes."""
    return math.ceil(_exact(value, "a cpu amount such as 500m, 1.5 or 2") * 1000)


def parse_speed(text: str) -> float:
    """A SimGrid speed in flop/s: `100Mf`, `1.5Gf`, `1e9f`, `2gigaflops`; a bare number means flop/s."""
    match = _SPEED.fullmatch(text.strip())
    unit = match.group(2) if match else None
    if match is None or unit not in _SPEED_UNITS:
        raise ValueError(
            f"'{text}' is not a speed: expected a number with a unit such as f, kf, Mf, Gf, Tf, Pf or flops"
        )
    speed = float(match.group(1)) * _SPEED_UNITS[unit]
    if not math.isfinite(speed) or speed < 0:
        raise ValueError(f"'{text}' is not a speed: expected a finite, non-negative number of flop/s")
    return speed


def parse_speeds(text: str) -> tuple[float, ...]:
    """A SimGrid speed list, one per power state (`100Mf, 50Mf, 20Mf`), in the order given."""
    return tuple(parse_speed(part) for part in text.split(","))
