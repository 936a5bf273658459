"""Exact energy accounting: the integral of every node's power between events, per node state and per job.

Power is piecewise constant between events, so the integral is exact: total power is the sum over nodes of
their state's base power (idle watts when on, sleep watts, transition watts) plus, for each busy unit, its
share of its node's dynamic power ((full - idle) / units of the node). Both sums change by O(1) per node state
change and by a prefix-sum lookup per allocation interval, so accounting costs O(1) per event.

A job is charged its share of its nodes' consumption while it runs: per unit, full watts / units of the node
(a whole host's full-load power on a per-host platform, as Batsim charges it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from clustersim._io.numbers import fmt
from clustersim.core.nodes import NodeState, NodeTracker
from clustersim.errors import InputError
from clustersim.intervals import IntervalSet
from clustersim.platform.model import Platform
from clustersim.platform.power_model import PowerModel

MACHINE_STATES_COLUMNS = "time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing"
CONSUMED_ENERGY_COLUMNS = "time,energy,event_type,wattmin,epower"


def power_models(platform: Platform) -> list[PowerModel]:
    """Every node's power model; an error names the first node without one."""
    models = []
    for node in platform.nodes:
        if node.power is None:
            raise InputError(
                platform.name,
                f"node '{node.name}' has no power model: energy needs wattage_per_state (Batsim XML) or "
                "power: {idle, full} (cluster file) on every node",
            )
        models.append(node.power)
    return models


def _prefix(values: list[float]) -> list[float]:
    sums = [0.0]
    for value in values:
        sums.append(sums[-1] + value)
    return sums


@dataclass
class EnergySummary:
    """What schedule.csv reports about energy and machine states (machine-seconds per state)."""

    consumed_joules: float
    time_computing: float
    time_idle: float
    time_sleeping: float
    time_switching_on: float
    time_switching_off: float
    nb_machine_switches: int
    nb_grouped_switches: int


