"""Kubernetes in clustersim: pods and nodes, workload and platform readers, and the API facade.

The built-in kube-scheduler-like policy is `clustersim.scheduling.policies.kube` (`create_policy("kube")`).
"""

from clustersim.kubernetes.batkube import batkube_platform, batkube_pods
from clustersim.kubernetes.facade import ApiError, KubeFacade
from clustersim.kubernetes.pods import PodSpec, Requirement, Taint, Toleration, make_pod, pod_spec
from clustersim.kubernetes.session import KubeSession
from clustersim.kubernetes.sources import PodWorkload, load_kube_platform, load_pod_workload
from clustersim.kubernetes.timecontrol import DeadlockError, TimeControl

__all__ = ["ApiError", "DeadlockError", "KubeFacade", "KubeSession", "PodSpec", "PodWorkload", "Requirement",
           "Taint", "TimeControl", "Toleration", "batkube_platform", "batkube_pods", "load_kube_platform",
           "load_pod_workload", "make_pod", "pod_spec"]
