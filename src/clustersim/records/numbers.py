"""How numbers are written in every output: exactly, deterministically, and compactly."""

from __future__ import annotations

import math


def fmt(value: float) -> str:
    """Integral values without a decimal point, others as the shortest text that reads back exactly."""
    if math.isfinite(value) and value == int(value):
        return str(int(value))
    return repr(float(value))
