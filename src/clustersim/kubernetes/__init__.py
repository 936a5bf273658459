"""Kubernetes in clustersim: pods and nodes, workload and platform readers, and the API facade.

The built-in kube-scheduler-like policy is `clustersim.scheduling.policies.kube` (`create_policy("kube")`).
"""

from typing import Any

from clustersim.kubernetes.batkube import batkube_platform, batkube_pods
from clustersim.kubernetes.pods import PodSpec, Requirement, Taint, Toleration, make_pod, pod_spec
from clustersim.kubernetes.sources import PodWorkload, load_kube_platform, load_pod_workload

_LAZY = {
    "ApiError": "clustersim.kubernetes.facade",
    "KubeFacade": "clustersim.kubernetes.facade",
    "KubeSession": "clustersim.kubernetes.session",
    "DeadlockError": "clustersim.kubernetes.timecontrol",
    "TimeControl": "clustersim.kubernetes.timecontrol",
}
"""The facade imports the kube policy, which imports this package: those names load on first use."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)

__all__ = ["ApiError", "DeadlockError", "KubeFacade", "KubeSession", "PodSpec", "PodWorkload", "Requirement",
           "Taint", "TimeControl", "Toleration", "batkube_platform", "batkube_pods", "load_kube_platform",
           "load_pod_workload", "make_pod", "pod_spec"]
