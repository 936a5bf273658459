"""Pod workloads and Kubernetes platforms from every supported file, recognised by content then by name.

Workloads: Batsim JSON (Batkube's profile fields `cpu`, `memory`, `scheduler`), SWF (each job asks its
processors x `cpu_per_processor` cpu, one pod), Kubernetes YAML (Pods, Jobs). Platforms: cluster YAML/JSON,
Batsim/SimGrid XML (`core`, `memory` properties), or Node manifests (YAML with `kind: Node`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from clustersim._io.quantities import parse_bytes, parse_millicores
from clustersim._io.textfile import StrPath, read_head
from clustersim.errors import InputError
from clustersim.kubernetes.manifests import read_manifests, read_schedule
from clustersim.platform.load import load_platform
from clustersim.platform.model import Platform
from clustersim.workload.batsim_json import read_batsim_workload
from clustersim.workload.job import Job
from clustersim.workload.pods import POD_KEY, PodSpec, dns_name, pod_spec_from_extra
from clustersim.workload.profiles import Delay
from clustersim.workload.stream import Workload
from clustersim.workload.swf import read_swf


@dataclass
class PodWorkload:
    """Pods in submit order, plus the pods Kubernetes Jobs hold back until earlier pods complete."""

    workload: Workload
    held: dict[str, list[Job]] = field(default_factory=dict)


def _as_pod(job: Job, request: Mapping[str, int], spec: PodSpec) -> Job:
    profile = job.profile
    if not isinstance(profile, Delay):
        raise InputError(job.workload, f"job '{job.id}': a pod needs a delay profile (a run time), "
                         f"got {type(profile).__name__}")
    return Job(job.id, job.submit_time, 1, profile, job.walltime, job.workload, job.profile_name, job.user,
               job.group, job.queue, {**job.extra, POD_KEY: spec}, dict(request))


def batsim_pods(path: StrPath, name: str = "w0") -> PodWorkload:
    """Batkube's workloads: a delay job with `cpu` (e.g. "1.5", 0.5) and `memory` ("500Mi") becomes a pod."""
    workload = read_batsim_workload(path, name=name)
    source = str(path)

    def convert(jobs: Iterator[Job]) -> Iterator[Job]:
        for job in jobs:
            request: dict[str, int] = {}
            try:
                if "cpu" in job.extra:
                    request["cpu"] = parse_millicores(job.extra["cpu"])  # type: ignore[arg-type]
                if "memory" in job.extra:
                    request["memory"] = parse_bytes(job.extra["memory"])  # type: ignore[arg-type]
            except ValueError as error:
                raise InputError(source, f"job '{job.id}': {error}") from None
            yield _as_pod(job, request, pod_spec_from_extra(job))

    workload.jobs = convert(workload.jobs)
    return PodWorkload(workload)


def swf_pods(path: StrPath, name: str = "w0", cpu_per_processor: str = "1") -> PodWorkload:
    """An SWF trace as pods: each job one pod asking its processor count times `cpu_per_processor` cpu."""
    workload = read_swf(path, name=name)
    per_processor = parse_millicores(cpu_per_processor)

    def convert(jobs: Iterator[Job]) -> Iterator[Job]:
        for job in jobs:
            spec = PodSpec(name=dns_name(f"job-{job.id}"))
            yield _as_pod(job, {"cpu": job.nb_res * per_processor}, spec)

    workload.jobs = convert(workload.jobs)
    return PodWorkload(workload)


def manifest_pods(path: StrPath, name: str = "w0", schedule: StrPath | None = None) -> PodWorkload:
    manifests = read_manifests(path, read_schedule(schedule) if schedule is not None else None)
    if not manifests.pods and not manifests.held:
        raise InputError(str(path), "no Pod or Job in these manifests")
    return PodWorkload(Workload.from_jobs(manifests.pods, name=name), manifests.held)


def pod_workload_format(path: StrPath) -> str:
    """`batsim-json`, `swf` or `manifests` from the content (YAML with `kind:` is manifests)."""
    head = read_head(path).lstrip("\ufeff \t\r\n")
    if head.startswith(("{", "[")):
        return "batsim-json"
    if "kind:" in head or "apiVersion:" in head:
        return "manifests"
    lower = str(path).lower()
    if lower.endswith((".yaml", ".yml")):
        return "manifests"
    return "swf"


_READERS: dict[str, Callable[..., PodWorkload]] = {
    "batsim-json": batsim_pods,
    "swf": swf_pods,
    "manifests": manifest_pods,
}


def load_pod_workload(path: StrPath, name: str = "w0", schedule: StrPath | None = None) -> PodWorkload:
    """Pods from any supported workload file; `schedule` (arrival times by name) applies to manifests."""
    kind = pod_workload_format(path)
    if schedule is not None:
        if kind != "manifests":
            raise InputError(str(schedule), "a schedule file applies to Kubernetes manifests only")
        return manifest_pods(path, name, schedule)
    return _READERS[kind](path, name)


def load_kube_platform(path: StrPath) -> Platform:
    """Nodes from Node manifests, a cluster description or a Batsim/SimGrid platform."""
    head = read_head(path, 4096)
    if "kind:" in head and "Node" in head:
        manifests = read_manifests(path)
        if not manifests.nodes:
            raise InputError(str(path), "no Node in these manifests")
        return Platform(manifests.nodes, name=str(path).rsplit("/", 1)[-1].split(".")[0])
    return load_platform(path)
