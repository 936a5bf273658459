"""The `kube` policy's vectorized path places every pod exactly as its plugins, node by node, would."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from clustersim.core.state import ClusterState, ClusterView
from clustersim.kubernetes import PodSpec, Requirement, Toleration
from clustersim.platform.kube_labels import TAINTS_PROPERTY
from clustersim.platform.model import Node, Platform
from clustersim.policies.kube import KubePolicy
from clustersim.policies.kube.framework import NodeInfo, PodInfo
from clustersim.policies.kube.scores import BalancedAllocation, NodeResourcesFit

GIB = 2**30
GPU = "nvidia.com/gpu"
FOO = "example.com/foo"
STRATEGIES = ["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]

kinds = st.builds(
    lambda cores, memory, gpus, extras, zone, taint: {
        "cores": cores, "memory": memory, "gpus": gpus, "extras": extras,
        "properties": {"zone": zone, **({TAINTS_PROPERTY: taint} if taint else {})},
    },
    st.integers(0, 4), st.sampled_from([0, GIB, 4 * GIB]), st.integers(0, 2),
    st.sampled_from([{}, {}, {"pods": 2}, {FOO: 2}]), st.sampled_from(["a", "b"]),
    st.sampled_from(["", "", "gpu=true:NoSchedule", "x:PreferNoSchedule", "d:NoExecute"]),
)
AMOUNTS = {"cpu": (0, 100, 1000, 3000), "memory": (0, 2**28, GIB, 3 * GIB), GPU: (0, 1, 2), FOO: (0, 1)}
requests = st.lists(st.tuples(st.sampled_from(list(AMOUNTS)), st.integers(0, 3)), max_size=3).map(
    lambda items: {name: AMOUNTS[name][i % len(AMOUNTS[name])] for name, i in items})
rarely = st.integers(0, 3).map(lambda i: i == 0)
usually = rarely.map(lambda rare: not rare)
specs = st.builds(
    lambda selector, toleration, node_name, affinity: PodSpec(
        "p", node_selector={"zone": "a"} if selector else {},
        tolerations=(Toleration("gpu", "Exists"),) if toleration else (), node_name=node_name,
        required_terms=((Requirement("zone", "In", ("b",)),),) if affinity else ()),
    rarely, st.booleans(), st.sampled_from(["n0", "n3", "none", *[""] * 9]), rarely,
)
steps = st.lists(st.tuples(requests, specs, usually, st.none() | st.integers(0, 999),
                           st.none() | st.integers(0, 999)), min_size=5, max_size=30)
"""Place a pod (and keep it or not), then maybe remove a pod placed before, then maybe hold or free a node."""


def place(fast: KubePolicy, reference: KubePolicy, pod: PodInfo, view: ClusterView) -> NodeInfo | None:
    node, message = fast.place(pod, view)
    expected, expected_message = reference.place(pod, view)
    assert (node and node.index, message) == (expected and expected.index, expected_message)
    assert fast._start_index == reference._start_index
    assert (fast._rng and fast._rng.getstate()) == (reference._rng and reference._rng.getstate())
    return node


def policies(view: ClusterView, start: int = 0, **options: object) -> tuple[KubePolicy, KubePolicy]:
    fast, reference = KubePolicy(**options), KubePolicy(**options)  # type: ignore[arg-type]
    reference.vectorized = False
    for policy in (fast, reference):
        policy.begin(view)
        policy._start_index = start % len(view.platform.nodes)
    assert fast._columns is not None and reference._columns is None
    return fast, reference


@settings(max_examples=100)
@given(
    st.lists(kinds, min_size=1, max_size=4), st.integers(1, 12) | st.integers(100, 250), st.integers(1, 3),
    st.sampled_from([0, 5, 50, 100]), st.sampled_from(STRATEGIES), st.integers(0, 2), st.integers(0, 2),
    st.sampled_from([None, 1, 2]), st.integers(0, 249), steps,
)
def test_vectorized_placements_are_the_plugins_placements(
    node_kinds: list[dict], nb_nodes: int, stride: int, percentage: int, strategy: str,  # type: ignore[type-arg]
    fit_weight: int, balanced_weight: int, seed: int | None, start: int,
    script: list[tuple[dict[str, int], PodSpec, bool, int | None, int | None]],
) -> None:
    platform = Platform([Node(i, f"n{i}", **node_kinds[i * stride // 3 % len(node_kinds)]) for i in range(nb_nodes)])
    state = ClusterState(platform)
    view = ClusterView(state)
    fast, reference = policies(view, start, strategy=strategy, fit_weight=fit_weight, balanced_weight=balanced_weight,
                               percentage_of_nodes_to_score=percentage, seed=seed)
    placed: list[tuple[int, dict[str, int]]] = []
    for request, spec, keep, remove, hold in script:
        node = place(fast, reference, PodInfo("pod", request, spec, 0.0, 0), view)
        if node is not None and keep:  # as the core would start it
            if state.shared.pods(node.index) == 0:
                state.free = state.free - platform.units_of(node.index)
            state.shared.take(node.index, request)
            placed.append((node.index, request))
        if remove is not None and placed:
            index, request = placed.pop(remove % len(placed))
            if state.shared.give_back(index, request):
                state.free = state.free | platform.units_of(index)
        if hold is not None and state.shared.pods(hold % nb_nodes) == 0:  # an exclusive job, or off; or back
            units = platform.units_of(hold % nb_nodes)
            state.free = state.free - units if units.issubset(state.free) else state.free | units


@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 4), st.integers(0, 4)), min_size=1,
                max_size=20), st.sampled_from([0, 1, 999, 1000, 2500]), st.sampled_from([0, 1, 2**28, GIB]))
def test_score_columns_are_the_plugins_scores(amounts: list[tuple[int, int, int, int]], cpu: int, memory: int) -> None:
    """Columns of many nodes score as the plugins score each node, also where a request exceeds what is left."""
    nodes = [NodeInfo(i, Node(i, f"n{i}"), i, {}, (), {"cpu": 1000 * c, "memory": GIB * m},
                      {"cpu": 1000 * min(c, fc), "memory": GIB * min(m, fm) // 2})
             for i, (c, m, fc, fm) in enumerate(amounts)]
    pod = PodInfo("p", {"cpu": cpu, "memory": memory}, PodSpec("p"), 0.0, 0)
    allocatable = {r: np.array([n.allocatable[r] for n in nodes], np.int64) for r in ("cpu", "memory")}
    free = {r: np.array([n.free[r] for n in nodes], np.int64) for r in ("cpu", "memory")}
    shape = ((0, 0), (40, 9), (90, 3))
    plugins = [*(NodeResourcesFit(s) for s in STRATEGIES), BalancedAllocation(), BalancedAllocation({"cpu": 1}),
               NodeResourcesFit(resources={"cpu": 3}), NodeResourcesFit(STRATEGIES[2], shape=shape)]
    for plugin in plugins:
        scores = np.zeros(len(nodes), np.int64) + plugin.score_columns(pod.scoring_request, allocatable, free)
        assert scores.tolist() == [plugin.score(pod, node) for node in nodes]


def test_rotation_and_random_ties_when_exactly_enough_nodes_fit() -> None:
    platform = Platform([Node(i, f"n{i}", cores=2, memory=GIB) for i in range(101)])
    state = ClusterState(platform)
    view = ClusterView(state)
    state.free = state.free - platform.units_of(40)  # 100 nodes left: exactly the 100 to find
    for start in (0, 41, 100):
        for weight in (0, 1):  # weights 0: every node ties, and each tie draws a random number
            fast, reference = policies(view, start, seed=start, fit_weight=weight, balanced_weight=weight)
            place(fast, reference, PodInfo("p", {"cpu": 100}, PodSpec("p"), 0.0, 0), view)
