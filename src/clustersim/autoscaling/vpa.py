"""The Vertical Pod Autoscaler, as kubernetes/autoscaler's vertical-pod-autoscaler implements it.

Three parts, each a pure function of its inputs so tests can check them against the upstream numbers:

- the recommender: per container, a decaying histogram of CPU usage samples (weighted by the CPU request, at
  least 0.1 core) and one of memory peaks (the peak of each pod in each 24 h window); exponential buckets (CPU:
  first bucket 0.01 core, memory: 10 MB, each 5% larger), weights doubling every 24 h so older samples count half
  a day later; target = the 90th percentile, lower bound the 50th, upper bound the 95th, each plus the 15% safety
  margin; the bounds then scaled by the confidence in the history, (1 + 1/days)^1 for the upper bound and
  (1 + 0.001/days)^-2 for the lower (days = min(history span, CPU samples / 1440)); at least 25 millicores and
  250 MiB per pod; then capped by the container policy's minAllowed and maxAllowed;
- the updater: every minute, evicts the pods whose requests fall outside [lower bound, upper bound] (or that
  lived 12 h and are 10% away from the target), never when the deployment wants fewer than `min_replicas`, and
  keeping at least (1 - eviction tolerance) of the configured replicas running;
- the admission controller: a pod created while the mode is not Off gets the target as its requests.

Amounts are integers, millicores and bytes, truncated as upstream's ResourceAmount is.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum

from clustersim.autoscaling.replicas import Deployment, Phase, Replica
from clustersim.autoscaling.serving import ServingModel

DAY = 86400.0
MAX_AMOUNT = 10**14
"""Upstream's MaxResourceAmount: what an infinite bound (no history) becomes."""

SAFETY_MARGIN = 0.15
MIN_SAMPLE_WEIGHT = 0.1
POD_MIN_CPU = 25  # millicores
POD_MIN_MEMORY = 250 * 1024 * 1024  # bytes
MEMORY_AGGREGATION_INTERVAL = DAY
UPDATE_THRESHOLD_LIFETIME = 12 * 3600.0
MIN_CHANGE_PRIORITY = 0.1


class Mode(Enum):
    OFF = "Off"
    INITIAL = "Initial"
    RECREATE = "Recreate"
    AUTO = "Auto"
    IN_PLACE_OR_RECREATE = "InPlaceOrRecreate"


RESOURCES = ("cpu", "memory")


def scale(amount: int, factor: float) -> int:
    """upstream ScaleResource: amount x factor, truncated, capped at MAX_AMOUNT (inf and NaN cap)."""
    value = amount * factor
    if math.isnan(value) or value >= MAX_AMOUNT:
        return MAX_AMOUNT
    return max(0, int(value))


class Histogram:
    """upstream's decaying exponential histogram (histogram.go + decaying_histogram.go)."""

    def __init__(self, max_value: float, first_bucket: float, ratio: float = 1.05, epsilon: float = 1e-4,
                 half_life: float = DAY):
        self.first_bucket, self.ratio, self.epsilon, self.half_life = first_bucket, ratio, epsilon, half_life
        self.nb_buckets = math.ceil(math.log(max_value * (ratio - 1) / first_bucket + 1, ratio)) + 1
        self.weights = [0.0] * self.nb_buckets
        self.total = 0.0
        self.reference = 0.0

    def bucket_start(self, bucket: int) -> float:
        return 0.0 if bucket == 0 else self.first_bucket * (self.ratio ** bucket - 1) / (self.ratio - 1)

    def find_bucket(self, value: float) -> int:
        if value < self.first_bucket:
            return 0
        return min(int(math.log(value * (self.ratio - 1) / self.first_bucket + 1, self.ratio)), self.nb_buckets - 1)

    def _decay(self, time: float) -> float:
        exponent = (time - self.reference) / self.half_life
        if exponent > 100:  # renormalise, as upstream shifts its reference time
            shift = math.floor(exponent) * self.half_life
            factor = 2.0 ** (-(shift / self.half_life))
            self.weights = [w * factor for w in self.weights]
            self.total *= factor
            self.reference += shift
            exponent = (time - self.reference) / self.half_life
        return float(2.0 ** exponent)

    def add(self, value: float, weight: float, time: float) -> None:
        w = weight * self._decay(time)
        self.weights[self.find_bucket(value)] += w
        self.total += w

    def subtract(self, value: float, weight: float, time: float) -> None:
        w = weight * self._decay(time)
        bucket = self.find_bucket(value)
        self.weights[bucket] = max(0.0, self.weights[bucket] - w)
        self.total = max(0.0, self.total - w)

    @property
    def empty(self) -> bool:
        return self.total < self.epsilon

    def percentile(self, p: float) -> float:
        """The end of the first bucket whose cumulative weight reaches p of the total (upstream Percentile)."""
        if self.empty:
            return 0.0
        threshold, partial = p * self.total, 0.0
        used = [b for b, w in enumerate(self.weights) if w >= self.epsilon]
        bucket = used[0]
        for bucket in range(used[0], used[-1] + 1):
            partial += self.weights[bucket]
            if partial >= threshold:
                break
        return self.bucket_start(bucket + 1) if bucket < self.nb_buckets - 1 else self.bucket_start(bucket)


