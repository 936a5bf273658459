"""Confidence intervals: the Student-t quantile against tables (and scipy, in the dev extra), and aggregation
over seeds grouped by the other axes."""

from __future__ import annotations

import math

import pytest

from clustersim.experiments.aggregate import aggregate
from clustersim.experiments.results import Table
from clustersim.experiments.stats import mean_ci, t_cdf, t_quantile


@pytest.mark.parametrize(
    ("df", "expected"),
    [(1, 12.7062), (2, 4.3027), (4, 2.7764), (9, 2.2622), (19, 2.0930), (29, 2.0452), (120, 1.9799), (1e6, 1.96)],
)
def test_t_quantile_matches_the_tables_for_95_percent_intervals(df: float, expected: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(expected, abs=1e-4)


def test_t_quantile_matches_scipy() -> None:
    from scipy import stats
    for df in (1, 2.5, 3, 7, 30, 500):
        for p in (0.001, 0.1, 0.5, 0.9, 0.975, 0.9999):
            assert t_quantile(p, df) == pytest.approx(stats.t.ppf(p, df), rel=1e-9, abs=1e-9)


def test_t_cdf_is_symmetric_and_inverts_the_quantile() -> None:
    assert t_cdf(0.0, 5) == pytest.approx(0.5)
    assert t_cdf(-1.3, 5) == pytest.approx(1 - t_cdf(1.3, 5))
    assert t_cdf(t_quantile(0.8, 11), 11) == pytest.approx(0.8)


def test_t_quantile_refuses_impossible_arguments() -> None:
    with pytest.raises(ValueError):
        t_quantile(1.0, 3)
    with pytest.raises(ValueError):
        t_quantile(0.5, 0)


def test_mean_ci_of_a_known_sample() -> None:
    mean, std, half = mean_ci([1.0, 2.0, 3.0, 4.0])
    assert mean == 2.5
    assert std == pytest.approx(math.sqrt(5 / 3))
    assert half == pytest.approx(3.1824463 * math.sqrt(5 / 3) / 2)


def test_mean_ci_without_spread_or_replications() -> None:
    assert mean_ci([0.1, 0.1, 0.1]) == (0.1, 0.0, 0.0)
    assert mean_ci([7.0]) == (7.0, 0.0, None)


def test_aggregate_groups_by_the_other_axes_and_skips_failed_runs() -> None:
    rows: list[dict[str, object]] = [
        {"run": "a1", "status": "ok", "policy": "a", "seed": 1, "wait": 10, "name": "x"},
        {"run": "a2", "status": "ok", "policy": "a", "seed": 2, "wait": 14.0, "name": "x"},
        {"run": "b1", "status": "ok", "policy": "b", "seed": 1, "wait": 3, "name": "x"},
        {"run": "b2", "status": "failed", "policy": "b", "seed": 2, "wait": None, "error": "boom"},
    ]
    table = Table(["run", "status", "policy", "seed", "wait", "name", "error"], rows)
    summary = aggregate(table, ["policy", "seed"])
    assert summary.columns == ["policy", "runs", "failed", "wait_mean", "wait_std", "wait_ci95"]
    a, b = summary.rows
    assert (a["policy"], a["runs"], a["failed"], a["wait_mean"]) == ("a", 2, 0, 12.0)
    assert a["wait_ci95"] == pytest.approx(12.7062 * math.sqrt(8) / math.sqrt(2), rel=1e-5)
    assert (b["policy"], b["runs"], b["failed"], b["wait_mean"], b["wait_ci95"]) == ("b", 1, 1, 3.0, None)


def test_aggregate_over_another_axis() -> None:
    rows: list[dict[str, object]] = [
        {"run": f"{p}{s}", "status": "ok", "policy": p, "seed": s, "wait": w}
        for p, s, w in [("a", 1, 1.0), ("b", 1, 3.0), ("a", 2, 5.0), ("b", 2, 7.0)]
    ]
    summary = aggregate(Table(["run", "status", "policy", "seed", "wait"], rows), ["policy", "seed"], over="policy")
    assert [(r["seed"], r["wait_mean"]) for r in summary.rows] == [(1, 2.0), (2, 6.0)]
