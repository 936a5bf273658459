"""The Horizontal Pod Autoscaler's algorithm, as Kubernetes documents and implements it (autoscaling/v2).

Pure functions and one small stateful controller, independent of any simulation, so each rule is testable against
the worked examples of the Kubernetes documentation:

- `desired = ceil(current * current_metric / target)`, skipped within the tolerance (0.1);
- pods being deleted or failed are ignored; Pending pods and (for CPU) pods not yet ready are set aside, as are
  pods with no metric; on a scale-up, set-aside pods count as using 0% of the target, missing ones on a scale-down
  as using 100%; if that reverses the direction or lands within the tolerance, nothing changes
  (`replica_calculator.go`: `groupPods`, `calcPlainMetricReplicas`);
- `behavior`: stabilisation windows over past recommendations, then `Pods`/`Percent` rate limits per period
  chosen by `selectPolicy`, then `minReplicas`/`maxReplicas` (`horizontal.go`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum


class MetricKind(Enum):
    """What the HPA measures: a resource utilisation, or a per-pod value (a `Pods` metric)."""

    CPU = "cpu"
    REQUESTS_PER_SECOND = "requests_per_second"


class SelectPolicy(Enum):
    MAX = "Max"
    MIN = "Min"
    DISABLED = "Disabled"


@dataclass(frozen=True, slots=True)
class ScalingPolicy:
    """`type: Pods|Percent`, `value`, `periodSeconds`: how much may change within a sliding period."""

    kind: str
    value: int
    period: float


@dataclass(frozen=True, slots=True)
class ScalingRules:
    """One direction of `behavior`: stabilisation window, policies, and how to choose among them."""

    stabilization_window: float
    policies: tuple[ScalingPolicy, ...]
    select: SelectPolicy = SelectPolicy.MAX


DEFAULT_SCALE_UP = ScalingRules(0.0, (ScalingPolicy("Percent", 100, 15.0), ScalingPolicy("Pods", 4, 15.0)))
"""Kubernetes' default: double or add 4 pods every 15 s, whichever is more; no stabilisation."""
DEFAULT_SCALE_DOWN = ScalingRules(300.0, (ScalingPolicy("Percent", 100, 15.0),))
"""Kubernetes' default: down to the highest recommendation of the last 5 minutes, any amount at once."""


@dataclass(frozen=True, slots=True)
class HpaSpec:
    """An HPA's settings; `target` is a utilisation in percent (CPU) or a per-pod average value (Pods metric)."""

    min_replicas: int = 1
    max_replicas: int = 10
    metric: MetricKind = MetricKind.CPU
    target: float = 80.0
    tolerance: float = 0.1
    sync_period: float = 15.0
    cpu_initialization_period: float = 300.0
    initial_readiness_delay: float = 30.0
    scale_up: ScalingRules = DEFAULT_SCALE_UP
    scale_down: ScalingRules = DEFAULT_SCALE_DOWN


@dataclass(frozen=True, slots=True)
class PodStatus:
    """What the HPA reads of a pod: phase, readiness condition and its last transition, start time, requests.

    `phase` is Pending (unscheduled or containers starting), Running or Failed. `ready_since` is the last
    transition time of the Ready condition (None: no condition yet). `start_time` is when the kubelet took the
    pod (None while unscheduled).
    """

    name: str
    phase: str
    ready: bool
    ready_since: float | None
    start_time: float | None
    cpu_request: int
    deleting: bool = False


@dataclass(frozen=True, slots=True)
class Sample:
    """One pod metric: a value (cpu millicores, or the metric's value), when it was taken and over what window."""

    value: float
    timestamp: float
    window: float


@dataclass(frozen=True, slots=True)
class Proposal:
    """The replica calculator's answer: a replica count and the metric value it saw (utilisation % for CPU)."""

    replicas: int
    metric: float


@dataclass(frozen=True, slots=True)
class PodGroups:
    ready_count: int
    unready: frozenset[str]
    missing: frozenset[str]
    ignored: frozenset[str]


