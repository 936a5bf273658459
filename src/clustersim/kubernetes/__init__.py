"""Kubernetes in clustersim: the API facade, its session, and the workload and platform readers of manifests.

The pod and node model is below, in `clustersim.workload.pods` and `clustersim.platform.kube_labels`; the
built-in kube-scheduler-like policy is `clustersim.policies.kube` (`create_policy("kube")`).
"""

from clustersim.kubernetes.batkube import batkube_platform, batkube_pods
from clustersim.kubernetes.facade import ApiError, KubeFacade
from clustersim.kubernetes.session import KubeSession
from clustersim.kubernetes.sources import PodWorkload, load_kube_platform, load_pod_workload
from clustersim.kubernetes.timecontrol import DeadlockError, TimeControl
from clustersim.workload.pods import PodSpec, Requirement, Taint, Toleration, make_pod, pod_spec

__all__ = ["ApiError", "DeadlockError", "KubeFacade", "KubeSession", "PodSpec", "PodWorkload", "Requirement",
           "Taint", "TimeControl", "Toleration", "batkube_platform", "batkube_pods", "load_kube_platform",
           "load_pod_workload", "make_pod", "pod_spec"]