def cpu_histogram() -> Histogram:
    return Histogram(1000.0, 0.01)  # cores


def memory_histogram() -> Histogram:
    return Histogram(1e12, 1e7)  # bytes


@dataclass
class ContainerState:
    """The aggregate of one container's usage over the deployment's pods (upstream AggregateContainerState)."""

    cpu: Histogram = field(default_factory=cpu_histogram)
    memory: Histogram = field(default_factory=memory_histogram)
    cpu_samples: int = 0
    first_sample: float = math.nan
    last_sample: float = math.nan
    _peaks: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    """Per pod: (window start, peak bytes, time of the peak) of its current memory aggregation window."""

    def add_cpu(self, usage_millicores: float, request_millicores: float, time: float) -> None:
        self.cpu.add(usage_millicores / 1000, max(request_millicores / 1000, MIN_SAMPLE_WEIGHT), time)
        self.cpu_samples += 1
        self.first_sample = time if math.isnan(self.first_sample) else min(self.first_sample, time)
        self.last_sample = time if math.isnan(self.last_sample) else max(self.last_sample, time)

    def add_memory(self, pod: str, usage_bytes: float, time: float) -> None:
        """Keep each pod's peak per 24 h window in the histogram (a higher peak replaces the window's last)."""
        start, peak, when = self._peaks.get(pod, (time, -1.0, time))
        if time >= start + MEMORY_AGGREGATION_INTERVAL:
            start, peak = time, -1.0
        if usage_bytes > peak:
            if peak >= 0:
                self.memory.subtract(peak, 1.0, when)
            self.memory.add(usage_bytes, 1.0, time)
            self._peaks[pod] = (start, usage_bytes, time)

    def confidence(self, interval: float = DAY) -> float:
        """min(history span, CPU samples at one a minute), in units of `interval` (upstream getConfidence)."""
        if self.cpu_samples == 0:
            return 0.0
        span = (self.last_sample - self.first_sample) / interval
        return min(span, self.cpu_samples / (interval / 60.0))


def confidence_multiplier(amount: int, multiplier: float, exponent: float, confidence: float) -> int:
    """amount x (1 + multiplier / confidence)^exponent; no history gives MAX_AMOUNT or 0."""
    factor = math.inf if confidence == 0 else (1.0 + multiplier / confidence) ** exponent
    if math.isinf(factor):
        return MAX_AMOUNT if exponent > 0 and amount > 0 else 0
    return scale(amount, factor)


@dataclass(frozen=True)
class Resources:
    cpu: int
    """Millicores."""
    memory: int
    """Bytes."""

    def get(self, resource: str) -> int:
        return self.cpu if resource == "cpu" else self.memory


@dataclass(frozen=True)
class Recommendation:
    target: Resources
    lower: Resources
    upper: Resources


@dataclass(frozen=True)
class ContainerPolicy:
    """A container's resource policy: `mode` Auto or Off, bounds on what may be recommended, which resources."""

    container: str = "*"
    mode: str = "Auto"
    min_allowed: Resources | None = None
    max_allowed: Resources | None = None
    controlled: tuple[str, ...] = RESOURCES


def recommend(state: ContainerState, containers_per_pod: int = 1, *, cpu_interval: float = DAY,
              memory_interval: float = DAY) -> Recommendation:
    """upstream CreatePodResourceRecommender: percentile, then margin, then confidence (bounds), then minimum."""
    min_cpu = scale(POD_MIN_CPU, 1 / containers_per_pod)
    min_memory = scale(POD_MIN_MEMORY, 1 / containers_per_pod)
    cpu_conf, memory_conf = state.confidence(cpu_interval), state.confidence(memory_interval)

    def cpu(p: float) -> int:
        return scale(int(min(state.cpu.percentile(p) * 1000, MAX_AMOUNT)), 1 + SAFETY_MARGIN)

    def memory(p: float) -> int:
        return scale(int(min(state.memory.percentile(p), MAX_AMOUNT)), 1 + SAFETY_MARGIN)

    target = Resources(max(cpu(0.9), min_cpu), max(memory(0.9), min_memory))
    lower = Resources(max(confidence_multiplier(cpu(0.5), 0.001, -2.0, cpu_conf), min_cpu),
                      max(confidence_multiplier(memory(0.5), 0.001, -2.0, memory_conf), min_memory))
    upper = Resources(max(confidence_multiplier(cpu(0.95), 1.0, 1.0, cpu_conf), min_cpu),
                      max(confidence_multiplier(memory(0.95), 1.0, 1.0, memory_conf), min_memory))
    return Recommendation(target, lower, upper)


