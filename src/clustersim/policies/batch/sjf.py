"""Shortest job first by requested time (walltime), without backfilling."""

from __future__ import annotations

from clustersim.policies.batch.parts import BatchPolicy
from clustersim.policies.registry import register_policy


@register_policy("sjf")
class Sjf(BatchPolicy):
    """Queue ordered by requested time (ties keep queue order); stop at the first job that does not fit."""

    def __init__(self, hosts: str = "lowest"):
        super().__init__("shortest-first", "none", hosts)
