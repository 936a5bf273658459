"""The API resources the facade serves, and the discovery documents that describe them.

The 14 resources an unmodified kube-scheduler v1.26 lists and watches are all here (measured, see
docs/kubernetes.md), and the 4 more of v1.34 (volume attachments; dynamic resource allocation's claims, slices
and device classes, GA in v1.34); most stay empty lists. Events and leases are stored as clients write them.
"""

from __future__ import annotations

from dataclasses import dataclass

VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"]


@dataclass(frozen=True)
class ResourceType:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def key(self) -> str:
        """Unique store key: `pods`, `events.events.k8s.io`..."""
        return self.plural if not self.group else f"{self.plural}.{self.group}"


RESOURCES = (
    ResourceType("", "v1", "pods", "Pod", True, ("po",)),
    ResourceType("", "v1", "nodes", "Node", False, ("no",)),
    ResourceType("", "v1", "namespaces", "Namespace", False, ("ns",)),
    ResourceType("", "v1", "persistentvolumes", "PersistentVolume", False, ("pv",)),
    ResourceType("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, ("pvc",)),
    ResourceType("", "v1", "services", "Service", True, ("svc",)),
    ResourceType("", "v1", "replicationcontrollers", "ReplicationController", True, ("rc",)),
    ResourceType("", "v1", "events", "Event", True, ("ev",)),
    ResourceType("storage.k8s.io", "v1", "storageclasses", "StorageClass", False, ("sc",)),
    ResourceType("storage.k8s.io", "v1", "csinodes", "CSINode", False),
    ResourceType("storage.k8s.io", "v1", "csidrivers", "CSIDriver", False),
    ResourceType("storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity", True),
    ResourceType("apps", "v1", "replicasets", "ReplicaSet", True, ("rs",)),
    ResourceType("apps", "v1", "statefulsets", "StatefulSet", True, ("sts",)),
    ResourceType("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, ("pdb",)),
    ResourceType("storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", False),
    ResourceType("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim", True),
    ResourceType("resource.k8s.io", "v1", "resourceslices", "ResourceSlice", False),
    ResourceType("resource.k8s.io", "v1", "deviceclasses", "DeviceClass", False),
    ResourceType("events.k8s.io", "v1", "events", "Event", True, ("ev",)),
    ResourceType("coordination.k8s.io", "v1", "leases", "Lease", True),
)

BY_PATH = {(r.group_version, r.plural): r for r in RESOURCES}
IDLE_PATH = "/clustersim/v1/idle"
"""Where kube-scheduler-sim reports that it is idle (POST) and asks how far an instant's publication went (GET):
kube-scheduler/simulation/idle.go."""


def api_versions() -> dict[str, object]:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}


def api_groups() -> dict[str, object]:
    groups = sorted({r.group for r in RESOURCES if r.group})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
        {"name": g, "versions": [{"groupVersion": f"{g}/v1", "version": "v1"}],
         "preferredVersion": {"groupVersion": f"{g}/v1", "version": "v1"}} for g in groups]}


def api_group(group: str) -> dict[str, object] | None:
    if not any(r.group == group for r in RESOURCES):
        return None
    version = {"groupVersion": f"{group}/v1", "version": "v1"}
    return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": [version],
            "preferredVersion": version}


def resource_list(group_version: str) -> dict[str, object] | None:
    members = [r for r in RESOURCES if r.group_version == group_version]
    if not members:
        return None
    entries: list[dict[str, object]] = []
    for r in members:
        entries.append({"name": r.plural, "singularName": r.kind.lower(), "namespaced": r.namespaced,
                        "kind": r.kind, "verbs": VERBS, "shortNames": list(r.short_names)})
        if r.plural == "pods":
            entries.append({"name": "pods/binding", "singularName": "", "namespaced": True, "kind": "Binding",
                            "verbs": ["create"]})
            entries.append({"name": "pods/status", "singularName": "", "namespaced": True, "kind": "Pod",
                            "verbs": ["get", "patch", "update"]})
    if group_version == "v1":
        entries.append({"name": "bindings", "singularName": "binding", "namespaced": True, "kind": "Binding",
                        "verbs": ["create"]})
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": entries}


def version_info() -> dict[str, object]:
    return {"major": "1", "minor": "26", "gitVersion": "v1.26.0-clustersim", "gitCommit": "", "gitTreeState": "clean",
            "buildDate": "2000-01-01T00:00:00Z", "goVersion": "go1.19", "compiler": "gc", "platform": "linux/amd64"}
