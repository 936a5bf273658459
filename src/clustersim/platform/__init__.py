"""Nodes, platforms and the readers that build them from files."""

from clustersim.platform.cluster_file import read_cluster_file
from clustersim.platform.load import load_platform
from clustersim.platform.model import Node, Platform, Unit
from clustersim.platform.simgrid import IgnoredPlatformElements, read_simgrid_platform
from clustersim.platform.swf_header import platform_from_swf_header

__all__ = ["Node", "Platform", "Unit"]
__all__ += [
    "IgnoredPlatformElements",
    "load_platform",
    "platform_from_swf_header",
    "read_cluster_file",
    "read_simgrid_platform",
]
