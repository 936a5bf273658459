"""The metrics pipeline: replica CPU usage and requests/s, sampled on a tick and delivered with a lag.

As metrics-server does (and Skenario models), a sample is the average over the last tick window (default 10 s),
timestamped at the end of that window; the HPA sees it only `lag` seconds later (default 4 s). A replica has a
sample once it has been Running for a whole window; until then its metric is missing.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from clustersim.autoscaling.hpa import MetricKind, Sample
from clustersim.autoscaling.replicas import Deployment, Phase, Replica
from clustersim.autoscaling.serving import ServingModel


@dataclass(frozen=True, slots=True)
class MetricsConfig:
    tick: float = 10.0
    lag: float = 4.0


class MetricsPipeline:
    """Scrapes replicas each tick; hands the HPA the latest delivered sample of each pod."""

    def __init__(self, config: MetricsConfig, deployment: Deployment, kind: MetricKind):
        self.config = config
        self._deployment = deployment
        self._kind = kind
        self._last: dict[str, tuple[float, float]] = {}
        self._in_transit: deque[tuple[float, dict[str, Sample]]] = deque()
        self._latest: dict[str, Sample] = {}

    def scrape(self, now: float, replicas: Iterable[Replica], serving: ServingModel) -> None:
        """Take one sample per running replica over the window ending now; it arrives at now + lag."""
        tick = self.config.tick
        start = now - tick
        samples: dict[str, Sample] = {}
        for replica in replicas:
            running = replica.running_since
            if running is None or replica.phase is Phase.GONE:
                continue
            busy, routed = serving.busy_seconds(replica.name), serving.routed(replica.name)
            previous = self._last.get(replica.name)
            self._last[replica.name] = (busy, routed)
            if running > start:
                continue  # no full window yet
            busy_before, routed_before = previous or (0.0, 0.0)
            if self._kind is MetricKind.CPU:
                ready = replica.ready_since if replica.ready_since is not None else now
                warming = max(0.0, min(ready, now) - max(running, start))
                value = (self._deployment.capacity * (busy - busy_before)
                         + self._deployment.startup_cpu * warming) / tick
            else:
                value = (routed - routed_before) / tick
            samples[replica.name] = Sample(value, now, tick)
        self._in_transit.append((now + self.config.lag, samples))

    def deliver(self, now: float) -> None:
        """Samples whose lag has passed become what the HPA sees."""
        while self._in_transit and self._in_transit[0][0] <= now:
            _, samples = self._in_transit.popleft()
            self._latest.update(samples)

    def forget(self, name: str) -> None:
        self._last.pop(name, None)
        self._latest.pop(name, None)

    @property
    def latest(self) -> Mapping[str, Sample]:
        return self._latest