def apply_policy(recommendation: Recommendation, policy: ContainerPolicy, current: Resources) -> Recommendation:
    """Cap target and bounds to [minAllowed, maxAllowed]; resources the policy does not control keep the pod's."""

    def cap(values: Resources) -> Resources:
        out = {}
        for resource in RESOURCES:
            if resource not in policy.controlled:
                out[resource] = current.get(resource)
                continue
            value = values.get(resource)
            if policy.min_allowed is not None:
                value = max(value, policy.min_allowed.get(resource))
            if policy.max_allowed is not None and policy.max_allowed.get(resource) > 0:
                value = min(value, policy.max_allowed.get(resource))
            out[resource] = value
        return Resources(out["cpu"], out["memory"])

    return Recommendation(cap(recommendation.target), cap(recommendation.lower), cap(recommendation.upper))


@dataclass(frozen=True)
class PodRequests:
    """A pod as the updater sees it: its requests, when it started running, whether it runs now."""

    name: str
    requests: Resources
    started: float | None
    running: bool


def outside_bounds(requests: Resources, recommendation: Recommendation, controlled: tuple[str, ...]) -> bool:
    return any(not recommendation.lower.get(r) <= requests.get(r) <= recommendation.upper.get(r) for r in controlled)


def resource_diff(requests: Resources, target: Resources, controlled: tuple[str, ...]) -> float:
    """upstream's update priority: sum over resources of |target - request| / request."""
    total = 0.0
    for resource in controlled:
        request = requests.get(resource)
        if request > 0:
            total += abs(target.get(resource) - request) / request
    return total


def update_candidates(pods: list[PodRequests], recommendation: Recommendation, controlled: tuple[str, ...],
                      now: float) -> list[PodRequests]:
    """Pods to update, most urgent first: outside the bounds, or running 12 h and 10% away from the target."""
    ranked = []
    for pod in pods:
        diff = resource_diff(pod.requests, recommendation.target, controlled)
        outside = outside_bounds(pod.requests, recommendation, controlled)
        old = pod.started is not None and now - pod.started > UPDATE_THRESHOLD_LIFETIME
        if outside or (old and diff >= MIN_CHANGE_PRIORITY):
            ranked.append((not outside, -diff, pod.name, pod))
    return [pod for *_, pod in sorted(ranked, key=lambda t: t[:3])]


@dataclass
class EvictionRestriction:
    """upstream PodsEvictionRestriction for one deployment, fresh at each updater loop."""

    configured: int
    running: int
    min_replicas: int = 2
    tolerance: float = 0.5
    evicted: int = 0

    def can_evict(self, pod: PodRequests) -> bool:
        if self.configured < self.min_replicas:
            return False
        if not pod.running:
            return True
        tolerance = int(self.configured * self.tolerance)
        if self.running - self.evicted > self.configured - tolerance:
            return True
        return self.running == self.configured and tolerance == 0 and self.evicted == 0

    def evict(self, pod: PodRequests) -> bool:
        if not self.can_evict(pod):
            return False
        if pod.running:
            self.evicted += 1
        return True


@dataclass(frozen=True)
class VpaSpec:
    mode: Mode = Mode.AUTO
    policy: ContainerPolicy = ContainerPolicy()
    min_replicas: int = 2
    eviction_tolerance: float = 0.5
    recommender_interval: float = 60.0
    updater_interval: float = 60.0
    memory_base: int = 0
    """Bytes a replica's container uses at rest (the model of memory usage: base + per request/s)."""
    memory_per_rps: int = 0
    """Bytes more per request/s the replica serves."""


