"""The built-in `kube` policy: kube-scheduler's framework (queue sort, filters, scores) as small plugins."""

from clustersim.policies.kube.policy import KubePolicy, nodes_to_find

__all__ = ["KubePolicy", "nodes_to_find"]
