"""How numbers are written in every output: exactly, deterministically, and compactly.

Compiled with the hot path (pyproject.toml `[tool.clustersim] compiled`): jobs.csv writes eight numbers per job.
"""

from __future__ import annotations

import math
from typing import Final

_EXACT: Final = 9007199254740992.0
"""2**53: every integer below it in magnitude is a float, and `repr` writes it with all its digits."""


def fmt(value: float) -> str:
    """Integral values without a decimal point, others as the shortest text that reads back exactly.

    An integral value below 2**53 is written as the int it is (its `repr` less `.0`, several times cheaper than
    the shortest-text search of `repr`); -0.0 keeps its sign, as `repr` does."""
    if -_EXACT < value < _EXACT:
        whole = int(value)
        if whole == value and (whole or math.copysign(1.0, value) > 0):
            return str(whole)
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text
