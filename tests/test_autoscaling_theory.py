"""With fixed replicas and Poisson traffic, the per-request model matches processor-sharing queueing theory, and
the aggregate (fluid) model agrees with the per-request model."""

from __future__ import annotations

import math
import statistics

import pytest

from clustersim.autoscaling.run import run_scenario
from clustersim.autoscaling.scenario import parse_scenario
from clustersim.autoscaling.theory import erlang_c, mmc_mean_response, ps_mean_response
from clustersim.autoscaling.timeseries import Row


def fixed_replicas(rate: float, replicas: int, *, mode: str = "per-request", router: str = "random",
                   duration: float = 20000, work: float = 0.1) -> dict[str, object]:
    return {
        "duration": duration, "seed": 3, "mode": mode, "output_interval": 500,
        "deployment": {"replicas": replicas, "requests": {"cpu": "1", "memory": "64Mi"}, "startup_delay": 0,
                       "readiness_delay": 0, "work": work, "router": router},
        "traffic": {"pattern": "poisson", "rate": rate},
        "cluster": {"scheduler": "first-fit", "nodes": [{"count": 2, "cores": 8, "memory": "8Gi"}]},
    }


def batch_means(rows: list[Row]) -> tuple[float, float]:
    """Mean response time and the 95% half-width, from per-interval batches (the first one is warm-up)."""
    batches = [r.latency_mean for r in rows[1:] if r.completed > 0]
    mean = statistics.fmean(batches)
    half = 2.03 * statistics.stdev(batches) / math.sqrt(len(batches))  # t(0.975, ~39 dof)
    return mean, half


@pytest.mark.parametrize(("rate", "replicas"), [(8.0, 1), (30.0, 4)])
def test_mean_response_time_matches_processor_sharing_within_the_confidence_interval(
    rate: float, replicas: int
) -> None:
    rows = run_scenario(parse_scenario(fixed_replicas(rate, replicas))).rows
    mean, half = batch_means(rows)
    theory = ps_mean_response(rate, 0.1, replicas)  # 0.5 s and 0.4 s
    assert abs(mean - theory) <= half, (mean, half, theory)
    assert half < 0.1 * theory  # the interval is tight enough to mean something


def test_processor_sharing_is_insensitive_to_the_work_distribution() -> None:
    document = fixed_replicas(8.0, 1)
    document["deployment"]["work_distribution"] = "deterministic"  # type: ignore[index]
    mean, half = batch_means(run_scenario(parse_scenario(document)).rows)
    assert abs(mean - ps_mean_response(8.0, 0.1)) <= half


def test_erlang_c_textbook_value() -> None:
    # 2 servers, offered load 1 Erlang: C = 1/3; mean response = S + C * S / (c - a) = 1 + 1/3
    assert erlang_c(1.0, 1.0, 2) == pytest.approx(1 / 3)
    assert mmc_mean_response(1.0, 1.0, 2) == pytest.approx(4 / 3)


def summary(rows: list[Row]) -> dict[str, float]:
    steady = rows[1:]
    completed = sum(r.completed for r in steady)
    return {
        "completed_per_s": completed / (steady[-1].time - rows[0].time),
        "utilisation": statistics.fmean(r.utilisation for r in steady),
        "latency_mean": sum(r.latency_mean * r.completed for r in steady) / completed,
        "latency_p50": statistics.fmean(r.latency_p50 for r in steady),
    }


@pytest.mark.parametrize("rate", [10.0, 30.0])
def test_aggregate_mode_agrees_with_per_request_mode_at_fixed_replicas(rate: float) -> None:
    per_request = summary(run_scenario(parse_scenario(fixed_replicas(rate, 4, duration=5000))).rows)
    fluid = summary(run_scenario(parse_scenario(fixed_replicas(rate, 4, mode="aggregate", duration=5000))).rows)
    assert fluid["completed_per_s"] == pytest.approx(per_request["completed_per_s"], rel=0.02)
    assert fluid["utilisation"] == pytest.approx(per_request["utilisation"], rel=0.03)
    assert fluid["latency_mean"] == pytest.approx(per_request["latency_mean"], rel=0.08)
    # Percentiles are an approximation (latency = work x (1 + N)): close at low load, about 40% high at rho 0.75.
    assert fluid["latency_p50"] == pytest.approx(per_request["latency_p50"], rel=0.15 if rate <= 10 else 0.5)


def test_aggregate_mode_agrees_with_per_request_mode_under_the_hpa() -> None:
    document: dict[str, object] = {
        "duration": 2400, "seed": 5, "output_interval": 10,
        "deployment": {"replicas": 2, "requests": {"cpu": "500m", "memory": "64Mi"}, "work": 0.02,
                       "router": "random", "timeout": 10},
        "traffic": {"pattern": "step", "before": 40, "after": 150, "at": 300},
        "hpa": {"min_replicas": 2, "max_replicas": 30, "target": 60},
        "cluster": {"scheduler": "first-fit", "nodes": [{"count": 4, "cores": 8, "memory": "8Gi"}]},
    }
    per_request = run_scenario(parse_scenario(document)).rows
    fluid = run_scenario(parse_scenario({**document, "mode": "aggregate"})).rows
    late = [r.replicas for r in per_request[100:]], [r.replicas for r in fluid[100:]]
    assert abs(statistics.fmean(late[0]) - statistics.fmean(late[1])) <= 1.0
    assert abs(max(late[0]) - max(late[1])) <= 2
