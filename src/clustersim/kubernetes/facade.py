"""The Kubernetes facade as a decision process: the core's events become API objects, bindings StartJobs.

The simulation thread runs `decide`; HTTP threads turn writes that touch the cluster (bindings, pod status
reports, pod creation and deletion) into `Command`s the simulation thread executes inside `decide`, so every
change goes through the core (the facade keeps no copy of the cluster's truth: free resources are read from the
core's view). Read-only requests are served from the store without waiting.
"""

from __future__ import annotations

import collections
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from clustersim.core.decisions import CallMeLater, Decision, KillJob, RejectJob, StartJob, SubmitJob
from clustersim.core.events import Event, FinalState, JobCompleted, JobSubmitted
from clustersim.core.sharing import shortfall
from clustersim.core.state import ClusterView
from clustersim.intervals import IntervalSet
from clustersim.kubernetes.objects import namespace_object, node_object, pod_object, timestamp
from clustersim.kubernetes.store import Obj, Store, metadata
from clustersim.kubernetes.timecontrol import DeadlockError, TimeControl
from clustersim.platform.model import Platform
from clustersim.policies.kube.framework import PodInfo, Signature
from clustersim.policies.kube.policy import KubePolicy
from clustersim.workload.job import Job
from clustersim.workload.pods import PodSpec, Taint, make_pod, pod_spec


class ApiError(Exception):
    """A request refused the Kubernetes way: HTTP code, reason (NotFound, Conflict...), message."""

    def __init__(self, code: int, reason: str, message: str):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message


Action = Callable[[ClusterView | None], Iterator[Decision]]


@dataclass
class Command:
    """A cluster-changing request, executed by the simulation thread; `result` is the response object."""

    action: Action
    done: threading.Event = field(default_factory=threading.Event)
    result: Obj | None = None
    error: ApiError | None = None


UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
"""A cordoned node (`spec.unschedulable`) is filtered as if it had this NoSchedule taint, as kube-scheduler does."""
_FINAL_PHASE = {FinalState.COMPLETED_SUCCESSFULLY: "Succeeded"}
TERMINATED_POD_GC_THRESHOLD = 12_500
"""kube-controller-manager's --terminated-pod-gc-threshold: beyond it the oldest finished pods are deleted, so
the store (and memory) grows with the pods alive, not with the workload."""


