"""How clustersim talks to an external scheduler: Batsim's command-line switches, as one immutable record."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_ENDPOINT = "tcp://localhost:28000"
"""Where Batsim's `-s` connects by default, and so where Batsim schedulers listen by default."""


@dataclass(frozen=True, slots=True)
class ProtocolOptions:
    """The options of a run with an external scheduler; each mirrors the Batsim 4 switch of the same name.

    `timeout` bounds the wait for each answer (seconds; None waits forever, as Batsim does): a scheduler that
    hangs or vanished then fails the run with a clear error instead of blocking it forever.
    """

    timeout: float | None = 30.0
    forward_profiles: bool = False
    """`--forward-profiles-on-submission`: JOB_SUBMITTED carries the job's profile."""
    dynamic_jobs: bool = False
    """`--enable-dynamic-jobs`: the scheduler may REGISTER_PROFILE and REGISTER_JOB."""
    acknowledge_dynamic_jobs: bool = False
    """`--acknowledge-dynamic-jobs`: a registered job is echoed back as JOB_SUBMITTED."""

    def config(self) -> dict[str, object]:
        """SIMULATION_BEGINS' `config` object, with Batsim 4's flattened keys (pybatsim reads them all)."""
        return {
            "redis-enabled": False,
            "redis-hostname": "127.0.0.1",
            "redis-port": 6379,
            "redis-prefix": "default",
            "profiles-forwarded-on-submission": self.forward_profiles,
            "dynamic-jobs-enabled": self.dynamic_jobs,
            "dynamic-jobs-acknowledged": self.acknowledge_dynamic_jobs,
            "profile-reuse-enabled": False,
            "forward-unknown-events": False,
        }
