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

from clustersim.energy.model import PowerModel
from clustersim.errors import InputError
from clustersim.intervals import IntervalSet
from clustersim.nodes import NodeState, NodeTracker
from clustersim.platform.model import Platform
from clustersim.records.numbers import fmt

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
        self.energy = 0.0
        self._last = 0.0
        self._time_in = dict.fromkeys(NodeState, 0.0)
        self.nb_machine_switches = 0
        self.nb_grouped_switches = 0
        self._first_submit_energy: float | None = None
        self._last_end_energy = 0.0
        self._states_file: TextIO | None = None
        self._energy_file: TextIO | None = None
        self._row: tuple[float, str] | None = None
        self._written_counts = ""
        self._last_entry = (0.0, 0.0)
        if output_dir is not None:
            self._states_file = open(output_dir / f"{prefix}machine_states.csv", "w", encoding="utf-8")  # noqa: SIM115
            self._states_file.write(MACHINE_STATES_COLUMNS + "\n")
            self._energy_file = open(output_dir / f"{prefix}consumed_energy.csv", "w", encoding="utf-8")  # noqa: SIM115
            self._energy_file.write(CONSUMED_ENERGY_COLUMNS + "\n")
            self._note_states(0.0)

    # -- integration ---------------------------------------------------------------------------------------

    def advance(self, now: float) -> None:
        """Integrate power and state times up to `now` (power is constant since the last change)."""
        elapsed = now - self._last
        if elapsed > 0:
            self.energy += (self._static + self._dynamic_power) * elapsed
            tracker = self.tracker
            for state, total in self._time_in.items():
                self._time_in[state] = total + tracker.count(state) * elapsed
            self._last = now

    def _sum(self, sums: list[float], resources: IntervalSet) -> float:
        return sum(sums[hi + 1] - sums[lo] for lo, hi in resources.intervals)

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
        """Counts of machines per state may have changed at `now` (job start or end, power switch)."""
        if self._states_file is not None:
            self._note_states(now)

    # -- outputs -------------------------------------------------------------------------------------------

    def _note_states(self, now: float) -> None:
        t = self.tracker
        counts = (
            f"{t.count(NodeState.SLEEPING)},{t.count(NodeState.SWITCHING_ON)},{t.count(NodeState.SWITCHING_OFF)},"
            f"{t.count(NodeState.IDLE)},{t.count(NodeState.COMPUTING)}"
        )
        if self._row is not None and self._row[0] != now:
            self._flush_row()
        self._row = (now, counts)

    def _flush_row(self) -> None:
        if self._row is not None and self._states_file is not None and self._row[1] != self._written_counts:
            self._states_file.write(f"{fmt(self._row[0])},{self._row[1]}\n")
            self._written_counts = self._row[1]
        self._row = None

    def _entry(self, now: float, kind: str) -> None:
        if self._energy_file is None:
            return
        last_time, last_energy = self._last_entry
        epower = fmt((self.energy - last_energy) / (now - last_time)) if now > last_time else "NA"
        self._energy_file.write(f"{fmt(now)},{fmt(self.energy)},{kind},{fmt(self.wattmin)},{epower}\n")
        self._last_entry = (now, self.energy)

    def summary(self) -> EnergySummary:
        first = self._first_submit_energy or 0.0
        t = self._time_in
        return EnergySummary(
            consumed_joules=max(0.0, self._last_end_energy - first),
            time_computing=t[NodeState.COMPUTING],
            time_idle=t[NodeState.IDLE],
            time_sleeping=t[NodeState.SLEEPING],
            time_switching_on=t[NodeState.SWITCHING_ON],
            time_switching_off=t[NodeState.SWITCHING_OFF],
            nb_machine_switches=self.nb_machine_switches,
            nb_grouped_switches=self.nb_grouped_switches,
        )

    def close(self, now: float) -> None:
        """Integrate up to the end of the run and close the files."""
        self.advance(now)
        self._flush_row()
        for f in (self._states_file, self._energy_file):
            if f is not None:
                f.close()
        self._states_file = self._energy_file = None
