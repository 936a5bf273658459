"""Autoscaling: a deployment's replicas as pods in the cluster, request traffic, metrics and the Kubernetes HPA.

See docs/autoscaling.md. The public entry points: load a scenario, run it.
"""

from clustersim.autoscaling.hpa import HorizontalPodAutoscaler, HpaSpec, MetricKind
from clustersim.autoscaling.run import AutoscaleResult, run_scenario
from clustersim.autoscaling.scenario import Scenario, load_scenario, parse_scenario

__all__ = [
    "AutoscaleResult",
    "HorizontalPodAutoscaler",
    "HpaSpec",
    "MetricKind",
    "Scenario",
    "load_scenario",
    "parse_scenario",
    "run_scenario",
]
