"""Nodes, platforms and the readers that build them from files."""

from clustersim.platform.model import Node, Platform, Unit

__all__ = ["Node", "Platform", "Unit"]
