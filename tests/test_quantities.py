"""Kubernetes quantities and SimGrid speeds: exact values, Kubernetes rounding, clear refusals."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clustersim._io.quantities import parse_bytes, parse_millicores, parse_quantity, parse_speed, parse_speeds


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("100m", Fraction(1, 10)),
        ("1.5", Fraction(3, 2)),
        ("500Mi", 500 * 2**20),
        ("2Gi", 2 * 2**30),
        ("1Ki", 1024),
        ("1e3", 1000),
        ("1E3", 1000),
        ("1.5e-3", Fraction(3, 2000)),
        ("1k", 1000),
        ("1M", 10**6),
        ("1G", 10**9),
        ("1.5G", 1_500_000_000),
        ("2E", 2 * 10**18),
        ("0.1", Fraction(1, 10)),
        (".5", Fraction(1, 2)),
        ("5.", 5),
        ("-1k", -1000),
        ("+3", 3),
    ],
)
def test_quantity_value_is_exact(text: str, value: Fraction | int) -> None:
    assert parse_quantity(text) == value


def test_decimal_cpu_rounds_to_exact_millicores_without_float_error() -> None:
    # 0.1 + 0.2 style float errors would give 299 or 301; exact parsing gives 300.
    assert parse_millicores("0.3") == 300
    assert parse_millicores("100m") == 100
    assert parse_millicores("1.5") == 1500
    assert parse_millicores(2) == 2000
    assert parse_millicores(0.1) == 100


def test_fractions_round_up_like_kubernetes() -> None:
    assert parse_millicores("0.0001") == 1
    assert parse_bytes("1500m") == 2
    assert parse_bytes("0.5Ki") == 512


@pytest.mark.parametrize(
    ("value", "expected"), [("64Gi", 64 * 2**30), ("500Mi", 524_288_000), (1024, 1024), ("1e3", 1000)]
)
def test_memory_sizes_in_bytes(value: str | int, expected: int) -> None:
    assert parse_bytes(value) == expected


@pytest.mark.parametrize(
    "text", ["", "abc", "1Q", "1 Gi", "Gi", "1.2.3", "1e", "1ki", "--1", "1e9999", "nan", "inf"]
)
def test_malformed_quantities_say_what_is_expected(text: str) -> None:
    with pytest.raises(ValueError, match=r"quantity|exponent"):
        parse_quantity(text)


def test_negative_memory_is_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        parse_bytes("-1Gi")


def test_booleans_are_not_quantities() -> None:
    with pytest.raises(ValueError, match="boolean"):
        parse_bytes(True)


@pytest.mark.parametrize(
    ("text", "speed"),
    [
        ("100Mf", 1e8),
        ("1Gf", 1e9),
        ("1.5Gf", 1.5e9),
        ("16.673E9f", 16.673e9),
        ("1e9", 1e9),
        ("2gigaflops", 2e9),
        ("3flops", 3.0),
        ("1kf", 1e3),
        ("1Pf", 1e15),
        (" 2Tf ", 2e12),
        ("0f", 0.0),
    ],
)
def test_simgrid_speeds(text: str, speed: float) -> None:
    assert parse_speed(text) == pytest.approx(speed)


@pytest.mark.parametrize("text", ["", "fast", "1Gb", "1 G f", "-1Gf", "1e999f", "nanf"])
def test_malformed_speeds_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="speed"):
        parse_speed(text)


def test_speed_lists_keep_power_state_order() -> None:
    assert parse_speeds("100Mf, 50Mf,20Mf") == (1e8, 5e7, 2e7)


@given(st.text(max_size=30))
def test_any_text_is_a_quantity_or_a_value_error(text: str) -> None:
    try:
        parse_quantity(text)
        parse_speed(text)
    except ValueError:
        pass
