"""How numbers are written in every output: exactly, deterministically, and compactly."""

from __future__ import annotations


def fmt(value: float) -> str:
    """Integral values without a decimal point, others as the shortest text that reads back exactly."""
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text
