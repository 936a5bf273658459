"""A platform guessed from an SWF trace's header, for when the user has no platform file.

By default every SWF processor is one single-core host, as Batsim's SWF converters assume; with
`cores_per_node` the trace's MaxNodes nodes each get MaxProcs/MaxNodes cores and jobs ask for cores.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from clustersim.errors import InputError
from clustersim.limits import MAX_NODES, MAX_UNITS
from clustersim.platform.model import Node, Platform, Unit


def platform_from_swf_header(
    header: Mapping[str, str],
    *,
    cores_per_node: bool = False,
    speed: float = 1.0,
    source: str = "SWF header",
) -> Platform:
    """MaxProcs single-core hosts (Unit.HOST), or MaxNodes nodes of MaxProcs/MaxNodes cores (Unit.CORE)."""
    if not (math.isfinite(speed) and speed > 0):
        raise ValueError(f"speed must be a positive number of flop/s, got {speed}")
    procs = _header_count(header, "MaxProcs", source)
    if procs > (MAX_UNITS if cores_per_node else MAX_NODES):
        raise InputError(source, f"MaxProcs {procs} is more processors than clustersim simulates "
                         f"({MAX_NODES} hosts, {MAX_UNITS} cores); give a platform file (--platform)", field="MaxProcs")
    if not cores_per_node:
        nodes = [Node(i, f"host{i}", speed=speed) for i in range(procs)]
        return Platform(nodes, Unit.HOST, name="swf")
    count = _header_count(header, "MaxNodes", source)
    if procs % count:
        raise InputError(
            source,
            f"MaxProcs ({procs}) is not a multiple of MaxNodes ({count}): nodes of different sizes cannot be "
            "guessed; describe the cluster in a platform file (--platform)",
            field="MaxProcs",
        )
    cores = procs // count
    nodes = [Node(i, f"node{i}", cores=cores, speed=speed) for i in range(count)]
    return Platform(nodes, Unit.CORE, name="swf")


def _header_count(header: Mapping[str, str], key: str, source: str) -> int:
    text = header.get(key)
    if text is None:
        raise InputError(
            source,
            f"the trace has no '{key}' header line to size the platform; give a platform file (--platform)",
            field=key,
        )
    try:
        value = int(text.split()[0]) if text.split() else 0
    except ValueError:
        value = 0
    if value <= 0:
        raise InputError(
            source,
            f"'{key}: {text}' is not a positive number of {'nodes' if key == 'MaxNodes' else 'processors'}; "
            "give a platform file (--platform)",
            field=key,
        )
    return value