class KubeFacade:
    """A DecisionProcess whose decisions come from an external Kubernetes scheduler through the store."""

    def __init__(self, platform: Platform, store: Store, control: TimeControl | None = None,
                 terminated_pods_kept: int = TERMINATED_POD_GC_THRESHOLD):
        self.platform = platform
        self.terminated_pods_kept = terminated_pods_kept
        self._terminated: collections.deque[tuple[str, str]] = collections.deque()
        self.store = store
        self.control = control or TimeControl()
        self.commands: queue.Queue[Command] = queue.Queue()
        self._nodes = {node.name: node for node in platform.nodes}
        self._keys: dict[tuple[str, str], str] = {}
        self._names: dict[str, tuple[str, str]] = {}
        self._reported: dict[str, int] = {}
        self._killing: str | None = None
        """The running pod the current DELETE kills."""
        self._deleting: dict[str, Command] = {}
        """DELETEs of running pods, answered once the core has freed their resources."""
        self._epoch = 0
        self._now = 0.0
        self._step = self.control.base_timestep
        self._last_progress = self._last_binding = time.monotonic()
        self._unwatched_since: float | None = None
        self._unreadable = False
        """A binding came in a format the facade cannot read (protobuf), and none has succeeded since."""
        self._filters = KubePolicy(percentage_of_nodes_to_score=100)
        self._finished = threading.Event()
        self._lock = threading.Lock()
        self.nb_bindings = 0
        self._last_result: Obj = {}
        self._unanswered = 0
        """Commands executed whose HTTP answer is not written yet: time waits for them, so a scheduler never
        learns of a later instant (a pod completing) before the answer to its own request (the binding)."""
        self._answering = threading.local()
        self._awaiting_answers = False
        self._last_pod_rv = 0
        self._published_now = 0.0
        """The simulated time of the last instant published (GET /clustersim/v1/idle)."""
        """resourceVersion of the last pod write a scheduler's pod informer sees (all but the removal of
        finished pods)."""
        self._warned_unreported = False
        self._idle_rv: int | None = None
        """The last idle report of a scheduler that makes them (the simulation build): it has handled every pod
        event up to this version and has nothing left to schedule. None: no scheduler reports (time control
        then relies on the pods' reports and the kube filters)."""
        with store.cond:  # before any client can list: a scheduler that lists nodes first must not see none
            for name in ("default", "kube-system", "kube-public", "kube-node-lease"):
                store.write("namespaces", "ADDED", namespace_object(name))
            for node in platform.nodes:
                store.write("nodes", "ADDED", node_object(node))

    # -- the decision process ----------------------------------------------------------------------------

    def begin(self, view: ClusterView) -> None:
        self._filters.begin(view)

    def now(self) -> float:
        return self._now

    def decide(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        self._now = now
        self._publish(now, events)
        control = self.control
        start = waiting_since = time.monotonic()
        bound_before = self.nb_bindings
        settled = False
        while True:
            pods_settled = self._settled(view) if self._idle_rv is None else self._scheduler_idle(view)
            with self._lock:
                answers_due = self._unanswered > 0
                self._awaiting_answers = pods_settled and answers_due
            settled = pods_settled and not answers_due
            clock = time.monotonic()
            if settled and clock - start >= control.min_delay:
                break
            if self._holding(clock):
                waiting_since = clock  # no scheduler watches pods: no timeout may move time on without it
            if (not settled and control.timeout and clock - waiting_since >= control.timeout
                    and not self._backing_off(view, clock)):
                self._moving_on_unreported(now)
                break
            if not settled:
                self._check_deadlock(view)
            wait = control.min_delay - (clock - start) if settled else 0.05
            if not settled and control.timeout:
                wait = min(wait, control.timeout - (clock - waiting_since))
            try:
                command = self.commands.get(timeout=max(wait, 0.0005))
            except queue.Empty:
                continue
            yield from self._execute(command, view)
            while not self.commands.empty() and not self._deleting:  # a burst: take them all before re-checking
                yield from self._execute(self.commands.get_nowait(), view)
            if self._deleting:
                return  # a pod was killed: the core frees its resources at this same instant, then calls again
        if self.nb_bindings > bound_before:
            self._step = control.base_timestep
        busy = bool(view.pending) or bool(view.running)
        if view.pending and not settled:
            yield CallMeLater(now + self._step)
            self._step = min(self._step * control.backoff_multiplier, control.max_timestep)
        elif busy and not control.fast_forward:
            yield CallMeLater(now + self._step)

    def end(self, view: ClusterView) -> None:
        """The run is over: later requests are served without the core (bindings are refused)."""
        with self._lock:
            self._finished.set()
            while not self.commands.empty():
                for _ in self._execute(self.commands.get_nowait(), None):
                    pass

    # -- commands from the API ---------------------------------------------------------------------------

    def submit(self, action: Action, timeout: float = 60.0) -> Obj:
        """Run `action` on the simulation thread (or here, once the run is over) and return its result."""
        command = Command(action)
        with self._lock:
            if self._finished.is_set():
                for _ in self._execute(command, None):
                    pass
            else:
                self._unanswered += 1
                self._answering.count = getattr(self._answering, "count", 0) + 1
                self.commands.put(command)
        if not command.done.wait(timeout):
            raise ApiError(504, "Timeout", "the simulation did not handle the request in time")
        if command.error is not None:
            raise command.error
        assert command.result is not None
        return command.result

    def answered(self) -> None:
        """The calling HTTP thread has written its answer: the commands it submitted no longer hold time."""
        count = getattr(self._answering, "count", 0)
        if count:
            self._answering.count = 0
            with self._lock:
                self._unanswered -= count
                if not self._unanswered and self._awaiting_answers:  # the instant is over but for these answers
                    self._awaiting_answers = False
                    self.commands.put(Command(_nothing))

    def _execute(self, command: Command, view: ClusterView | None) -> Iterator[Decision]:
        self._last_result = {}
        try:
            yield from command.action(view)
            command.result = self._last_result
        except ApiError as error:
            command.error = error
        finally:
            if self._killing is None:
                command.done.set()
            else:  # answered when the kill has freed the pod's resources (`_completed`)
                self._deleting[self._killing] = command
                self._killing = None

    def bind(self, namespace: str, name: str, node_name: str) -> Action:
        """POST pods/{name}/binding: the core starts the pod on the node, or the binding is refused."""

        def action(view: ClusterView | None) -> Iterator[Decision]:
            try:
                yield from attempt(view)
            except ApiError:
                self.refused()
                raise

        def attempt(view: ClusterView | None) -> Iterator[Decision]:
            key, pod = self._pod(namespace, name)
            if view is None:
                raise ApiError(409, "Conflict", "the simulation is over: no pod can be bound")
            job = view.pending.get(key)
            if job is None or job.request is None:
                spec = pod.get("spec")
                assigned = str(spec.get("nodeName", "")) if isinstance(spec, Mapping) else ""
                raise ApiError(409, "Conflict", f"pod {name} is already assigned to node \"{assigned}\"")
            node = self._nodes.get(node_name)
            if node is None:
                raise ApiError(404, "NotFound", f"nodes \"{node_name}\" not found")
            unit = self.platform.units_of(node.id).intervals[0][0]
            if view.shared.pods(node.id) == 0 and unit not in view.free:
                raise ApiError(409, "Conflict", f"node {node_name} is held by an exclusive job or is off")
            missing = shortfall(view.shared.free(node.id), {**job.request, "pods": 1})
            if missing:
                raise ApiError(422, "Invalid", f"pod {namespace}/{name} does not fit node {node_name}: "
                               f"insufficient {', '.join(missing)}")
            yield StartJob(key, IntervalSet.from_ids([unit]))
            self.nb_bindings += 1
            self._last_progress = self._last_binding = time.monotonic()
            self._unreadable = False
            self._reported.pop(key, None)
            self._last_result = self._bound(pod, node_name)

        return action

    def scheduler_idle(self, resource_version: int) -> None:
        """POST /clustersim/v1/idle: the scheduler has handled the pod events up to `resource_version` and has no
        pod left to schedule nor in flight (kube-scheduler-sim reports this; see docs/kubernetes.md)."""
        with self._lock:
            if self._idle_rv is None or resource_version > self._idle_rv:
                self._idle_rv = resource_version
            self._last_progress = time.monotonic()
        self.commands.put(Command(_nothing))  # wake the simulation thread: the instant may be over

    def _scheduler_idle(self, view: ClusterView) -> bool:
        """A scheduler that reports idleness has finished with everything it was shown (and can read bindings)."""
        if self._unreadable and view.pending:
            return False
        return self._idle_rv is not None and self._idle_rv >= self._last_pod_rv

    def _pod_written(self, pod: Obj) -> Obj:
        self._last_pod_rv = int(str(metadata(pod)["resourceVersion"]))
        return pod

    def refused(self, unreadable: bool = False) -> None:
        """A binding was refused (by the core, or `unreadable`: not JSON): the scheduler had reserved room for the
        pod and now gives it up, so its reports since the last change of the cluster may be stale: they settle
        no more. After an unreadable one nothing settles until a binding succeeds: the scheduler cannot bind."""
        with self._lock:
            self._epoch += 1
            self._unreadable = self._unreadable or unreadable

    def _bound(self, pod: Obj, node_name: str) -> Obj:
        now = timestamp(self._now)
        spec = dict(pod["spec"])  # type: ignore[call-overload]
        spec["nodeName"] = node_name
        conditions = [
            {"type": kind, "status": "True", "lastProbeTime": None, "lastTransitionTime": now}
            for kind in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
        ]
        old = pod.get("status")
        qos = old.get("qosClass", "Burstable") if isinstance(old, Mapping) else "Burstable"
        status = {"phase": "Running", "conditions": conditions, "hostIP": "10.0.0.1", "podIP": "10.1.0.1",
                  "startTime": now, "qosClass": qos, "containerStatuses": [{
                      "name": "main", "ready": True, "started": True, "restartCount": 0, "image": "clustersim/delay",
                      "imageID": "", "containerID": f"clustersim://{pod['metadata']['name']}",  # type: ignore[index]
                      "state": {"running": {"startedAt": now}}}]}
        new = {**pod, "spec": spec, "status": status, "metadata": dict(metadata(pod))}
        with self.store.cond:
            return self._pod_written(self.store.write("pods", "MODIFIED", new))

    def patch_status(self, namespace: str, name: str, patch: Mapping[str, object]) -> Action:
        """PATCH pods/{name}/status: conditions merged by type; PodScheduled=False reports the pod unschedulable."""

        def action(view: ClusterView | None) -> Iterator[Decision]:
            key, pod = self._pod(namespace, name)
            status = dict(pod.get("status") or {})  # type: ignore[call-overload]
            before = _report_of(status.get("conditions"))
            changes = patch.get("status")
            if isinstance(changes, Mapping):
                for field_name, value in changes.items():
                    if field_name.startswith("$"):
                        continue
                    if field_name == "conditions" and isinstance(value, list):
                        status["conditions"] = _merge_conditions(status.get("conditions") or [], value)
                    elif value is None:
                        status.pop(field_name, None)
                    else:
                        status[field_name] = value
                report = _report_of(changes.get("conditions"))
                if report is not None and report[1] != "SchedulerError" and report != before:
                    self._reported[key] = self._epoch
                    self._last_progress = time.monotonic()
            with self.store.cond:
                self._last_result = self._pod_written(self.store.write(
                    "pods", "MODIFIED", {**pod, "status": status, "metadata": dict(metadata(pod))}))
            return
            yield

        return action

    def create_pod(self, namespace: str, spec: PodSpec, request: Mapping[str, int], duration: float) -> Action:
        """POST pods: a new pod submitted now (a SubmitJob), visible at once."""

        def action(view: ClusterView | None) -> Iterator[Decision]:
            if (namespace, spec.name) in self._keys:
                raise ApiError(409, "AlreadyExists", f"pods \"{spec.name}\" already exists")
            if view is None:
                raise ApiError(409, "Conflict", "the simulation is over: no pod can be created")
            job = make_pod(spec, request, duration, self._now, job_id=f"{namespace}.{spec.name}", workload="api")
            yield SubmitJob(job)
            self._last_result = self._added(job, self._now)

        return action

    def node_changed(self, node: Obj) -> Action:
        """A Node written through the API (kubectl cordon, label, taint): the settle logic's filters follow its
        labels and taints (a cordon is the NoSchedule taint kube-scheduler's NodeUnschedulable plugin checks),
        and the cluster counts as changed."""

        def action(view: ClusterView | None) -> Iterator[Decision]:
            meta, spec = metadata(node), node.get("spec")
            labels = meta.get("labels")
            taints = []
            for taint in (spec.get("taints") or []) if isinstance(spec, Mapping) else []:
                if isinstance(taint, Mapping):
                    taints.append(Taint(str(taint.get("key", "")), str(taint.get("value") or ""),
                                        str(taint.get("effect") or "NoSchedule")))
            if isinstance(spec, Mapping) and spec.get("unschedulable"):
                taints.append(Taint(UNSCHEDULABLE_TAINT))
            self._filters.relabel(str(meta.get("name", "")), dict(labels) if isinstance(labels, Mapping) else {},
                                  tuple(taints))
            self._epoch += 1
            self._last_result = node
            return
            yield

        return action

    def delete_pod(self, namespace: str, name: str) -> Action:
        """DELETE pods/{name}: a pending pod is rejected and goes at once; a running one is killed, and goes (and
        the DELETE is answered) once the core has freed its resources, so that a binding the scheduler makes on
        hearing of the deletion finds them free."""

        def action(view: ClusterView | None) -> Iterator[Decision]:
            key, pod = self._pod(namespace, name)
            if view is not None and key in view.running:
                self._killing = key
                yield KillJob(key)
                return
            if view is not None and key in view.pending:
                yield RejectJob(key)
            self._last_result = self._remove(key, namespace, name) or pod

        return action

    def _remove(self, key: str, namespace: str, name: str) -> Obj | None:
        with self.store.cond:
            gone = self.store.remove("pods", namespace, name)
        status = gone.get("status") if gone is not None else None
        if isinstance(status, Mapping) and status.get("phase") not in ("Succeeded", "Failed"):
            self._pod_written(gone)  # type: ignore[arg-type]  # (a finished pod's removal: no scheduler sees it)
        self._keys.pop((namespace, name), None)
        self._reported.pop(key, None)
        return gone

    # -- publication -------------------------------------------------------------------------------------

    def _publish(self, now: float, events: Sequence[Event]) -> None:
        with self._lock:  # an instant's pods are published whole (published), with their instant's time
            self._publish_locked(now, events)
            self._published_now = now

    def published(self) -> tuple[int, float]:
        """GET /clustersim/v1/idle: the resourceVersion of the last pod event published, never half-way through
        an instant's publication (kube-scheduler-sim waits until it has handled it before it schedules), and the
        simulated time of that instant (its clock for `podMaxInUnschedulablePodsDuration`)."""
        with self._lock:
            return self._last_pod_rv, self._published_now

    def _publish_locked(self, now: float, events: Sequence[Event]) -> None:
        changed = False
        for event in events:
            if isinstance(event, JobSubmitted):
                if event.job.key not in self._names:
                    self._added(event.job, now)
                    changed = True
            elif isinstance(event, JobCompleted):
                changed = True
                self._completed(event.job, event.state, now)
        if changed:
            self._epoch += 1

    def _added(self, job: Job, now: float) -> Obj:
        spec = pod_spec(job)
        name = (spec.namespace, spec.name)
        if name in self._keys:
            raise ApiError(409, "AlreadyExists", f"two pods are named {spec.namespace}/{spec.name}")
        self._keys[name] = job.key
        self._names[job.key] = name
        with self.store.cond:
            return self._pod_written(self.store.write("pods", "ADDED", pod_object(job, spec, now)))

    def _completed(self, job: Job, state: FinalState, now: float) -> None:
        name = self._names.pop(job.key, None)
        deleting = self._deleting.pop(job.key, None)
        if deleting is not None and name is not None:
            deleting.result = self._remove(job.key, *name) or {}
            deleting.done.set()
            return
        if name is None:
            return
        self._keys.pop(name, None)
        with self.store.cond:
            pod = self.store.get("pods", *name)
            if pod is None:
                return
            phase = _FINAL_PHASE.get(state, "Failed")
            status = dict(pod["status"])  # type: ignore[call-overload]
            status["phase"] = phase
            status["conditions"] = [dict(c, status="False") if c["type"] in ("Ready", "ContainersReady") else c
                                    for c in status.get("conditions", [])]
            started = status.get("startTime", timestamp(now))
            status["containerStatuses"] = [{"name": "main", "ready": False, "started": False, "restartCount": 0,
                                            "image": "clustersim/delay", "imageID": "", "state": {"terminated": {
                                                "exitCode": 0 if phase == "Succeeded" else 1,
                                                "reason": "Completed" if phase == "Succeeded" else "Error",
                                                "startedAt": started, "finishedAt": timestamp(now)}}}]
            self._pod_written(self.store.write("pods", "MODIFIED", {**pod, "status": status,
                                                                    "metadata": dict(metadata(pod))}))
            terminated = self._terminated
            terminated.append(name)
            while len(terminated) > self.terminated_pods_kept:  # the pod garbage collector: oldest first
                self.store.remove("pods", *terminated.popleft())

    def _pod(self, namespace: str, name: str) -> tuple[str, Obj]:
        with self.store.cond:
            pod = self.store.get("pods", namespace, name)
        if pod is None:
            raise ApiError(404, "NotFound", f"pods \"{name}\" not found")
        key = self._keys.get((namespace, name), "")
        return key, pod

    # -- time control ------------------------------------------------------------------------------------

    def _settled(self, view: ClusterView) -> bool:
        """Every pending pod is reported since the last change, or reported before and fits no node now."""
        if self._unreadable and view.pending:
            return False
        fits: dict[Signature, bool] = {}
        for key, job in view.pending.items():
            reported = self._reported.get(key)
            if reported is None:
                return False
            if reported != self._epoch and self._fits(key, job, view, fits):
                return False
        return True

    def _fits(self, key: str, job: Job, view: ClusterView, cache: dict[Signature, bool]) -> bool:
        """The pod fits some node now (the kube filters decide; `cache` by pod signature)."""
        if job.request is None:
            return False
        pod = PodInfo(key, job.request, pod_spec(job), job.submit_time, 0)
        signature = pod.signature
        fit = cache.get(signature)
        if fit is None:
            fit = cache[signature] = self._filters.place(pod, view)[0] is not None
        return fit

    def _holding(self, clock: float) -> bool:
        """No client watches pods (a scheduler not started yet, or restarting): time holds, for the deadlock
        timeout at most, so that a scheduler outage of any length leaves the schedule unchanged."""
        if self.store.watching("pods"):
            self._unwatched_since = None
            return False
        if self._unwatched_since is None:
            self._unwatched_since = clock
        limit = self.control.deadlock_timeout
        return not limit or clock - self._unwatched_since < limit

    def _backing_off(self, view: ClusterView, clock: float) -> bool:
        """A pod that fits a node now is not bound yet: the scheduler is only waiting out its backoff (wall-clock
        seconds in kube-scheduler), so time must not move on without it; for the deadlock timeout at most."""
        limit = self.control.deadlock_timeout
        if limit and clock - self._last_progress >= limit:
            return False
        if self._idle_rv is not None:
            return True  # a scheduler that reports idleness is still busy with this instant
        fits: dict[Signature, bool] = {}
        return any(self._reported.get(key) != self._epoch and self._fits(key, job, view, fits)
                   for key, job in view.pending.items())

    def _moving_on_unreported(self, now: float) -> None:
        """Time moves on without the idle report of a scheduler that makes them (it did nothing for the deadlock
        timeout): the schedule may differ from a run where it kept up. Said once, on stderr."""
        if self._idle_rv is None or self._warned_unreported:
            return
        self._warned_unreported = True
        print(f"serve-k8s: t={now:g}: the scheduler reports idleness but made no binding, report nor idle report "
              f"for {self.control.deadlock_timeout:g} s of wall time: time moves on without it, and the schedule "
              f"may differ from a run where it kept up (a stopped or starved scheduler?)", file=sys.stderr, flush=True)

    def _check_deadlock(self, view: ClusterView) -> None:
        """Pods wait, none runs, and the scheduler did nothing useful for the deadlock timeout: reports count
        unless a pod fits now (then only a binding does: a scheduler whose bindings all fail is stuck too)."""
        clock = time.monotonic()
        limit = self.control.deadlock_timeout
        if not limit or view.running or clock - self._last_binding <= limit:
            return
        fits: dict[Signature, bool] = {}
        stuck = any(self._fits(key, job, view, fits) for key, job in view.pending.items())
        if stuck or clock - self._last_progress > limit:
            raise DeadlockError(
                f"deadlock at t={self._now:g}: {len(view.pending)} pod(s) pending, none running, and the scheduler "
                f"has bound no pod{'' if stuck else ' nor reported one'} for {limit:g} s of wall time"
                f"{' though some fit' if stuck else ''} (is a scheduler running with the pods' schedulerName?)"
            )

    def explain(self) -> str:
        return f"{self.nb_bindings} bindings"


def _nothing(view: ClusterView | None) -> Iterator[Decision]:
    return iter(())


def _report_of(conditions: object) -> tuple[str, str, str] | None:
    """A PodScheduled=False condition's (status, reason, message), or None. The same report again is not news: a
    scheduler writes an unchanged condition only when its own copy of the pod lags (its first write not seen back
    yet), and such a repeat, made before an instant, can reach the facade after it (it then settled the pod at the
    new instant, and time moved on without the binding the scheduler was about to make)."""
    for condition in conditions if isinstance(conditions, list) else []:
        if (isinstance(condition, Mapping) and condition.get("type") == "PodScheduled"
                and condition.get("status") == "False"):
            return "False", str(condition.get("reason", "")), str(condition.get("message", ""))
    return None


def _merge_conditions(current: Iterable[object], updates: Iterable[object]) -> list[object]:
    """Strategic merge of `status.conditions`: by `type`, updated fields win, new types appended."""
    merged: list[dict[str, object]] = [dict(c) for c in current if isinstance(c, Mapping)]
    for update in updates:
        if not isinstance(update, Mapping):
            continue
        for condition in merged:
            if condition.get("type") == update.get("type"):
                condition.update({k: v for k, v in update.items() if not str(k).startswith("$")})
                break
        else:
            merged.append({k: v for k, v in update.items() if not str(k).startswith("$")})
    return list(merged)
