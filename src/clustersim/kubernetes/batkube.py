"""Batkube's experiment inputs (Table 4.1 of the thesis): `burst` and `spaced` pods on 16 one-cpu nodes."""

from __future__ import annotations

from clustersim.platform.model import Node, Platform
from clustersim.workload.job import Job
from clustersim.workload.pods import PodSpec, make_pod

GIB = 2**30


def batkube_platform(nodes: int = 16, cores: int = 1, memory: int = 4 * GIB) -> Platform:
    return Platform([Node(i, f"node{i}", cores=cores, memory=memory) for i in range(nodes)], name="batkube")


def batkube_pods(kind: str, count: int = 200, duration: float = 170.0, spacing: float = 10.0,
                 scheduler: str = "default-scheduler") -> list[Job]:
    """`burst`: `count` pods of 1 cpu at t=0; `spaced`: one every `spacing` seconds. Named pod-0, pod-1..."""
    gaps = {"burst": 0.0, "spaced": spacing}
    if kind not in gaps:
        raise ValueError(f"unknown Batkube workload '{kind}'; valid: {', '.join(gaps)}")
    return [
        make_pod(PodSpec(name=f"pod-{i}", scheduler_name=scheduler), {"cpu": 1000}, duration, i * gaps[kind],
                 job_id=str(i))
        for i in range(count)
    ]
