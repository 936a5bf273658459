"""Pods scheduled per second by the built-in `kube` policy: 5,000 nodes, 100,000 pods (python this.py [pods nodes])."""

from __future__ import annotations

import sys
import time

from clustersim.kubernetes import PodSpec, make_pod
from clustersim.platform.model import Node, Platform
from clustersim.policies.registry import create_policy
from clustersim.runner import simulate
from clustersim.workload.stream import Workload


def main() -> None:
    nb_pods = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    nb_nodes = int(sys.argv[2]) if len(sys.argv) > 2 else 5_000
    platform = Platform([Node(i, f"node{i}", cores=8, memory=32 * 2**30) for i in range(nb_nodes)])
    # One arrival every 10 ms, 1-4 cpu and 1-8 GiB, 60-600 s: about twice what the cluster can run, so a backlog
    # builds and most attempts fail (each failure filters every node, as kube-scheduler's does).
    pods = [make_pod(PodSpec(f"p{i}"), {"cpu": 1000 * (1 + i % 4), "memory": 2**30 * (1 + i % 8)},
                     60.0 + (i * 7919) % 540, i * 0.01, job_id=str(i)) for i in range(nb_pods)]
    wall, cpu = time.perf_counter(), time.process_time()
    result = simulate(platform, Workload.from_jobs(pods), create_policy("kube"))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"kube policy: {nb_pods} pods on {nb_nodes} nodes: {result.metrics.nb_finished} scheduled in {wall:.1f} s "
          f"wall ({cpu:.1f} s CPU): {nb_pods / wall:.0f} pods/s wall, {nb_pods / cpu:.0f} pods/s CPU; "
          f"mean wait {result.metrics.mean('waiting'):.1f} s")


if __name__ == "__main__":
    main()
