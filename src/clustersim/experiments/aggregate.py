"""Aggregation over replications: runs that differ only by one axis (the seed) averaged, with 95% intervals.

One row per combination of the other axes, in plan order: those axis values, `runs` (successful runs
averaged), `failed`, then for every numeric metric `<metric>_mean`, `<metric>_std` and `<metric>_ci95`, the
half-width of the Student-t 95% confidence interval of the mean (empty with fewer than two runs).
"""

from __future__ import annotations

import json

from clustersim.experiments.results import Table, numeric_columns
from clustersim.experiments.stats import mean_ci

_NOT_METRICS = ("run", "status", "error")


def aggregate(table: Table, axes: list[str], over: str = "seed", confidence: float = 0.95) -> Table:
    """Average every numeric metric of the successful runs over `over`, grouped by the other axes."""
    keys = [axis for axis in axes if axis != over]
    metrics = numeric_columns(table, exclude=[*_NOT_METRICS, *axes])
    groups: dict[str, list[dict[str, object]]] = {}
    for row in table.rows:
        identity = json.dumps([row.get(k) for k in keys], sort_keys=True, default=str)
        groups.setdefault(identity, []).append(row)
    suffixes = ("mean", "std", "ci95")
    columns = [*keys, "runs", "failed", *(f"{m}_{s}" for m in metrics for s in suffixes)]
    out = Table(columns)
    for rows in groups.values():
        ok = [r for r in rows if r.get("status") == "ok"]
        summary: dict[str, object] = {k: rows[0].get(k) for k in keys}
        summary["runs"] = len(ok)
        summary["failed"] = sum(1 for r in rows if r.get("status") == "failed")
        for metric in metrics:
            values = [float(v) for r in ok if isinstance(v := r.get(metric), int | float)]
            if values:
                mean, std, half = mean_ci(values, confidence)
                summary.update({f"{metric}_mean": mean, f"{metric}_std": std, f"{metric}_ci95": half})
        out.rows.append(summary)
    return out
