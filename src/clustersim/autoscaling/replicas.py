"""Deployments and their replicas: a pod template, and each replica's life (Pending, Starting, Running, Ready,
Terminating).

A replica is a real pod in the core: a job with resource requests, placed by the scheduling policy; it may stay
Pending while no node has room. Once placed it starts (`startup_delay`, image pull and container start: phase
still Pending), runs unready (`readiness_delay`, until its readiness probe passes), then serves traffic. Deleted,
it stops taking requests and is killed after `termination_delay` (the grace period); an unscheduled one is simply
withdrawn.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from clustersim.autoscaling.hpa import PodStatus
from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay

REPLICA_LIFETIME = 1e9
"""A replica runs until it is scaled down (killed); its profile is a delay longer than any scenario."""


@dataclass(frozen=True, slots=True)
class Deployment:
    """A pod template (requests), a replica count, and how a replica starts, serves and stops."""

    name: str = "web"
    replicas: int = 1
    cpu_request: int = 500
    memory_request: int = 0
    capacity: int = 500
    """Millicores a replica spends on requests when busy (a burstable pod may exceed its request)."""
    startup_delay: float = 10.0
    readiness_delay: float = 5.0
    termination_delay: float = 30.0
    startup_cpu: int = 0
    """Millicores a replica burns while Running but not Ready (what the CPU initialisation period guards)."""


class Phase(Enum):
    PENDING = "pending"
    STARTING = "starting"
    UNREADY = "unready"
    READY = "ready"
    TERMINATING = "terminating"
    GONE = "gone"


@dataclass(slots=True)
class Replica:
    """One replica pod and the times of its transitions."""

    name: str
    key: str
    created: float
    phase: Phase = Phase.PENDING
    bound: float | None = None
    running_since: float | None = None
    ready_since: float | None = None
    deleted: float | None = None
    served: bool = False
    """Whether the serving model knows it (it was Ready at some point)."""
    killed: bool = False
    """Whether its KillJob was issued."""
    cpu_request: int = 0
    """Millicores: the template's, or what the VPA's admission set (it may differ between replicas)."""
    memory_request: int = 0
    admitted: tuple[int, int] = (0, 0)
    """(cpu, memory) requests it was created with: what the core reserved for it."""
    unit: int | None = None
    """The allocation unit it was placed on (its node), once bound."""

    def status(self, cpu_request: int) -> PodStatus:
        """The pod as the HPA reads it."""
        phase = self.phase
        if phase is Phase.PENDING:
            return PodStatus(self.name, "Pending", False, None, None, cpu_request)
        ready = phase is Phase.READY or (phase is Phase.TERMINATING and self.ready_since is not None)
        since = self.ready_since if self.ready_since is not None else self.bound
        return PodStatus(
            self.name, "Pending" if phase is Phase.STARTING else "Running", ready, since, self.bound, cpu_request,
            deleting=phase is Phase.TERMINATING,
        )


def replica_job(deployment: Deployment, index: int, now: float, cpu: int | None = None,
                memory: int | None = None) -> Job:
    """The pod of a new replica, submitted now, with the template's requests unless others are given."""
    cpu = deployment.cpu_request if cpu is None else cpu
    memory = deployment.memory_request if memory is None else memory
    return Job(
        f"{deployment.name}-{index}", now, 1, Delay(REPLICA_LIFETIME), workload="autoscale",
        profile_name="replica", request={"cpu": cpu, "memory": memory},
    )


def deletion_order(replica: Replica) -> tuple[int, float, float]:
    """The ReplicaSet controller's choice of pods to delete: unscheduled, then starting, then unready, then the
    most recently Ready; ties to the newest."""
    rank = {Phase.PENDING: 0, Phase.STARTING: 1, Phase.UNREADY: 2, Phase.READY: 3}[replica.phase]
    return (rank, -(replica.ready_since or 0.0), -replica.created)
