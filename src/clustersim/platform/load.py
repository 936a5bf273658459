"""Opening a platform file of any supported format: SimGrid XML or a clustersim cluster description."""

from __future__ import annotations

from typing import Literal

from clustersim._io.textfile import StrPath, read_head
from clustersim.errors import InputError
from clustersim.platform.cluster_file import read_cluster_file
from clustersim.platform.model import Platform
from clustersim.platform.simgrid import read_simgrid_platform

SUPPORTED = "SimGrid/Batsim XML platforms (.xml) and cluster descriptions (.yaml, .yml, .json)"


def platform_format(path: StrPath) -> str:
    """`simgrid` (XML content or .xml name) or `cluster` (.yaml/.yml/.json name, or a mapping's content)."""
    name = str(path).lower().removesuffix(".gz")
    head = read_head(path, 4096).lstrip("\ufeff \t\r\n")
    if head.startswith("<") or name.endswith(".xml"):
        return "simgrid"
    if name.endswith((".yaml", ".yml", ".json")) or head.startswith("{") or _looks_like_yaml_mapping(head):
        return "cluster"
    raise InputError(str(path), f"unrecognised platform format; supported: {SUPPORTED}")


def _looks_like_yaml_mapping(head: str) -> bool:
    """Whether the first meaningful line is `key:` or `key: value`, as in a YAML cluster description."""
    for line in head.splitlines():
        text = line.strip()
        if text and not text.startswith(("#", "---", "%")):
            key, colon, _ = text.partition(":")
            return bool(colon) and bool(key) and " " not in key.strip()
    return False


def load_platform(path: StrPath, *, host_order: Literal["document", "name"] = "document") -> Platform:
    """Read a platform file, recognised by its content and extension (see `SUPPORTED`); `host_order` numbers
    SimGrid hosts in document order or by name (as Batsim with SimGrid >= 3.25 does)."""
    if platform_format(path) == "simgrid":
        return read_simgrid_platform(path, order=host_order)
    return read_cluster_file(path)
