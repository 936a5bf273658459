"""Seeded saturated workloads of heterogeneous pods: arrivals outpace completions, so most pods queue.

Used to compare the built-in `kube` policy's queue with kube-scheduler's (docs/kubernetes.md) and to benchmark
the facade with the real scheduler. Each pod asks cpu from {250m, 500m, 1, 2} and memory from {256Mi, 512Mi, 1Gi,
2Gi, 4Gi}, runs 60-600 s (whole seconds), and arrives with its group: `group` pods every `gap` seconds. The
nodes have 8 cpu and 32Gi each; groups of half as many pods as nodes every 10 s saturate them.

    python -m clustersim.kubernetes.synthetic 5000 100 --seed 1 -o DIR
        # DIR/nodes.yaml and DIR/pods.yaml, for `clustersim run-k8s` / `serve-k8s -p DIR/nodes.yaml -w DIR/pods.yaml`
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence
from pathlib import Path

from clustersim.kubernetes.objects import quantity
from clustersim.platform.model import Node, Platform
from clustersim.workload.job import Job
from clustersim.workload.pods import PodSpec, make_pod, pod_spec
from clustersim.workload.profiles import Delay

MIB = 2**20
CPUS = (250, 500, 1000, 2000)
MEMORIES = (256 * MIB, 512 * MIB, 1024 * MIB, 2048 * MIB, 4096 * MIB)
NODE_CPU = 8
NODE_MEMORY = 32 * 1024 * MIB


def saturated_pods(count: int, seed: int = 1, group: int = 50, gap: float = 10.0) -> list[Job]:
    """`count` pods named pod-0, pod-1... or pod-00, pod-01... (as many digits as the last; same seed, same pods).
    The padding keeps the names' order the pods' order, which decides among pods that arrive at once."""
    draw = random.Random(seed)
    pods = []
    width = len(str(count - 1))
    for i in range(count):
        request = {"cpu": draw.choice(CPUS), "memory": draw.choice(MEMORIES)}
        duration = float(draw.randint(60, 600))
        pods.append(make_pod(PodSpec(name=f"pod-{i:0{width}d}"), request, duration, (i // group) * gap,
                             job_id=f"{i:0{width}d}"))
    return pods


def saturated_nodes(count: int) -> Platform:
    """`count` nodes of 8 cpu and 32Gi, named node0, node1..."""
    return Platform([Node(i, f"node{i}", cores=NODE_CPU, memory=NODE_MEMORY) for i in range(count)], name="saturated")


def saturated(pods: int, nodes: int, seed: int = 1) -> tuple[Platform, list[Job]]:
    """The comparison's inputs: `pods` pods arriving nodes/2 at a time every 10 s on `nodes` nodes."""
    return saturated_nodes(nodes), saturated_pods(pods, seed, group=max(nodes // 2, 1))


def nodes_yaml(platform: Platform) -> str:
    return "".join(
        f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: {node.name}}}\nstatus: {{capacity: {{cpu: "
        f'"{node.cores}", memory: "{node.memory}"}}}}\n' for node in platform.nodes)


def pods_yaml(pods: Sequence[Job]) -> str:
    """Pod manifests with the run time and arrival annotations clustersim reads."""
    out = []
    for pod in pods:
        request, profile = pod.request or {}, pod.profile
        assert isinstance(profile, Delay)
        out.append(
            f"---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {pod_spec(pod).name}\n  annotations: "
            f'{{clustersim.io/duration: "{profile.seconds:g}s", clustersim.io/arrival: "{pod.submit_time:g}s"}}\n'
            f"spec:\n  containers:\n  - {{name: main, image: clustersim/delay, resources: {{requests: "
            f'{{cpu: "{quantity("cpu", request["cpu"])}", memory: "{request["memory"] // MIB}Mi"}}}}}}\n')
    return "".join(out)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Write a seeded saturated workload as Kubernetes manifests.")
    parser.add_argument("pods", type=int)
    parser.add_argument("nodes", type=int)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("-o", "--output", type=Path, required=True, help="directory for nodes.yaml and pods.yaml")
    args = parser.parse_args(argv)
    if args.pods < 1 or args.nodes < 1:
        parser.error("pods and nodes must be at least 1")
    platform, pods = saturated(args.pods, args.nodes, args.seed)
    args.output.mkdir(parents=True, exist_ok=True)
    (args.output / "nodes.yaml").write_text(nodes_yaml(platform), encoding="utf-8")
    (args.output / "pods.yaml").write_text(pods_yaml(pods), encoding="utf-8")


if __name__ == "__main__":
    main()
