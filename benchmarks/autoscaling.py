"""Wall and CPU time of one simulated hour of autoscaling: 100 requests/s per-request, 10,000 requests/s aggregate.

Targets: under 10 s and under 2 s of wall time. CPU time is printed too, since a shared machine inflates wall time.
Run: python benchmarks/autoscaling.py
"""

from __future__ import annotations

from clustersim.autoscaling.run import run_scenario
from clustersim.autoscaling.scenario import parse_scenario


def scenario(rate: float, mode: str, work: float) -> dict[str, object]:
    """An hour of Poisson traffic stepping from half to full `rate` at 20 minutes, under the default HPA."""
    return {
        "name": f"{mode}-{rate:g}", "duration": 3600, "seed": 1, "mode": mode,
        "deployment": {"replicas": 2, "requests": {"cpu": "1", "memory": "128Mi"}, "work": work, "timeout": 10},
        "traffic": {"pattern": "step", "before": rate / 2, "after": rate, "at": 1200},
        "hpa": {"min_replicas": 2, "max_replicas": 400, "target": 70},
        "cluster": {"scheduler": "first-fit", "nodes": [{"count": 50, "cores": 8, "memory": "32Gi"}]},
    }


def main() -> None:
    for rate, mode, work, target in ((100.0, "per-request", 0.05, 10.0), (10_000.0, "aggregate", 0.01, 2.0)):
        result = run_scenario(parse_scenario(scenario(rate, mode, work)))
        rows = result.rows
        completed = sum(r.completed for r in rows)
        print(
            f"{mode:12s} {rate:>8,.0f} req/s, 1 simulated hour: wall {result.wall_seconds:6.2f} s, "
            f"cpu {result.cpu_seconds:6.2f} s (target < {target:g} s wall); {completed:,.0f} requests completed, "
            f"up to {max(r.replicas for r in rows)} replicas"
        )


if __name__ == "__main__":
    main()