def group_pods(
    pods: Sequence[PodStatus], metrics: Mapping[str, Sample], spec: HpaSpec, now: float
) -> PodGroups:
    """Sort pods as `groupPods` does: ignored (deleting, failed), unready (Pending, or CPU not yet trustworthy),
    missing (no metric), ready (counted)."""
    ready = 0
    unready: set[str] = set()
    missing: set[str] = set()
    ignored: set[str] = set()
    cpu = spec.metric is MetricKind.CPU
    for pod in pods:
        if pod.deleting or pod.phase == "Failed":
            ignored.add(pod.name)
            continue
        if pod.phase == "Pending":
            unready.add(pod.name)
            continue
        sample = metrics.get(pod.name)
        if sample is None:
            missing.add(pod.name)
            continue
        if cpu:
            if pod.ready_since is None or pod.start_time is None:
                not_ready = True
            elif pod.start_time + spec.cpu_initialization_period > now:
                # Within the initialisation period: unready, or no full metric window since it became ready.
                not_ready = not pod.ready or sample.timestamp < pod.ready_since + sample.window
            else:
                # Ignore the metric if the pod is unready and has never been ready.
                not_ready = not pod.ready and pod.start_time + spec.initial_readiness_delay > pod.ready_since
            if not_ready:
                unready.add(pod.name)
                continue
        ready += 1
    return PodGroups(ready, frozenset(unready), frozenset(missing), frozenset(ignored))


def _ratio(values: Mapping[str, float], requests: Mapping[str, int], spec: HpaSpec) -> tuple[float, float]:
    """Usage ratio and metric: for CPU the integer utilisation of summed usage over summed requests."""
    if spec.metric is MetricKind.CPU:
        total = sum(values.values())
        requested = sum(requests[name] for name in values)
        if requested <= 0:
            raise ValueError("no pod with a cpu request has metrics")
        utilization = math.floor(total * 100 / requested)
        return utilization / spec.target, float(utilization)
    usage = sum(values.values()) / len(values)
    return usage / spec.target, usage


def recommend(
    current: int, pods: Sequence[PodStatus], metrics: Mapping[str, Sample], spec: HpaSpec, now: float
) -> Proposal | None:
    """The replica count the metrics ask for (before behavior and limits); None when no pod has a usable metric."""
    groups = group_pods(pods, metrics, spec, now)
    known = {pod.name for pod in pods}
    values = {
        name: s.value for name, s in metrics.items()
        if name in known and name not in groups.unready and name not in groups.ignored
    }
    if not values:
        return None
    requests = {pod.name: pod.cpu_request for pod in pods}
    ratio, metric = _ratio(values, requests, spec)
    scale_up_with_unready = bool(groups.unready) and ratio > 1.0
    if not scale_up_with_unready and not groups.missing:
        if abs(1.0 - ratio) <= spec.tolerance:
            return Proposal(current, metric)
        return Proposal(math.ceil(ratio * groups.ready_count), metric)
    if groups.missing:
        if ratio < 1.0:  # scale-down: missing pods count as using the target (at least 100% of their request)
            for name in groups.missing:
                if spec.metric is MetricKind.CPU:
                    values[name] = requests[name] * max(100.0, spec.target) / 100.0
                else:
                    values[name] = spec.target
        elif ratio > 1.0:  # scale-up: missing pods count as using nothing
            for name in groups.missing:
                values[name] = 0.0
    if scale_up_with_unready:
        for name in groups.unready:
            values[name] = 0.0
    new_ratio, _ = _ratio(values, requests, spec)
    if (
        abs(1.0 - new_ratio) <= spec.tolerance
        or (ratio < 1.0 < new_ratio)
        or (ratio > 1.0 > new_ratio)
    ):
        return Proposal(current, metric)
    replicas = math.ceil(new_ratio * len(values))
    if (new_ratio < 1.0 and replicas > current) or (new_ratio > 1.0 and replicas < current):
        return Proposal(current, metric)
    return Proposal(replicas, metric)


@dataclass(slots=True)
class _Event:
    time: float
    change: int


def _change_in_period(events: Sequence[_Event], period: float, now: float) -> int:
    cutoff = now - period
    return sum(e.change for e in events if e.time > cutoff)


def scale_up_limit(current: int, events: Sequence[_Event], rules: ScalingRules, now: float) -> int:
    """`calculateScaleUpLimitWithScalingRules`: the most replicas the policies allow now."""
    if rules.select is SelectPolicy.DISABLED:
        return current
    proposals = []
    for policy in rules.policies:
        start = current - _change_in_period(events, policy.period, now)
        if policy.kind == "Pods":
            proposals.append(start + policy.value)
        else:
            proposals.append(math.ceil(start * (1 + policy.value / 100)))
    return max(proposals) if rules.select is SelectPolicy.MAX else min(proposals)


