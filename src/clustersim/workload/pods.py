"""The Kubernetes side of a pod that the core does not interpret: scheduler name, priority, placement rules.

The core sees a pod as a Job with a `request`; everything a Kubernetes scheduler also needs lives in a `PodSpec`
kept in `Job.extra["pod"]`, so policies and the API facade read one typed structure instead of raw dicts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay

DEFAULT_SCHEDULER = "default-scheduler"
POD_KEY = "pod"
"""The key of `Job.extra` that holds a pod's `PodSpec`."""


@dataclass(frozen=True, slots=True)
class Requirement:
    """One `matchExpressions` entry of a node selector term: key, operator (In, NotIn, Exists...), values."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        return _OPERATORS[self.operator](labels.get(self.key), self.values)


def _compare(value: str | None, values: tuple[str, ...], sign: int) -> bool:
    """Gt/Lt: the label is an integer greater (sign 1) or less (sign -1) than the one value given."""
    if value is None or not values:
        return False
    try:
        return (int(value) - int(values[0])) * sign > 0
    except ValueError:
        return False


_OPERATORS: dict[str, Callable[[str | None, tuple[str, ...]], bool]] = {
    "In": lambda value, values: value is not None and value in values,
    "NotIn": lambda value, values: value is None or value not in values,
    "Exists": lambda value, values: value is not None,
    "DoesNotExist": lambda value, values: value is None,
    "Gt": lambda value, values: _compare(value, values, 1),
    "Lt": lambda value, values: _compare(value, values, -1),
}
OPERATORS = tuple(_OPERATORS)


@dataclass(frozen=True, slots=True)
class Toleration:
    """A pod's toleration of taints: `operator` Equal (key and value) or Exists (key only, or any key)."""

    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.value == taint.value


@dataclass(frozen=True, slots=True)
class Taint:
    """A node's taint: pods that do not tolerate a NoSchedule or NoExecute taint are not placed there."""

    key: str
    value: str = ""
    effect: str = "NoSchedule"


@dataclass(frozen=True, slots=True)
class PodSpec:
    """What a Kubernetes scheduler reads of a pod beyond its requests.

    `required_terms` are the node affinity's requiredDuringScheduling terms (ORed; each term's requirements
    ANDed). `node_name` set means the pod asks for that node (spec.nodeName), bypassing scoring.
    """

    name: str
    namespace: str = "default"
    scheduler_name: str = DEFAULT_SCHEDULER
    priority: int = 0
    node_selector: Mapping[str, str] = field(default_factory=dict)
    required_terms: tuple[tuple[Requirement, ...], ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    limits: Mapping[str, int] = field(default_factory=dict)
    node_name: str = ""


def pod_spec(job: Job) -> PodSpec:
    """The pod spec of a job: the one a Kubernetes reader attached, else one from Batkube's profile fields."""
    spec = job.extra.get(POD_KEY)
    if isinstance(spec, PodSpec):
        return spec
    return pod_spec_from_extra(job)


def pod_spec_from_extra(job: Job) -> PodSpec:
    """A pod spec from a Batsim job: its id as name, Batkube's `scheduler` field as schedulerName."""
    scheduler = job.extra.get("scheduler")
    name = job.id if job.workload == "w0" else f"{job.workload}-{job.id}"
    return PodSpec(name=dns_name(name), scheduler_name=str(scheduler) if scheduler else DEFAULT_SCHEDULER)


def dns_name(text: str) -> str:
    """A valid object name (lowercase alphanumerics, '-' and '.') made from any job id."""
    cleaned = "".join(c if c.isalnum() or c in "-." else "-" for c in text.lower()).strip("-.")
    return cleaned or "pod"


def make_pod(
    spec: PodSpec,
    request: Mapping[str, int],
    duration: float,
    submit_time: float = 0.0,
    *,
    job_id: str | None = None,
    workload: str = "w0",
    extra: Mapping[str, object] | None = None,
) -> Job:
    """A pod as the core sees it: one unit, its requests, a delay profile of its run time."""
    return Job(
        job_id or spec.name,
        submit_time,
        1,
        Delay(duration),
        workload=workload,
        profile_name=f"delay_{duration:g}",
        extra={**(extra or {}), POD_KEY: spec},
        request=dict(request),
    )
