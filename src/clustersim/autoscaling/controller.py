"""The autoscaling decision process: a deployment controller, its HPA and its traffic, on top of any scheduler.

It wraps the scheduling policy that places pods (pluggable: `kube`, first-fit, any policy placing pending pods)
and adds the deployment's replicas as pods: it submits them, kills them when scaled down, and learns where the
policy placed them from the StartJob decisions passing through.

Time: requests far outnumber job events, so the serving model runs its own event loop inside this process. The
core wakes the process only at control times (metrics ticks, deliveries, HPA syncs, replica transitions, output
rows) through CallMeLater; at each wake-up the serving model is advanced to that instant first. Nothing of the
traffic enters the core's event queue, so the core's cost is independent of the request rate.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Iterator, Sequence
from enum import IntEnum
from itertools import count

from clustersim.autoscaling.hpa import HorizontalPodAutoscaler, MetricKind
from clustersim.autoscaling.metrics import MetricsConfig, MetricsPipeline
from clustersim.autoscaling.replicas import Deployment, Phase, Replica, deletion_order, replica_job
from clustersim.autoscaling.serving import ServingModel
from clustersim.autoscaling.timeseries import Row, TimeSeries
from clustersim.autoscaling.traffic import TrafficSource
from clustersim.autoscaling.vpa import VerticalPodAutoscaler, VpaSpec
from clustersim.core.decisions import CallMeLater, Decision, KillJob, RejectJob, StartJob, SubmitJob
from clustersim.core.events import Event, JobCompleted
from clustersim.core.interface import DecisionProcess
from clustersim.core.state import ClusterView


class Control(IntEnum):
    """Control events; at equal times they apply in this order."""

    RUNNING = 0
    READY = 1
    KILL = 2
    SCRAPE = 3
    DELIVER = 4
    SYNC = 5
    VPA_SAMPLE = 6
    VPA_UPDATE = 7
    OUTPUT = 8
    END = 9


class AutoscalingProcess:
    """A deployment scaled by an HPA (or fixed without one), serving traffic, inside the cluster simulation."""

    def __init__(
        self,
        deployment: Deployment,
        serving: ServingModel,
        scheduler: DecisionProcess,
        *,
        horizon: float,
        hpa: HorizontalPodAutoscaler | None = None,
        metrics: MetricsConfig | None = None,
        traffic: TrafficSource | None = None,
        output: TimeSeries | None = None,
        output_interval: float = 10.0,
        vpa: VpaSpec | None = None,
    ):
        self.deployment = deployment
        self.serving = serving
        self.scheduler = scheduler
        self.hpa = hpa
        self.horizon = horizon
        self.metrics = MetricsPipeline(
            metrics or MetricsConfig(), deployment, hpa.spec.metric if hpa else MetricKind.CPU
        )
        self.traffic = traffic
        self.output = output if output is not None else TimeSeries()
        self.output_interval = output_interval
        self.replicas: dict[str, Replica] = {}
        self._by_key: dict[str, Replica] = {}
        self._index = count()
        self._controls: list[tuple[float, Control, int, str]] = []
        self._seq = count()
        self._calls: set[float] = set()
        self._decisions: list[Decision] = []
        self._desired = deployment.replicas
        self._hpa_metric = math.nan
        self._last_busy: dict[str, float] = {}
        self._last_output = 0.0
        self.now = 0.0
        self.finished = False
        self.vpa = VerticalPodAutoscaler(vpa, deployment) if vpa is not None else None
        self._view: ClusterView | None = None

    # -- the decision process interface -------------------------------------------------------------------

    def begin(self, view: ClusterView) -> Iterable[Decision]:
        self._view = view
        decisions = list(self.scheduler.begin(view) or ())
        self._scale_to(self.deployment.replicas, 0.0)
        tick = self.metrics.config.tick
        self._every(Control.SCRAPE, tick, tick)
        if self.hpa is not None:
            self._every(Control.SYNC, 0.0, self.hpa.spec.sync_period)
        if self.vpa is not None:
            self._every(Control.VPA_SAMPLE, self.vpa.spec.recommender_interval, self.vpa.spec.recommender_interval)
            self._every(Control.VPA_UPDATE, self.vpa.spec.updater_interval, self.vpa.spec.updater_interval)
        self._every(Control.OUTPUT, self.output_interval, self.output_interval)
        self._push(self.horizon, Control.END)
        decisions += self._flush()
        decisions += self._call()
        return decisions

    def decide(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        self._view = view
        self._run_until(now)
        for event in events:
            if isinstance(event, JobCompleted) and event.job.key in self._by_key:
                self._gone(self._by_key[event.job.key], now)
        yield from self._flush()
        for decision in self.scheduler.decide(now, events, view):
            replica = self._by_key.get(getattr(decision, "job_key", ""))
            yield decision
            if replica is not None and isinstance(decision, StartJob):
                replica.unit = decision.resources.intervals[0][0] if decision.resources else None
                self._bound(replica, now)
            elif replica is not None and isinstance(decision, RejectJob):
                self._gone(replica, now)
        yield from self._call()

    def end(self, view: ClusterView) -> None:
        try:
            self.scheduler.end(view)
        finally:
            self.output.close()

    # -- control events -----------------------------------------------------------------------------------

    def _push(self, time: float, kind: Control, name: str = "") -> None:
        if time <= self.horizon or kind is Control.END:
            heapq.heappush(self._controls, (time, kind, next(self._seq), name))

    def _every(self, kind: Control, first: float, period: float) -> None:
        self._push(first, kind, str(period))

    def _call(self) -> list[Decision]:
        """Ask the core to wake us at the next control time (once per distinct time)."""
        if not self._controls or self.finished:
            return []
        when = self._controls[0][0]
        if when in self._calls:
            return []
        self._calls = {t for t in self._calls if t >= self.now}
        self._calls.add(when)
        return [CallMeLater(when)]

    def _flush(self) -> list[Decision]:
        decisions, self._decisions = self._decisions, []
        return decisions

    def _run_until(self, now: float) -> None:
        controls = self._controls
        while controls and controls[0][0] <= now:
            time, kind, _, name = heapq.heappop(controls)
            self.serving.advance(time)
            self.now = time
            self._apply(kind, time, name)
        self.serving.advance(now)
        self.now = now

    def _apply(self, kind: Control, now: float, name: str) -> None:
        if kind is Control.RUNNING or kind is Control.READY or kind is Control.KILL:
            replica = self.replicas.get(name)
            if replica is None:
                return
            if kind is Control.RUNNING and replica.phase is Phase.STARTING:
                replica.phase, replica.running_since = Phase.UNREADY, now
                self._push(now + self.deployment.readiness_delay, Control.READY, name)
            elif kind is Control.READY and replica.phase is Phase.UNREADY:
                replica.phase, replica.ready_since, replica.served = Phase.READY, now, True
                self.serving.add_server(name, self.deployment.capacity)
            elif kind is Control.KILL and replica.phase is Phase.TERMINATING and not replica.killed:
                replica.killed = True
                self._decisions.append(KillJob(replica.key))
            return
        if kind is Control.END:
            self._finish(now)
            return
        if self.finished:
            return
        if kind is Control.DELIVER:
            self.metrics.deliver(now)
            return
        self._push(now + float(name), kind, name)  # periodic: the name carries the period
        if kind is Control.SCRAPE:
            self.metrics.scrape(now, self.replicas.values(), self.serving)
            self._push(now + self.metrics.config.lag, Control.DELIVER)
        elif kind is Control.SYNC:
            self._sync(now)
        elif kind is Control.VPA_SAMPLE and self.vpa is not None:
            self.vpa.sample(now, self.replicas.values(), self.serving)
        elif kind is Control.VPA_UPDATE and self.vpa is not None:
            self._vpa_update(now)
        elif kind is Control.OUTPUT:
            self._row(now)

    def _sync(self, now: float) -> None:
        assert self.hpa is not None
        alive = [r for r in self.replicas.values() if r.phase is not Phase.GONE]
        current = sum(r.phase is not Phase.TERMINATING for r in alive)
        pods = [r.status(r.cpu_request) for r in alive]
        result = self.hpa.sync(now, current, pods, self.metrics.latest)
        if result.metric is not None:
            self._hpa_metric = result.metric
        if result.desired != current and result.desired > 0:
            self._scale_to(result.desired, now)

    # -- replicas -----------------------------------------------------------------------------------------

    def _scale_to(self, desired: int, now: float) -> None:
        self._desired = desired
        active = [r for r in self.replicas.values() if r.phase not in (Phase.TERMINATING, Phase.GONE)]
        for _ in range(desired - len(active)):
            cpu, memory = self.vpa.admit() if self.vpa is not None else (None, None)
            job = replica_job(self.deployment, next(self._index), now, cpu, memory)
            request = job.request or {}
            replica = Replica(job.id, job.key, now, cpu_request=request.get("cpu", 0),
                              memory_request=request.get("memory", 0))
            replica.admitted = (replica.cpu_request, replica.memory_request)
            self.replicas[replica.name] = replica
            self._by_key[job.key] = replica
            self._decisions.append(SubmitJob(job))
        for replica in sorted(active, key=deletion_order)[: max(0, len(active) - desired)]:
            self._delete(replica, now)

    def _vpa_update(self, now: float) -> None:
        """The updater: evict (the deployment recreates the pod through admission) or resize in place."""
        assert self.vpa is not None
        alive = [r for r in self.replicas.values() if r.phase not in (Phase.TERMINATING, Phase.GONE)]
        for replica, in_place in self.vpa.update(now, alive, self._desired, self._fits):
            if not in_place:
                self._delete(replica, now)
        self._scale_to(self._desired, now)

    def _fits(self, replica: Replica, cpu: int, memory: int) -> bool:
        """Whether the node of a running replica has room for its requests grown to (cpu, memory)."""
        if replica.unit is None or self._view is None:
            return False
        node = self._node(replica)
        free = self._view.shared.free(node)
        # the core keeps each pod's first reservation: add what in-place resizes grew on this node since
        here = [r for r in self.replicas.values() if r.unit is not None and r.phase is not Phase.GONE
                and self._node(r) == node]
        grown_cpu = sum(r.cpu_request - r.admitted[0] for r in here)
        grown_memory = sum(r.memory_request - r.admitted[1] for r in here)
        return (cpu - replica.cpu_request <= free.get("cpu", 0) - grown_cpu
                and memory - replica.memory_request <= free.get("memory", 0) - grown_memory)

    def _node(self, replica: Replica) -> int:
        assert replica.unit is not None and self._view is not None
        return self._view.platform.node_of(replica.unit).id

    def _delete(self, replica: Replica, now: float) -> None:
        replica.deleted = now
        if replica.phase is Phase.PENDING:
            replica.phase = Phase.GONE
            self._decisions.append(RejectJob(replica.key))
            self._forget(replica)
            return
        replica.phase = Phase.TERMINATING
        if replica.served:
            self.serving.stop_routing(replica.name)
        self._push(now + self.deployment.termination_delay, Control.KILL, replica.name)

    def _bound(self, replica: Replica, now: float) -> None:
        if replica.phase is Phase.PENDING:
            replica.phase, replica.bound = Phase.STARTING, now
            self._push(now + self.deployment.startup_delay, Control.RUNNING, replica.name)

    def _gone(self, replica: Replica, now: float) -> None:
        if replica.served:
            self.serving.remove_server(replica.name)
        replica.phase = Phase.GONE
        self._forget(replica)

    def _forget(self, replica: Replica) -> None:
        self.replicas.pop(replica.name, None)
        self._by_key.pop(replica.key, None)
        self.metrics.forget(replica.name)
        self._last_busy.pop(replica.name, None)

    def _finish(self, now: float) -> None:
        """The scenario is over: write the last row, withdraw every replica."""
        if now > self._last_output + 1e-9:
            self._row(now)
        self.finished = True
        self._controls.clear()
        for replica in list(self.replicas.values()):
            if replica.phase is Phase.PENDING:
                self._decisions.append(RejectJob(replica.key))
                self._forget(replica)
            elif replica.phase is not Phase.GONE and not replica.killed:
                replica.killed = True
                self._decisions.append(KillJob(replica.key))

    # -- output -------------------------------------------------------------------------------------------

    def _row(self, now: float) -> None:
        interval = max(now - self._last_output, 1e-12)
        self._last_output = now
        counts, latency = self.serving.take_interval()
        phases = {phase: 0 for phase in Phase}
        used = requested = 0.0
        for replica in self.replicas.values():
            phases[replica.phase] += 1
            if replica.served:
                busy = self.serving.busy_seconds(replica.name)
                used += (busy - self._last_busy.get(replica.name, 0.0)) * self.deployment.capacity
                self._last_busy[replica.name] = busy
                requested += replica.cpu_request * interval
        rate = self.traffic.rate_at(now) if self.traffic is not None else math.nan
        self.output.add(Row(
            time=now,
            desired_replicas=self._desired,
            replicas_pending=phases[Phase.PENDING],
            replicas_starting=phases[Phase.STARTING],
            replicas_unready=phases[Phase.UNREADY],
            replicas_ready=phases[Phase.READY],
            replicas_terminating=phases[Phase.TERMINATING],
            utilisation=100.0 * used / requested if requested else math.nan,
            hpa_metric=self._hpa_metric,
            traffic_rate=rate,
            arrived_per_s=counts.arrived / interval,
            completed_per_s=counts.completed / interval,
            failed_per_s=counts.failed / interval,
            completed=counts.completed,
            failed=counts.failed,
            latency_mean=latency.mean,
            latency_p50=latency.p50,
            latency_p95=latency.p95,
            latency_p99=latency.p99,
            buffered=self.serving.buffered(),
            in_flight=self.serving.in_flight(),
            **(self.vpa.columns(self.replicas.values()) if self.vpa is not None else {}),
        ))
