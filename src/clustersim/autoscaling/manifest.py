"""A Kubernetes Deployment manifest (apps/v1) as the deployment of an autoscaling scenario.

What the manifest says becomes the scenario's defaults: its name, `spec.replicas`, the pod template's requests
(summed over its containers), the readiness probe's `initialDelaySeconds` (readiness delay) and
`terminationGracePeriodSeconds` (termination delay, 30 s by default as in Kubernetes). Keys given in the
scenario's `deployment` section win over the manifest's.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clustersim._io.documents import load_documents
from clustersim._io.fields import Checker
from clustersim._io.quantities import parse_bytes, parse_millicores
from clustersim.errors import InputError


def deployment_defaults(path: Path) -> dict[str, object]:
    """The scenario `deployment` keys a Deployment manifest gives (the first Deployment of the file)."""
    source = str(path)
    documents = load_documents(path)
    manifest = next((d for d in documents if isinstance(d, Mapping) and d.get("kind") == "Deployment"), None)
    if manifest is None:
        raise InputError(source, "no document of kind Deployment (apiVersion apps/v1) in the file")
    spec = _mapping(manifest.get("spec"), source, "spec")
    template = _mapping(_mapping(spec.get("template"), source, "spec.template").get("spec"), source,
                        "spec.template.spec")
    containers = template.get("containers")
    if not isinstance(containers, list) or not containers:
        raise InputError(source, "expected a non-empty list of containers", field="spec.template.spec.containers")
    cpu = memory = 0
    readiness = 0.0
    for index, container in enumerate(containers):
        field = f"spec.template.spec.containers[{index}]"
        requests = _mapping(_mapping(_mapping(container, source, field).get("resources", {}), source,
                                     f"{field}.resources").get("requests", {}), source, f"{field}.resources.requests")
        try:
            cpu += parse_millicores(requests.get("cpu", 0))
            memory += parse_bytes(requests.get("memory", 0))
        except ValueError as error:
            raise InputError(source, str(error), field=f"{field}.resources.requests") from None
        probe = container.get("readinessProbe")
        if isinstance(probe, Mapping):
            delay = Checker(source).number(probe.get("initialDelaySeconds", 0),
                                           f"{field}.readinessProbe.initialDelaySeconds", 0)
            readiness = max(readiness, delay)
    defaults: dict[str, object] = {
        "name": str(_mapping(manifest.get("metadata", {}), source, "metadata").get("name", "web")),
        "replicas": spec.get("replicas", 1),
        "termination_delay": template.get("terminationGracePeriodSeconds", 30),
        "readiness_delay": readiness,
    }
    if cpu or memory:
        defaults["requests"] = {"cpu": f"{cpu}m", "memory": memory}
    return defaults


def _mapping(value: object, source: str, field: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InputError(source, "expected a mapping", field=field)
    return value
