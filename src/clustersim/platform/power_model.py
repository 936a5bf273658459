"""The power model of a node, as Batsim defines it on top of SimGrid.

A node in a computation power state draws `idle_watts` when idle and `full_watts` at full load, linearly in
between with its load (the share of its units that are busy). A node may also sleep, drawing `watts`; entering
and leaving the sleep state takes a fixed time and energy (Batsim's virtual transition power states compute
1 flop: their speed is 1/duration and their power energy/duration).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from clustersim.errors import InputError


@dataclass(frozen=True, slots=True)
class Transition:
    """Switching a node off or on: how long it takes and the energy it costs."""

    seconds: float
    joules: float
    pstate: int | None = field(default=None, compare=False)
    """The virtual power state that computes its 1 flop (a SimGrid platform's), if any: where it is declared, not
    what it costs, so two transitions of equal time and energy are equal."""

    @property
    def watts(self) -> float:
        return self.joules / self.seconds if self.seconds > 0 else 0.0


@dataclass(frozen=True, slots=True)
class SleepState:
    """A state in which the node cannot compute, and the transitions into and out of it."""

    watts: float
    switch_off: Transition
    switch_on: Transition
    pstate: int = 1
    """Its power state number (Batsim's `sleep_pstates`; 1 by convention in a cluster file)."""


@dataclass(frozen=True, slots=True)
class ComputationState:
    """A power state a node computes in (DVFS): its speed and its watts idle and at full load."""

    speed: float
    idle_watts: float
    full_watts: float


@dataclass(frozen=True, slots=True)
class PowerModel:
    """Watts of a node: computing (idle to full load) and, when it can sleep, its sleep states (first = used).

    `idle_watts` and `full_watts` are those of the state it starts in (`compute_pstate`); `computation_states`
    lists every power state it may compute in (number, state), which SET_RESOURCE_STATE switches between.
    """

    idle_watts: float
    full_watts: float
    sleep_states: tuple[SleepState, ...] = ()
    compute_pstate: int = 0
    """The power state number it computes in at the start (the SimGrid host's `pstate`)."""
    computation_states: tuple[tuple[int, ComputationState], ...] = ()

    @property
    def sleep(self) -> SleepState | None:
        """The sleep state power policies use (the first declared)."""
        return self.sleep_states[0] if self.sleep_states else None

    def computation(self, pstate: int) -> ComputationState | None:
        """The computation power state of that number (None: not one; a cluster file's node has only its own)."""
        for number, state in self.computation_states:
            if number == pstate:
                return state
        return None


def from_batsim_properties(
    properties: Mapping[str, str], speeds: Sequence[float], speed: float, source: str, host: str
) -> PowerModel | None:
    """Batsim's host properties: `wattage_per_state` ("idle:full" or "idle:one-core:all-cores" per power
    state, comma-separated) and `sleep_pstates` ("sleep:switch-off:switch-on" power state indices, several
    sleep states comma-separated). Returns None when the host declares no wattage.
    """
    text = properties.get("wattage_per_state")
    if text is None:
        return None
    where = f"host '{host}', property 'wattage_per_state'"
    wattages: list[tuple[float, float]] = []
    for state in text.split(","):
        try:
            values = [float(v) for v in state.strip().split(":")]
        except ValueError:
            raise InputError(source, f"{where}: '{state.strip()}' is not 'idle:full' watts") from None
        if len(values) not in (2, 3) or min(values) < 0:
            raise InputError(source, f"{where}: '{state.strip()}' is not 'idle:full' (or idle:one:all) watts >= 0")
        wattages.append((values[0], values[-1]))
    speeds = list(speeds) or [speed]
    if len(wattages) != len(speeds):
        raise InputError(source, f"{where}: {len(wattages)} power states, but the host has {len(speeds)} speed(s)")
    sleep_states = _sleep_states(properties.get("sleep_pstates"), wattages, speeds, source, host)
    transitional = {i for triple in _triples(properties.get("sleep_pstates"), source, host) for i in triple}
    computing = next((i for i, s in enumerate(speeds) if s == speed and i not in transitional), 0)
    idle, full = wattages[computing]
    sleeping = {state.pstate for state in sleep_states}
    computation = tuple(
        (i, ComputationState(speeds[i], *wattages[i]))
        for i in range(len(speeds)) if i not in transitional and i not in sleeping
    )
    return PowerModel(idle, full, sleep_states, computing, computation)


def _triples(text: str | None, source: str, host: str) -> list[tuple[int, int, int]]:
    if not text:
        return []
    triples = []
    for part in text.split(","):
        try:
            sleep, off, on = (int(v) for v in part.strip().split(":"))
        except ValueError:
            raise InputError(
                source, f"host '{host}', property 'sleep_pstates': '{part.strip()}' is not 'sleep:off:on' indices"
            ) from None
        triples.append((sleep, off, on))
    return triples


def _sleep_states(
    text: str | None, wattages: list[tuple[float, float]], speeds: list[float], source: str, host: str
) -> tuple[SleepState, ...]:
    states = []
    for sleep, off, on in _triples(text, source, host):
        if max(sleep, off, on) >= len(wattages):
            raise InputError(source, f"host '{host}', property 'sleep_pstates': no power state {max(sleep, off, on)}")
        off_transition, on_transition = _transition(off, wattages, speeds), _transition(on, wattages, speeds)
        states.append(SleepState(wattages[sleep][0], off_transition, on_transition, sleep))
    return tuple(states)


def _transition(pstate: int, wattages: list[tuple[float, float]], speeds: list[float]) -> Transition:
    """A virtual transition power state computes 1 flop: it lasts 1/speed seconds at its idle wattage."""
    seconds = 1.0 / speeds[pstate]
    return Transition(seconds, seconds * wattages[pstate][0], pstate)
