"""`fmt`, the text of every number in the outputs: its shortcut for integral values gives `repr`'s text less `.0`."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clustersim._io.numbers import fmt


def _plain(value: float) -> str:
    """The plain computation: the shortest text that reads back exactly, without the `.0` of integral values."""
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, 1e-5, 2.0**53 - 1, 2.0**53, -(2.0**53), 2.0**53 + 2, 1e15, 1e16 - 2, 1e16,
          1e16 + 2, -1e16, 1e300, 5e-324, math.inf, -math.inf, math.nan, 1234567890.0, 0.1 + 0.2]


@pytest.mark.parametrize("value", _EDGES)
def test_fmt_of_edge_values_is_the_plain_text(value: float) -> None:
    assert fmt(value) == _plain(value)


def test_fmt_writes_integral_values_without_a_point_and_keeps_the_sign_of_zero() -> None:
    assert [fmt(x) for x in (3.0, -1.0, 0.0, -0.0, 2.5, 1e16)] == ["3", "-1", "0", "-0", "2.5", "1e+16"]


@given(st.floats())
def test_fmt_of_any_float_is_the_plain_text(value: float) -> None:
    assert fmt(value) == _plain(value)


@given(st.integers(-(2**54), 2**54) | st.integers(-(10**10), 10**10))
def test_fmt_of_integral_floats_is_the_plain_text(whole: int) -> None:
    # trace times are whole seconds: the shortcut's case, up to past 2**53 where floats skip integers
    assert fmt(float(whole)) == _plain(float(whole))