class VerticalPodAutoscaler:
    """The VPA of one deployment (one container): recommender, updater and admission, driven by the controller."""

    def __init__(self, spec: VpaSpec, deployment: Deployment):
        self.spec = spec
        self.deployment = deployment
        self.state = ContainerState()
        self.recommendation: Recommendation | None = None
        self._last: dict[str, tuple[float, float, float]] = {}
        self.evictions = 0
        self.resizes = 0
        self._counted = (0, 0)

    @property
    def active(self) -> bool:
        return self.spec.mode is not Mode.OFF and self.spec.policy.mode != "Off"

    def _current(self, replica: Replica) -> Resources:
        return Resources(replica.cpu_request, replica.memory_request)

    def capped(self, current: Resources) -> Recommendation | None:
        if self.recommendation is None:
            return None
        return apply_policy(self.recommendation, self.spec.policy, current)

    def sample(self, now: float, replicas: Iterable[Replica], serving: ServingModel) -> None:
        """Each running replica's CPU use and memory over the last interval (metrics-server's view), then the
        recommendation from the whole history."""
        for replica in replicas:
            if replica.running_since is None or replica.phase in (Phase.GONE, Phase.TERMINATING):
                continue
            busy = serving.busy_seconds(replica.name) if replica.served else 0.0
            routed = serving.routed(replica.name) if replica.served else 0.0
            before = self._last.get(replica.name)
            self._last[replica.name] = (now, busy, routed)
            if before is None:
                continue
            since, busy_before, routed_before = before
            window = now - since
            if window <= 0:
                continue
            cpu = self.deployment.capacity * (busy - busy_before) / window
            if replica.ready_since is None or replica.ready_since > since:
                cpu += self.deployment.startup_cpu * min(window, now - replica.running_since) / window
            self.state.add_cpu(cpu, replica.cpu_request, now)
            memory = self.spec.memory_base + self.spec.memory_per_rps * (routed - routed_before) / window
            self.state.add_memory(replica.name, memory, now)
        if self.state.cpu_samples:
            self.recommendation = recommend(self.state)

    def admit(self) -> tuple[int | None, int | None]:
        """The admission controller: a new pod gets the capped target (template requests before any)."""
        template = Resources(self.deployment.cpu_request, self.deployment.memory_request)
        capped = self.capped(template)
        if capped is None or not self.active:
            return None, None
        return capped.target.cpu, capped.target.memory

    def update(self, now: float, replicas: list[Replica], configured: int,
               fits: Callable[[Replica, int, int], bool]) -> list[tuple[Replica, bool]]:
        """The updater's choice: (replica, in place?) for each pod to update now; in-place resizes are done
        here, one after the other, so each sees the room the previous ones took."""
        if self.recommendation is None or not self.active or self.spec.mode is Mode.INITIAL:
            return []
        by_name = {r.name: r for r in replicas}
        pods = [PodRequests(r.name, self._current(r), r.running_since,
                            r.phase in (Phase.UNREADY, Phase.READY)) for r in replicas]
        running = sum(p.running for p in pods)
        restriction = EvictionRestriction(configured, running, self.spec.min_replicas, self.spec.eviction_tolerance)
        chosen = []
        for pod in update_candidates(pods, self.recommendation, self.spec.policy.controlled, now):
            replica = by_name[pod.name]
            target = self.capped(pod.requests)
            assert target is not None
            if self.spec.mode is Mode.IN_PLACE_OR_RECREATE and pod.running and fits(
                    replica, target.target.cpu, target.target.memory):
                self.resize(replica)
                chosen.append((replica, True))
            elif restriction.evict(pod):
                self.evictions += 1
                chosen.append((replica, False))
        return chosen

    def resize(self, replica: Replica) -> None:
        """An in-place resize: the running pod's requests become the target (no restart)."""
        capped = self.capped(self._current(replica))
        assert capped is not None
        replica.cpu_request, replica.memory_request = capped.target.cpu, capped.target.memory
        self.resizes += 1

    def columns(self, replicas: Iterable[Replica]) -> dict[str, float]:
        """The time series' VPA columns: mean requests, the recommendation, evictions and resizes since last row."""
        alive = [r for r in replicas if r.phase not in (Phase.GONE, Phase.TERMINATING)]
        mib = 1024 * 1024
        out = {
            "cpu_request_m": sum(r.cpu_request for r in alive) / len(alive) if alive else math.nan,
            "memory_request_mi": sum(r.memory_request for r in alive) / len(alive) / mib if alive else math.nan,
            "vpa_evictions": float(self.evictions - self._counted[0]),
            "vpa_resizes": float(self.resizes - self._counted[1]),
        }
        self._counted = (self.evictions, self.resizes)
        capped = self.capped(Resources(self.deployment.cpu_request, self.deployment.memory_request))
        if capped is not None:
            for name, values in (("target", capped.target), ("lower", capped.lower), ("upper", capped.upper)):
                out[f"cpu_{name}_m"] = float(min(values.cpu, 1e9))
                out[f"memory_{name}_mi"] = float(min(values.memory / mib, 1e9))
        return out