class EnergyMeter:
    """Integrates power exactly; optionally streams Batsim's machine_states.csv and consumed_energy.csv."""

    def __init__(self, platform: Platform, tracker: NodeTracker, output_dir: Path | None = None, prefix: str = ""):
        self.models = power_models(platform)
        self.tracker = tracker
        unit_full, unit_dynamic = [], []
        for node, model in zip(platform.nodes, self.models, strict=True):
            units = tracker.nb_units[node.id]
            unit_full += [model.full_watts / units] * units
            unit_dynamic += [(model.full_watts - model.idle_watts) / units] * units
        self._full = _prefix(unit_full)
        self._dynamic = _prefix(unit_dynamic)
        self._static = sum(m.idle_watts for m in self.models)
        self._dynamic_power = 0.0
        self.wattmin = sum(m.sleep.watts if m.sleep else m.idle_watts for m in self.models)
        self._wattmin_text = fmt(self.wattmin)
        self.energy = 0.0
        self._last = 0.0
        self.nb_machine_switches = 0
        self.nb_grouped_switches = 0
        self._first_submit_energy: float | None = None
        self._last_end_energy = 0.0
        self._states_file: TextIO | None = None
        self._energy_file: TextIO | None = None
        self._states_dirty_at: float | None = None
        self._written_counts = ""
        self._last_entry = (0.0, 0.0)
        if output_dir is not None:
            self._states_file = open(output_dir / f"{prefix}machine_states.csv", "w", encoding="utf-8")  # noqa: SIM115
            self._states_file.write(MACHINE_STATES_COLUMNS + "\n")
            self._energy_file = open(output_dir / f"{prefix}consumed_energy.csv", "w", encoding="utf-8")  # noqa: SIM115
            self._energy_file.write(CONSUMED_ENERGY_COLUMNS + "\n")
            self._states_dirty_at = 0.0

    # -- integration ---------------------------------------------------------------------------------------

    def advance(self, now: float) -> None:
        """Integrate power and state times up to `now` (power is constant since the last change)."""
        if self._states_dirty_at is not None and self._states_dirty_at < now:
            self._write_states()
        elapsed = now - self._last
        if elapsed > 0:
            self.energy += (self._static + self._dynamic_power) * elapsed
            self._last = now

    @staticmethod
    def _sum(sums: list[float], resources: IntervalSet) -> float:
        intervals = resources.intervals
        if len(intervals) == 1:
            lo, hi = intervals[0]
            return sums[hi + 1] - sums[lo]
        return sum(sums[hi + 1] - sums[lo] for lo, hi in intervals)

    # The core calls `advance(now)` once per instant, before it changes anything: the methods below record
    # changes at the current instant.

    def job_submitted(self, now: float) -> None:
        if self._first_submit_energy is None:
            self._first_submit_energy = self.energy

    def job_started(self, now: float, resources: IntervalSet) -> None:
        self._dynamic_power += self._sum(self._dynamic, resources)
        self._entry(now, "s")

    def job_ended(self, now: float, start: float, resources: IntervalSet) -> float:
        """Account for a job's end; returns the energy it consumed."""
        self._dynamic_power -= self._sum(self._dynamic, resources)
        if abs(self._dynamic_power) < 1e-9:
            self._dynamic_power = 0.0  # no busy unit left: drop floating-point residue
        self._last_end_energy = self.energy
        self._entry(now, "e")
        return (now - start) * self._sum(self._full, resources)

    def _base_watts(self, node: int, state: NodeState) -> float:
        model = self.models[node]
        if state in (NodeState.IDLE, NodeState.COMPUTING):
            return model.idle_watts
        sleep = model.sleep
        assert sleep is not None, "only nodes that can sleep leave the computing states"
        if state is NodeState.SLEEPING:
            return sleep.watts
        transition = sleep.switch_on if state is NodeState.SWITCHING_ON else sleep.switch_off
        return transition.watts

    def node_changed(self, now: float, node: int, old: NodeState, new: NodeState) -> None:
        """A node changed power state (switching, asleep, back on); the tracker already moved it."""
        self._static += self._base_watts(node, new) - self._base_watts(node, old)
        if new in (NodeState.SWITCHING_ON, NodeState.SWITCHING_OFF):
            self.nb_machine_switches += 1
        self._entry(now, "p")

    def states_changed(self, now: float) -> None:
        """Counts of machines per state may have changed at `now`: one row is written once the instant is over."""
        if self._states_file is not None:
            self._states_dirty_at = now

    # -- outputs -------------------------------------------------------------------------------------------

    def _write_states(self) -> None:
        """The machine_states.csv row of the instant that just ended, if its counts changed."""
        assert self._states_dirty_at is not None and self._states_file is not None
        by_state = self.tracker.by_state
        counts = (
            f"{len(by_state[NodeState.SLEEPING])},{len(by_state[NodeState.SWITCHING_ON])},"
            f"{len(by_state[NodeState.SWITCHING_OFF])},{len(by_state[NodeState.IDLE])},"
            f"{len(by_state[NodeState.COMPUTING])}"
        )
        if counts != self._written_counts:
            self._states_file.write(f"{fmt(self._states_dirty_at)},{counts}\n")
            self._written_counts = counts
        self._states_dirty_at = None

    def _entry(self, now: float, kind: str) -> None:
        if self._energy_file is None:
            return
        last_time, last_energy = self._last_entry
        energy = self.energy
        epower = repr((energy - last_energy) / (now - last_time)) if now > last_time else "NA"
        self._energy_file.write(
            f"{now!r},{energy!r},{kind},{self._wattmin_text},{epower}\n".replace(".0,", ",").replace(".0\n", "\n")
        )
        self._last_entry = (now, energy)

    def summary(self) -> EnergySummary:
        first = self._first_submit_energy or 0.0
        seconds = self.tracker.seconds_in
        end = self._last
        return EnergySummary(
            consumed_joules=max(0.0, self._last_end_energy - first),
            time_computing=seconds(NodeState.COMPUTING, end),
            time_idle=seconds(NodeState.IDLE, end),
            time_sleeping=seconds(NodeState.SLEEPING, end),
            time_switching_on=seconds(NodeState.SWITCHING_ON, end),
            time_switching_off=seconds(NodeState.SWITCHING_OFF, end),
            nb_machine_switches=self.nb_machine_switches,
            nb_grouped_switches=self.nb_grouped_switches,
        )

    def close(self, now: float) -> None:
        """Integrate up to the end of the run and close the files."""
        self.advance(now)
        if self._states_dirty_at is not None and self._states_file is not None:
            self._write_states()
        for f in (self._states_file, self._energy_file):
            if f is not None:
                f.close()
        self._states_file = self._energy_file = None
