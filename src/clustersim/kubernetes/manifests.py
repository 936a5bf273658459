"""Kubernetes YAML manifests as clustersim inputs: Pods and Jobs (a workload), Nodes (a platform).

A pod's run time is the annotation `clustersim.io/duration` (`170s`, `2m30s`, `1h`, or seconds) and its arrival
the annotation `clustersim.io/arrival` (same syntax, default 0), unless a schedule file maps names to arrival
times. A Job of `completions` C and `parallelism` P yields C pods `<job>-<i>`; the first P arrive with the Job,
each later one when an earlier one completes (see `JobController`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace

from clustersim._io.documents import load_document, load_documents
from clustersim._io.quantities import parse_bytes, parse_millicores
from clustersim._io.textfile import StrPath
from clustersim.errors import InputError
from clustersim.platform.kube_labels import TAINTS_PROPERTY, format_taints
from clustersim.platform.model import Node
from clustersim.workload.job import Job
from clustersim.workload.pods import (
    DEFAULT_SCHEDULER,
    OPERATORS,
    PodSpec,
    Requirement,
    Taint,
    Toleration,
    make_pod,
)

DURATION_ANNOTATION = "clustersim.io/duration"
ARRIVAL_ANNOTATION = "clustersim.io/arrival"
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(value: object) -> float:
    """Seconds from a Go-style duration (`170s`, `2m30s`, `1h`, `500ms`) or a plain number of seconds."""
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        parts = _DURATION.findall(text)
        if not parts or "".join(n + u for n, u in parts) != text:
            raise ValueError(f"'{value}' is not a duration: expected e.g. 170s, 2m30s, 1h or seconds") from None
        return sum(float(n) * _UNITS[u] for n, u in parts)
    if number < 0:
        raise ValueError(f"'{value}' is negative: a duration is >= 0")
    return number


def resource_vector(values: object, where: str, source: str) -> dict[str, int]:
    """`requests`/`limits` as integers: cpu in millicores, memory (and others) as exact quantities."""
    if values is None:
        return {}
    if not isinstance(values, Mapping):
        raise InputError(source, "expected a mapping of resource names to quantities", field=where)
    vector: dict[str, int] = {}
    for name, amount in values.items():
        try:
            vector[str(name)] = parse_millicores(amount) if name == "cpu" else parse_bytes(amount)
        except ValueError as error:
            raise InputError(source, str(error), field=f"{where}.{name}") from None
    return vector


def _mapping(value: object, where: str, source: str) -> Mapping[str, object]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError(source, "expected a mapping", field=where)
    return value


def _list(value: object, where: str, source: str) -> list[object]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(source, "expected a list", field=where)
    return value


def _strings(value: object, where: str, source: str) -> dict[str, str]:
    return {str(k): str(v) for k, v in _mapping(value, where, source).items()}


def _terms(affinity: Mapping[str, object], source: str, where: str) -> tuple[tuple[Requirement, ...], ...]:
    node_affinity = _mapping(affinity.get("nodeAffinity"), f"{where}.nodeAffinity", source)
    required = _mapping(node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution"), where, source)
    terms = []
    for index, term in enumerate(_list(required.get("nodeSelectorTerms"), where, source)):
        term_map = _mapping(term, f"{where}.nodeSelectorTerms[{index}]", source)
        requirements = []
        for expression in _list(term_map.get("matchExpressions"), where, source):
            expr = _mapping(expression, f"{where}.matchExpressions", source)
            operator = str(expr.get("operator", ""))
            if operator not in OPERATORS:
                raise InputError(source, f"unknown operator '{operator}'; valid: {', '.join(OPERATORS)}", field=where)
            values = tuple(str(v) for v in _list(expr.get("values"), where, source))
            requirements.append(Requirement(str(expr.get("key", "")), operator, values))
        terms.append(tuple(requirements))
    return tuple(terms)


def _tolerations(value: object, source: str, where: str) -> tuple[Toleration, ...]:
    out = []
    for index, entry in enumerate(_list(value, where, source)):
        t = _mapping(entry, f"{where}[{index}]", source)
        out.append(Toleration(str(t.get("key", "")), str(t.get("operator", "Equal")), str(t.get("value", "")),
                              str(t.get("effect", ""))))
    return tuple(out)


@dataclass
class PodTemplate:
    """What a Pod manifest (or a Job's template) says, before it becomes one or more pods."""

    spec: PodSpec
    request: dict[str, int]
    duration: float
    arrival: float


def pod_template(metadata: Mapping[str, object], spec: Mapping[str, object], source: str, where: str) -> PodTemplate:
    """Read a pod's metadata and spec: requests summed over containers, the placement rules, the duration."""
    annotations = _strings(metadata.get("annotations"), f"{where}.metadata.annotations", source)
    request: dict[str, int] = {}
    limits: dict[str, int] = {}
    containers = spec.get("containers") or []
    if not isinstance(containers, list):
        raise InputError(source, "expected a list of containers", field=f"{where}.spec.containers")
    for index, container in enumerate(containers):
        resources = _mapping(_mapping(container, f"{where}.spec.containers[{index}]", source).get("resources"),
                             "resources", source)
        path = f"{where}.spec.containers[{index}].resources"
        for name, amount in resource_vector(resources.get("requests"), f"{path}.requests", source).items():
            request[name] = request.get(name, 0) + amount
        for name, amount in resource_vector(resources.get("limits"), f"{path}.limits", source).items():
            limits[name] = limits.get(name, 0) + amount
    for name, amount in limits.items():
        request.setdefault(name, amount)  # Kubernetes defaults a missing request to its limit
    try:
        duration = parse_duration(annotations.get(DURATION_ANNOTATION, 0))
        arrival = parse_duration(annotations.get(ARRIVAL_ANNOTATION, 0))
    except ValueError as error:
        raise InputError(source, str(error), field=f"{where}.metadata.annotations") from None
    pod = PodSpec(
        name=str(metadata.get("name", "")),
        namespace=str(metadata.get("namespace") or "default"),
        scheduler_name=str(spec.get("schedulerName") or DEFAULT_SCHEDULER),
        priority=int(spec.get("priority") or 0),  # type: ignore[call-overload]
        node_selector=_strings(spec.get("nodeSelector"), f"{where}.spec.nodeSelector", source),
        required_terms=_terms(_mapping(spec.get("affinity"), "affinity", source), source, f"{where}.spec.affinity"),
        tolerations=_tolerations(spec.get("tolerations"), source, f"{where}.spec.tolerations"),
        labels=_strings(metadata.get("labels"), f"{where}.metadata.labels", source),
        annotations=annotations,
        limits=limits,
        node_name=str(spec.get("nodeName") or ""),
    )
    return PodTemplate(pod, request, duration, arrival)


@dataclass
class Manifests:
    """The objects of a set of manifests, as clustersim inputs; held jobs wait for the Job controller."""

    pods: list[Job] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    held: dict[str, list[Job]] = field(default_factory=dict)
    """Pods of a Job beyond its parallelism, by Job name, released one per completion."""


def _pod(document: Mapping[str, object], out: Manifests, schedule: Mapping[str, float], source: str,
         where: str) -> None:
    metadata = _mapping(document.get("metadata"), f"{where}.metadata", source)
    template = pod_template(metadata, _mapping(document.get("spec"), f"{where}.spec", source), source, where)
    name = template.spec.name
    if not name:
        raise InputError(source, "a pod needs metadata.name", field=where)
    arrival = schedule.get(name, template.arrival)
    out.pods.append(make_pod(template.spec, template.request, template.duration, arrival))


def _job(document: Mapping[str, object], out: Manifests, schedule: Mapping[str, float], source: str,
         where: str) -> None:
    metadata = _mapping(document.get("metadata"), f"{where}.metadata", source)
    spec = _mapping(document.get("spec"), f"{where}.spec", source)
    name = str(metadata.get("name") or "")
    if not name:
        raise InputError(source, "a Job needs metadata.name", field=where)
    completions = int(spec.get("completions") or 1)  # type: ignore[call-overload]
    parallelism = int(spec.get("parallelism") or 1)  # type: ignore[call-overload]
    template_doc = _mapping(spec.get("template"), f"{where}.spec.template", source)
    template_meta = {**_mapping(template_doc.get("metadata"), "metadata", source)}
    annotations = {**_strings(metadata.get("annotations"), "annotations", source),
                   **_strings(template_meta.get("annotations"), "annotations", source)}
    template_meta["annotations"] = annotations
    template_meta.setdefault("namespace", metadata.get("namespace"))
    arrival = schedule.get(name)
    held: list[Job] = []
    for index in range(completions):
        template_meta["name"] = f"{name}-{index}"
        template = pod_template(template_meta, _mapping(template_doc.get("spec"), "spec", source), source, where)
        labels = {**template.spec.labels, "job-name": name}
        spec_i = replace(template.spec, labels=labels)
        when = arrival if arrival is not None else template.arrival
        pod = make_pod(spec_i, template.request, template.duration, when, extra={"job-name": name})
        (out.pods if index < parallelism else held).append(pod)
    if held:
        out.held[name] = held


def node_from_manifest(document: Mapping[str, object], index: int, source: str, where: str) -> Node:
    """A Node manifest: capacity (or allocatable) cpu, memory, pods, gpus, extended resources; labels; taints."""
    metadata = _mapping(document.get("metadata"), f"{where}.metadata", source)
    status = _mapping(document.get("status"), f"{where}.status", source)
    spec = _mapping(document.get("spec"), f"{where}.spec", source)
    vector = resource_vector(status.get("allocatable") or status.get("capacity"), f"{where}.status.capacity", source)
    cpu = vector.pop("cpu", 1000)
    if cpu % 1000:
        raise InputError(source, "node cpu must be whole cores (clustersim nodes have integral cores)", field=where)
    memory = vector.pop("memory", 0)
    gpus = vector.pop("nvidia.com/gpu", 0)
    properties = _strings(metadata.get("labels"), f"{where}.metadata.labels", source)
    entries = [_mapping(t, f"{where}.spec.taints", source) for t in _list(spec.get("taints"), where, source)]
    taints = [Taint(str(t.get("key", "")), str(t.get("value", "")), str(t.get("effect", "NoSchedule")))
              for t in entries]
    if taints:
        properties[TAINTS_PROPERTY] = format_taints(taints)
    return Node(index, str(metadata.get("name") or f"node{index}"), max(cpu // 1000, 1), 1.0, memory, gpus, vector,
                properties)


_KINDS: dict[str, Callable[[Mapping[str, object], Manifests, Mapping[str, float], str, str], None]] = {
    "Pod": _pod,
    "Job": _job,
    "Node": lambda doc, out, schedule, source, where: out.nodes.append(
        node_from_manifest(doc, len(out.nodes), source, where)),
}


def read_manifests(path: StrPath, schedule: Mapping[str, float] | None = None) -> Manifests:
    """Every Pod, Job and Node of a (multi-document) YAML file; `List` kinds are expanded."""
    source = str(path)
    documents = [d for d in load_documents(path) if d is not None]
    out = Manifests()
    for index, document in enumerate(_expand(documents, source)):
        kind = str(document.get("kind", ""))
        reader = _KINDS.get(kind)
        if reader is None:
            raise InputError(source, f"unsupported kind '{kind}'; supported: {', '.join(_KINDS)}, List",
                             field=f"documents[{index}]")
        reader(document, out, schedule or {}, source, f"documents[{index}]")
    out.pods.sort(key=lambda job: job.submit_time)
    return out


def _expand(documents: list[object], source: str) -> Iterator[Mapping[str, object]]:
    for document in documents:
        if not isinstance(document, Mapping):
            raise InputError(source, "every YAML document must be a Kubernetes object (a mapping)")
        if document.get("kind") == "List" or str(document.get("kind", "")).endswith("List"):
            yield from _expand(_list(document.get("items"), "items", source), source)
        else:
            yield document


def read_schedule(path: StrPath) -> dict[str, float]:
    """A schedule file: a YAML mapping of pod or Job names to arrival times (`web-1: 10s`)."""
    source = str(path)
    document = load_document(path) or {}
    if not isinstance(document, Mapping):
        raise InputError(source, "expected a mapping of pod or Job names to arrival times")
    try:
        return {str(name): parse_duration(value) for name, value in document.items()}
    except ValueError as error:
        raise InputError(source, str(error)) from None