def scale_down_limit(current: int, events: Sequence[_Event], rules: ScalingRules, now: float) -> int:
    """`calculateScaleDownLimitWithBehaviors`: the fewest replicas the policies allow now (percent truncates)."""
    if rules.select is SelectPolicy.DISABLED:
        return current
    proposals = []
    for policy in rules.policies:
        start = current + _change_in_period(events, policy.period, now)
        if policy.kind == "Pods":
            proposals.append(start - policy.value)
        else:
            proposals.append(int(start * (1 - policy.value / 100)))
    return min(proposals) if rules.select is SelectPolicy.MAX else max(proposals)


@dataclass(frozen=True, slots=True)
class SyncResult:
    """One sync: the desired count (after behavior and limits), the raw proposal and the metric seen."""

    desired: int
    proposal: int | None
    metric: float | None
    reason: str


@dataclass
class HorizontalPodAutoscaler:
    """The controller's per-HPA memory: past recommendations (stabilisation) and scale events (rate limits)."""

    spec: HpaSpec
    _recommendations: list[tuple[float, int]] = field(default_factory=list)
    _up_events: list[_Event] = field(default_factory=list)
    _down_events: list[_Event] = field(default_factory=list)

    def sync(
        self, now: float, current: int, pods: Sequence[PodStatus], metrics: Mapping[str, Sample]
    ) -> SyncResult:
        """One reconcile: the replica count the deployment should have now."""
        spec = self.spec
        if current == 0 and spec.min_replicas != 0:
            return SyncResult(0, None, None, "scaling disabled (0 replicas)")
        if current > spec.max_replicas:
            desired, proposal, metric, reason = spec.max_replicas, None, None, "above maxReplicas"
        elif current < spec.min_replicas:
            desired, proposal, metric, reason = spec.min_replicas, None, None, "below minReplicas"
        else:
            found = recommend(current, pods, metrics, spec, now)
            if found is None:
                return SyncResult(current, None, None, "no metrics")
            proposal, metric = found.replicas, found.metric
            desired, reason = self.normalize(now, current, found.replicas)
        if desired != current:
            self._store_event(now, current, desired)
        return SyncResult(desired, proposal, metric, reason)

    def normalize(self, now: float, current: int, proposal: int) -> tuple[int, str]:
        """`normalizeDesiredReplicasWithBehaviors`: stabilise, then apply the rate limits and min/max."""
        spec = self.spec
        if not self._recommendations and spec.scale_down.stabilization_window > 0:
            self._recommendations.append((now, current))  # maybeInitScaleDownStabilizationWindow
        stabilized = self._stabilize(now, current, proposal)
        reason = "stabilized" if stabilized != proposal else "recommended"
        if stabilized > current:
            limit = max(scale_up_limit(current, self._up_events, spec.scale_up, now), current)
            maximum = min(limit, spec.max_replicas)
            if stabilized > maximum:
                return maximum, ("ScaleUpLimit" if limit < spec.max_replicas else "TooManyReplicas")
            return stabilized, reason
        if stabilized < current:
            limit = min(scale_down_limit(current, self._down_events, spec.scale_down, now), current)
            minimum = max(limit, spec.min_replicas)
            if stabilized < minimum:
                return minimum, ("ScaleDownLimit" if limit > spec.min_replicas else "TooFewReplicas")
            return stabilized, reason
        return min(max(stabilized, spec.min_replicas), spec.max_replicas), reason

    def _stabilize(self, now: float, current: int, proposal: int) -> int:
        """Up: the lowest recommendation of the up window; down: the highest of the down window."""
        up_cutoff = now - self.spec.scale_up.stabilization_window
        down_cutoff = now - self.spec.scale_down.stabilization_window
        oldest = min(up_cutoff, down_cutoff)
        up = down = proposal
        kept = []
        for time, replicas in self._recommendations:
            if time > up_cutoff:
                up = min(up, replicas)
            if time > down_cutoff:
                down = max(down, replicas)
            if time > oldest:
                kept.append((time, replicas))
        kept.append((now, proposal))
        self._recommendations = kept
        return min(max(current, up), down)

    def _store_event(self, now: float, before: int, after: int) -> None:
        if after > before:
            longest = max((p.period for p in self.spec.scale_up.policies), default=0.0)
            self._up_events = [e for e in self._up_events if e.time > now - longest]
            self._up_events.append(_Event(now, after - before))
        else:
            longest = max((p.period for p in self.spec.scale_down.policies), default=0.0)
            self._down_events = [e for e in self._down_events if e.time > now - longest]
            self._down_events.append(_Event(now, before - after))
