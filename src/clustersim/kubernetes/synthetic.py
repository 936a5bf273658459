"""Seeded saturated workloads of heterogeneous pods: arrivals outpace completions, so most pods queue.

Used to compare the built-in `kube` policy's queue with kube-scheduler's (docs/kubernetes.md) and to benchmark
the facade with the real scheduler. Each pod asks cpu from {250m, 500m, 1, 2} and memory from {256Mi, 512Mi, 1Gi,
2Gi, 4Gi}, runs 60-600 s (whole seconds), and arrives with its group: `group` pods every `gap` seconds.
"""

from __future__ import annotations

import random

from clustersim.workload.job import Job
from clustersim.workload.pods import PodSpec, make_pod

MIB = 2**20
CPUS = (250, 500, 1000, 2000)
MEMORIES = (256 * MIB, 512 * MIB, 1024 * MIB, 2048 * MIB, 4096 * MIB)


def saturated_pods(count: int, seed: int = 1, group: int = 50, gap: float = 10.0) -> list[Job]:
    """`count` pods named pod-0, pod-1... (same seed, same pods)."""
    draw = random.Random(seed)
    pods = []
    for i in range(count):
        request = {"cpu": draw.choice(CPUS), "memory": draw.choice(MEMORIES)}
        duration = float(draw.randint(60, 600))
        pods.append(make_pod(PodSpec(name=f"pod-{i}"), request, duration, (i // group) * gap, job_id=str(i)))
    return pods
