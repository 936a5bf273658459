"""Opening a platform file of any registered format: SimGrid XML or a clustersim cluster description.

A third-party reader is a `FileFormat` registered in `PLATFORM_READERS` (or declared as an entry point of the
`clustersim.platform_readers` group).
"""

from __future__ import annotations

from typing import Literal

from clustersim._io.formats import FileFormat, format_options, recognise
from clustersim._io.textfile import StrPath
from clustersim.platform.cluster_file import read_cluster_file
from clustersim.platform.model import Platform
from clustersim.platform.simgrid import read_simgrid_platform
from clustersim.plugins import Registry


def _looks_like_yaml_mapping(head: str) -> bool:
    """Whether the first meaningful line is `key:` or `key: value`, as in a YAML cluster description."""
    for line in head.splitlines():
        text = line.strip()
        if text and not text.startswith(("#", "---", "%")):
            key, colon, _ = text.partition(":")
            return bool(colon) and bool(key) and " " not in key.strip()
    return False


PLATFORM_READERS: Registry[FileFormat[Platform]] = Registry("platform format", group="clustersim.platform_readers")
PLATFORM_READERS.add("simgrid", FileFormat(
    "SimGrid/Batsim XML platforms", "(.xml)", read_simgrid_platform,
    sniff=lambda head: head.startswith("<"), suffixes=(".xml",), options={"order": "document"},
))
PLATFORM_READERS.add("cluster", FileFormat(
    "cluster descriptions", "(.yaml, .yml, .json)", read_cluster_file,
    sniff=lambda head: head.startswith("{") or _looks_like_yaml_mapping(head), suffixes=(".yaml", ".yml", ".json"),
))


def platform_format(path: StrPath) -> str:
    """The registered name of the file's format (`simgrid`, `cluster`...), from its content, else its name."""
    return recognise(PLATFORM_READERS.items(), path, "platform format")


def load_platform(
    path: StrPath, *, host_order: Literal["document", "name"] = "document", format: str | None = None
) -> Platform:
    """Read a platform file of any registered format (or of `format`); `host_order` numbers SimGrid hosts in
    document order or by name (as Batsim with SimGrid >= 3.25 does)."""
    reader = PLATFORM_READERS.get(format or platform_format(path))
    options = format_options(PLATFORM_READERS.items(), reader, path, {"order": host_order})
    return reader.read(path, **options)
