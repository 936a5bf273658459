"""When simulated time may advance while a real-time scheduler decides (Batkube's controls, and better).

At each instant the facade publishes what happened and waits, in real time, until every pending pod is
*settled*: bound, or reported unschedulable (PodScheduled=False) since the last change of the cluster, or
reported earlier and fitting no node now (checked with the kube filters, since a scheduler does not repeat an
unchanged report). Then time jumps to the next event at once. Batkube's controls remain for schedulers that
stay silent: `timeout` bounds the wait at an instant, after which time advances by a step that starts at
`base_timestep` and grows by `backoff_multiplier` up to `max_timestep` while nothing is bound.
"""

from __future__ import annotations

from dataclasses import dataclass

from clustersim.errors import ClusterSimError


@dataclass(frozen=True)
class TimeControl:
    """Real-time waiting rules of the facade (seconds of wall time, except the timesteps: simulated)."""

    timeout: float = 5.0
    """Longest wall-clock wait at one instant for unsettled pods; 0 waits until they settle (or deadlock)."""
    min_delay: float = 0.0
    """Shortest wall-clock wait at every instant, even when everything is settled."""
    base_timestep: float = 1.0
    max_timestep: float = 20.0
    backoff_multiplier: float = 2.0
    fast_forward: bool = True
    """With nothing left to settle, jump straight to the next event (else step by the timestep)."""
    deadlock_timeout: float = 60.0
    """Pods pending and unsettled, and no binding nor status report for this long: give up with an error."""

    def __post_init__(self) -> None:
        for name in ("timeout", "min_delay", "base_timestep", "max_timestep", "deadlock_timeout"):
            if getattr(self, name) < 0:
                raise ValueError(f"--{name.replace('_', '-')} must be >= 0")
        if self.base_timestep <= 0 or self.max_timestep < self.base_timestep:
            raise ValueError("need 0 < --base-timestep <= --max-timestep")
        if self.backoff_multiplier < 1:
            raise ValueError("--backoff-multiplier must be >= 1")


class DeadlockError(ClusterSimError):
    """The external scheduler left pods pending and did nothing for `deadlock_timeout` seconds."""
