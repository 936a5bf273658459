"""Strict first-come-first-served: the head of the queue starts when it fits; nothing overtakes it."""

from __future__ import annotations

from clustersim.policies.batch.parts import BatchPolicy
from clustersim.policies.registry import register_policy


@register_policy("fcfs")
class Fcfs(BatchPolicy):
    """Start queued jobs in queue order; stop at the first that does not fit."""

    def __init__(self, hosts: str = "lowest"):
        super().__init__("submit", "none", hosts)

