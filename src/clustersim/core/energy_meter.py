"""Exact energy accounting: the integral of every node's power between events, per node state and per job.

Power is piecewise constant between events, so the integral is exact: total power is the sum over nodes of
their state's base power (idle watts when on, sleep watts, transition watts) plus, for each busy unit, its
share of its node's dynamic power ((full - idle) / units of the node). Both sums change by O(1) per node state
change and by a prefix-sum lookup per allocation interval, so accounting costs O(1) per event.

A job is charged its share of its nodes' consumption while it runs: per unit, full watts / units of the node
(a whole host's full-load power on a per-host platform, as Batsim charges it). A job that does not compute (a
`delay` profile: it only waits) leaves its nodes at idle power, and is charged idle watts / units of the node,
as Batsim does (SimGrid sees no computation on its hosts).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TextIO

from clustersim.core.nodes import NodeState, NodeTracker
from clustersim.errors import InputError
from clustersim.intervals import IntervalSet
from clustersim.platform.model import Platform
from clustersim.platform.power_model import PowerModel

MACHINE_STATES_COLUMNS = "time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing"
CONSUMED_ENERGY_COLUMNS = "time,energy,event_type,wattmin,epower"
PSTATE_CHANGES_COLUMNS = "time,machine_id,new_pstate"
SWITCHING_ON_PSTATE, SWITCHING_OFF_PSTATE = -1, -2
"""What Batsim's pstate_changes.csv writes for machines in transition to a computing or a sleep power state."""
MACHINE_STATES_ROW = "%g,%d,%d,%d,%d,%d\n"
CONSUMED_ENERGY_ROW = "%g,%g,%s,%g,%g\n"
CONSUMED_ENERGY_ROW_NA = "%g,%g,%s,%g,NA\n"
"""The rows of Batsim's trace files (`%g`: 6 significant digits, as Batsim writes them)."""
ROWS_PER_WRITE = 4096
"""Rows are kept as their text and written together, this many at a time (a few per job). Each row is built from
texts only, by concatenation (compiled, one allocation and copies): every number already written (`_g`) and kept
written while it repeats from row to row (an instant's rows share its time, both files too, and its energy;
`wattmin` changes only when machines switch), the counts of machines as the text of a small int kept once."""


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
    """What schedule.csv reports about energy and machine states (machine-seconds of the periods in each state
    that ended, as Batsim counts them)."""

    consumed_joules: float
    time_computing: float
    time_idle: float
    time_sleeping: float
    time_switching_on: float
    time_switching_off: float
    nb_machine_switches: int
    nb_grouped_switches: int


class EnergyMeter:
    """Integrates power exactly; optionally streams Batsim's machine_states.csv, consumed_energy.csv and
    pstate_changes.csv, row for row as Batsim 4.2 writes them (see docs/energy.md)."""

    def __init__(self, platform: Platform, tracker: NodeTracker, output_dir: Path | None = None, prefix: str = ""):
        self.models = power_models(platform)
        self.tracker = tracker
        self._pstate = [model.compute_pstate for model in self.models]
        """Each node's computation power state (DVFS changes it; a sleeping node wakes up in it)."""
        self._watts = [(model.idle_watts, model.full_watts) for model in self.models]
        """Each node's (idle, full) watts in its computation power state."""
        self._dvfs: dict[int, list[tuple[float, float, float]]] = {}
        """Node -> its computation state changes (time, change of full watts, of idle watts), per unit."""
        self._prefix_sums()
        self._static = sum((m.idle_watts for m in self.models), 0.0)
        self._dynamic_power = 0.0
        self.energy = 0.0
        self._last = 0.0
        self.nb_machine_switches = 0
        self.nb_grouped_switches = 0
        self._first_submit_energy: float | None = None
        self._last_end_energy = 0.0
        self._states_file: TextIO | None = None
        self._energy_file: TextIO | None = None
        self._pstates_file: TextIO | None = None
        self._state_rows: list[str] = []
        """machine_states.csv rows not yet written (MACHINE_STATES_ROW's text)."""
        self._energy_rows: list[str] = []
        """consumed_energy.csv rows not yet written (CONSUMED_ENERGY_ROW's or CONSUMED_ENERGY_ROW_NA's text)."""
        self._counts = [str(count) for count in range(len(self.models) + 1)]
        """The text of each count of machines a row can have (`str(count)` is `%d`'s text), by count."""
        self._all_on: list[str | None] = [None] * (len(self.models) + 1)
        """The text of a machine_states.csv row after its time when no machine sleeps or switches, by the number
        computing (the rest are idle): made the first time a row has it."""
        self._last_row_time = 0.0
        self._last_row_energy = 0.0
        self._time, self._energy, self._wattmin, self._epower = _Text(), _Text(), _Text(), _Text()
        """The last time, energy, `wattmin` and `epower` written, with their text."""
        self._tails: dict[str, str] = {}
        self._tail_watts = self._tail_epower = ""
        """consumed_energy.csv's row texts after the energy, by kind of row, and the texts they were made of."""
        self.moment: int | None = None
        """Which inter-actor message of the current instant the next row is written at, when the core counts
        them (Batsim's delivery): Batsim writes NA as the mean power of a row written at the same SimGrid time as
        the previous one."""
        self._last_moment: int | None = None
        self.ahead = 0.0
        """Watts that switching actors set before their machines change state (Batsim's pstate.cpp sets the power
        state one scheduling turn before the state): counted in `wattmin` meanwhile."""
        self.reader: Callable[[float], tuple[float, float | None, float]] | None = None
        """With the simgrid model and Batsim's actors: reads a consumed_energy.csv row's (energy, epower or None for
        NA, wattmin) from SimGrid's energy plugin, in the actor that writes the row, as Batsim does
        (`EnergyPlugin.reading`); the meter's own integral still gives the jobs' energy and the totals."""
        self.job_energy: Callable[[IntervalSet], float] | None = None
        """With `reader`: a job's energy as Batsim computes it, read from SimGrid's energy plugin when the job ends
        (its machines' energy then minus at its start; negative when not known), after its machine_states.csv row
        and before its consumed_energy.csv row, where Batsim reads it."""
        self.total: Callable[[], float] | None = None
        """With `reader`: the platform's energy since t=0 as SimGrid's energy plugin gives it (an energy QUERY's
        answer, as Batsim's)."""
        self.reading: tuple[float, float | None, float] | None = None
        """A reading taken just before the row it is for, when the row must follow changes made after the reading
        (a job's executor reads the energy, then moves its machines, then writes its start row)."""
        self.set_power_states: Callable[[Sequence[int], int], None] | None = None
        """With `reader`: gives nodes their new computation power state in SimGrid before the row after a change
        (Batsim's server sets the hosts' power states, then writes that row)."""
        self.hold_states = False
        self.held = False
        """While `hold_states`, a change of the counts of machines per state writes no row but sets `held`: Batsim's
        server writes a switch request's machine_states.csv row once it started every switching actor."""
        self._reached: int | None = None
        self._last_reached = 0
        self._moment_joules = 0.0
        self._last_moment_joules = 0.0
        """The furthest message of the instant the core counted, the power integrated over the instant's messages
        up to it (watts times messages), and both at the last row."""
        if output_dir is not None:
            def trace(name: str, columns: str) -> TextIO:
                f = open(output_dir / f"{prefix}{name}", "w", encoding="utf-8")  # noqa: SIM115
                f.write(columns + "\n")
                return f

            self._states_file = trace("machine_states.csv", MACHINE_STATES_COLUMNS)
            self._energy_file = trace("consumed_energy.csv", CONSUMED_ENERGY_COLUMNS)
            self._pstates_file = trace("pstate_changes.csv", PSTATE_CHANGES_COLUMNS)
            self._pstate_rows(0.0, range(len(self.models)), self._compute_pstate)

    def _prefix_sums(self) -> None:
        """Per-unit watts (full, idle, dynamic) as prefix sums, so an allocation's sum costs one lookup."""
        unit_full, unit_idle, unit_dynamic = [], [], []
        for node, (idle, full) in enumerate(self._watts):
            units = self.tracker.nb_units[node]
            unit_full += [full / units] * units
            unit_idle += [idle / units] * units
            unit_dynamic += [(full - idle) / units] * units
        self._full = _prefix(unit_full)
        self._idle = _prefix(unit_idle)
        self._dynamic = _prefix(unit_dynamic)

    # -- integration ---------------------------------------------------------------------------------------

    def advance(self, now: float) -> None:
        """Integrate power and state times up to `now` (power is constant since the last change)."""
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
        return sum((sums[hi + 1] - sums[lo] for lo, hi in intervals), 0.0)

    # The core calls `advance(now)` once per instant, before it changes anything: the methods below record
    # changes at the current instant.

    def job_submitted(self, now: float) -> None:
        if self._first_submit_energy is None:
            self._first_submit_energy = self.energy

    def job_started(self, now: float, resources: IntervalSet, computes: bool = True) -> None:
        """A job starts (the tracker already moved its nodes); one that `computes` loads its units to full power (a
        delay job leaves them idle)."""
        self._entry(now, "s")
        if computes:
            self._dynamic_power += self._sum(self._dynamic, resources)
        if self._states_file is not None:
            self._state_row(now)

    def job_ended(self, now: float, start: float, resources: IntervalSet, computes: bool = True) -> float:
        """Account for a job's end (the tracker already moved its nodes); returns the energy it consumed."""
        self._last_end_energy = self.energy
        if self._states_file is not None:  # (Batsim frees the machines, writes their row, then reads the energy)
            self._state_row(now)
        job_energy = self.job_energy
        measured = job_energy(resources) if job_energy is not None else -1.0
        self._entry(now, "e")
        if computes:
            self._dynamic_power -= self._sum(self._dynamic, resources)
            if abs(self._dynamic_power) < 1e-9:
                self._dynamic_power = 0.0  # no busy unit left: drop floating-point residue
        if measured >= 0:
            return measured
        energy = (now - start) * self._sum(self._full if computes else self._idle, resources)
        if self._dvfs:
            energy -= self._dvfs_correction(start, resources, computes)
        return energy

    def _dvfs_correction(self, start: float, resources: IntervalSet, computes: bool) -> float:
        """What a job charged at its nodes' current watts since `start` was not charged: before each later change
        of computation state, its nodes drew the watts of the earlier one."""
        correction = 0.0
        for node, units in self.tracker.split(resources):
            for time, full_change, idle_change in reversed(self._dvfs.get(node, ())):
                if time <= start:
                    break
                correction += units * (full_change if computes else idle_change) * (time - start)
        return correction

    def pstate_changed(self, now: float, nodes: Sequence[int], pstate: int, computing_units: Sequence[int]) -> None:
        """Nodes that are on switch to another computation power state now (DVFS, as Batsim's SET_RESOURCE_STATE):
        their idle and full watts become that state's. `computing_units` are each node's units running a job
        that computes. Counted and traced as Batsim does: one grouped switch, a switch per machine, a
        consumed_energy row before and after, pstate_changes rows in transition (-1) then in the new state."""
        self.nb_grouped_switches += 1
        self.nb_machine_switches += len(nodes)
        self._entry(now, "p")
        self._pstate_rows(now, nodes, lambda node: SWITCHING_ON_PSTATE)
        for node, busy in zip(nodes, computing_units, strict=True):
            old_idle, old_full = self._watts[node]
            idle, full = self._set_pstate(node, pstate)
            units = self.tracker.nb_units[node]
            self._static += idle - old_idle
            self._dynamic_power += busy / units * (full - idle - (old_full - old_idle))
            self._dvfs.setdefault(node, []).append((now, (full - old_full) / units, (idle - old_idle) / units))
        self._prefix_sums()
        if self.set_power_states is not None:
            self.set_power_states(nodes, pstate)
        self._entry(now, "p")
        self._pstate_rows(now, nodes, lambda node: pstate)
        self.states_changed(now)

    def _set_pstate(self, node: int, pstate: int) -> tuple[float, float]:
        """A node's computation power state and (idle, full) watts become those of `pstate`."""
        state = self.models[node].computation(pstate)
        assert state is not None, "the core checked that the node computes in this power state"
        self._watts[node] = (state.idle_watts, state.full_watts)
        self._pstate[node] = pstate
        return self._watts[node]

    def waking_into(self, nodes: Sequence[int], pstate: int) -> None:
        """Nodes ending their switch-on transition wake into this computation power state (before
        `switches_done`): no job runs there, so only their idle watts change, from when they are on."""
        for node in nodes:
            self._set_pstate(node, pstate)
        self._prefix_sums()

    def _base_watts(self, node: int, state: NodeState) -> float:
        model = self.models[node]
        if state in (NodeState.IDLE, NodeState.COMPUTING):
            return self._watts[node][0]
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

    def switches_requested(self, now: float, nodes: Sequence[int], on: bool) -> None:
        """A switch decision is about to move `nodes` into a transition (Batsim traces it before the change)."""
        self.nb_grouped_switches += 1
        self._entry(now, "p")
        transition = SWITCHING_ON_PSTATE if on else SWITCHING_OFF_PSTATE
        self._pstate_rows(now, nodes, lambda node: transition)

    def switches_done(self, now: float, nodes: Sequence[int], on: bool, moved: bool = False) -> None:
        """`nodes` end their transition together; called before they move, or once they `moved` (Batsim's row has
        the power before and, since it sets the new power state first, the minimum power after)."""
        after = self._static + (0.0 if moved else self.switch_watts(nodes, on))
        self._entry(now, "p", after)
        self._pstate_rows(now, nodes, self._compute_pstate if on else self._sleep_pstate)

    def switch_watts(self, nodes: Sequence[int], on: bool) -> float:
        """How the platform's power changes when `nodes` end their transition (on: idle, else asleep)."""
        old, new = (NodeState.SWITCHING_ON, NodeState.IDLE) if on else (NodeState.SWITCHING_OFF, NodeState.SLEEPING)
        return sum((self._base_watts(n, new) - self._base_watts(n, old) for n in nodes), 0.0)

    def _compute_pstate(self, node: int) -> int:
        return self._pstate[node]

    def _sleep_pstate(self, node: int) -> int:
        sleep = self.models[node].sleep
        assert sleep is not None, "only nodes that can sleep are switched"
        return sleep.pstate

    def states_changed(self, now: float) -> None:
        """The counts of machines per state changed: Batsim writes a machine_states.csv row at each change, even
        several at one instant."""
        if self._states_file is not None:
            if self.hold_states:
                self.held = True
                return
            self._state_row(now)

    def _state_row(self, now: float) -> None:
        assert self._states_file is not None
        computing, idle, sleeping, switching_on, switching_off = self.tracker.nodes_in  # NodeState's order
        rows = self._state_rows
        if sleeping == 0 and switching_on == 0 and switching_off == 0:  # every machine on: the counts' text by
            rest = self._all_on[computing]  # the number computing, made once
            if rest is None:
                rest = self._all_on[computing] = f",0,0,0,{idle},{computing}\n"
            rows.append(self._time.of(now) + rest)
        else:
            counts = self._counts
            rows.append(f"{self._time.of(now)},{counts[sleeping]},{counts[switching_on]},{counts[switching_off]},"
                        f"{counts[idle]},{counts[computing]}\n")
        if len(rows) == ROWS_PER_WRITE:
            _write_rows(self._states_file, rows)

    # -- outputs -------------------------------------------------------------------------------------------

    def _entry(self, now: float, kind: str, wattmin: float | None = None) -> None:
        """A consumed_energy.csv row, written before the event changes the power: `epower` is the mean power since
        the previous row, and at the same instant the power until now (Batsim divides by the few nanoseconds
        SimGrid's messages take, which gives the same); `wattmin` the platform's power with every machine idle
        or in its current sleep or transition state (after the event when given)."""
        if self._energy_file is None:
            return
        if self.reader is not None:
            self._read_entry(now, kind)
            return
        last_time = self._last_row_time
        energy = self.energy
        moment = self.moment
        reached = self._reached
        if now > last_time:
            epower = (energy - self._last_row_energy) / (now - last_time)
        elif reached is not None and reached > self._last_reached and moment != self._last_moment:
            epower = (self._moment_joules - self._last_moment_joules) / (reached - self._last_reached)
        else:
            epower = self._static + self._dynamic_power
        watts = self._wattmin.of(self._static + self.ahead if wattmin is None else wattmin)
        rows = self._energy_rows
        if moment is not None and now == last_time and moment == self._last_moment:
            tail = self._tail(kind, watts, "NA")
        else:
            tail = self._tail(kind, watts, self._epower.of(epower))
        rows.append(f"{self._time.of(now)},{self._energy.of(energy)}{tail}")
        if len(rows) == ROWS_PER_WRITE:
            _write_rows(self._energy_file, rows)
        self._last_row_time = now
        self._last_row_energy = energy
        self._last_moment = moment
        self._last_moment_joules = self._moment_joules
        self._last_reached = reached or 0

    def _tail(self, kind: str, watts: str, epower: str) -> str:
        """A consumed_energy.csv row's text after its energy, kept by kind while its `wattmin` and `epower` have the
        same texts (as long as no machine switches and no job computes, every row of a kind has the same)."""
        if watts is not self._tail_watts or epower is not self._tail_epower:
            self._tails.clear()
            self._tail_watts, self._tail_epower = watts, epower
        tail = self._tails.get(kind)
        if tail is None:
            tail = self._tails[kind] = f",{kind},{watts},{epower}\n"
        return tail

    def _read_entry(self, now: float, kind: str) -> None:
        """A consumed_energy.csv row whose values SimGrid's energy plugin gives (`reader`)."""
        assert self.reader is not None
        reading = self.reading if self.reading is not None else self.reader(now)
        self.reading = None
        energy, epower, wattmin = reading
        row = f"{self._time.of(now)},{self._energy.of(energy)},{kind},{self._wattmin.of(wattmin)}"
        rows = self._energy_rows
        rows.append(f"{row},NA\n" if epower is None else f"{row},{self._epower.of(epower)}\n")
        if len(rows) == ROWS_PER_WRITE:
            assert self._energy_file is not None
            _write_rows(self._energy_file, rows)

    def at_moment(self, moment: int | None) -> None:
        """The core's count of messages moves on to `moment` (None: it stops counting, the instant is over). The
        power until now held during the messages since the furthest count reached: what Batsim's `epower`
        averages between two rows of one instant, over the nanoseconds those messages take."""
        reached = self._reached
        if moment is None:
            self._reached = None
        elif reached is None:
            self._reached, self._moment_joules = moment, 0.0
        elif moment > reached:
            self._moment_joules += (self._static + self._dynamic_power) * (moment - reached)
            self._reached = moment
        self.moment = moment

    def _pstate_rows(self, now: float, nodes: Iterable[int], pstate: Callable[[int], int]) -> None:
        """pstate_changes.csv: one row per new power state, naming its machines as an interval set."""
        if self._pstates_file is None:
            return
        by_pstate: dict[int, list[int]] = {}
        for node in nodes:
            by_pstate.setdefault(pstate(node), []).append(node)
        for value, members in by_pstate.items():
            self._pstates_file.write(f"{now:g},{IntervalSet.from_ids(members)},{value}\n")

    def summary(self) -> EnergySummary:
        first = self._first_submit_energy or 0.0
        seconds = self.tracker.seconds_in
        return EnergySummary(
            consumed_joules=max(0.0, self._last_end_energy - first),
            time_computing=seconds(NodeState.COMPUTING),
            time_idle=seconds(NodeState.IDLE),
            time_sleeping=seconds(NodeState.SLEEPING),
            time_switching_on=seconds(NodeState.SWITCHING_ON),
            time_switching_off=seconds(NodeState.SWITCHING_OFF),
            nb_machine_switches=self.nb_machine_switches,
            nb_grouped_switches=self.nb_grouped_switches,
        )

    def close(self, now: float) -> None:
        """Integrate up to the end of the run and close the files."""
        self.advance(now)
        if self._states_file is not None:
            _write_rows(self._states_file, self._state_rows)
        if self._energy_file is not None:
            _write_rows(self._energy_file, self._energy_rows)
        for f in (self._states_file, self._energy_file, self._pstates_file):
            if f is not None:
                f.close()
        self._states_file = self._energy_file = self._pstates_file = None


class _Text:
    """A number's text in the rows (`_g`), kept while the numbers that follow have the same text: the number itself,
    and for a whole number `%g` writes with an exponent, every number it rounds to the same six digits (an energy or
    a late time often moves less than its last digit from one row to the next)."""

    __slots__ = ("high", "low", "text")

    def __init__(self) -> None:
        self.low = self.high = float("nan")  # (holds no number)
        self.text = ""

    def of(self, value: float) -> str:
        if self.low <= value <= self.high:
            return self.text
        self.text, self.low, self.high = _g_span(value)
        return self.text


_POWERS_OF_TEN: Final[list[int]] = [10**exponent for exponent in range(19)]
"""(Typed: `10**exponent` is `Any` to mypy, and compiled every operation on an `Any` is a generic call.)"""
_EXPONENTS: Final[list[str]] = [f"e+{exponent:02d}" for exponent in range(19)]
"""`%g`'s exponent texts of the whole numbers `_g` writes itself (from 1e6 to below 1e18)."""
_EXACT: Final = 2**53
"""Whole floats up to here are their ints exactly, and so are the ends of the ranges `_g_span` gives."""
_FIRST: Final[list[str]] = [str(digit) for digit in range(10)]
_POINT: Final[list[str]] = [f"{digit}." for digit in range(10)]
_THREE: Final[list[str]] = [f"{digits:03d}" for digits in range(1000)]
_THREE_LAST: Final[list[str]] = [f"{digits:03d}".rstrip("0") for digits in range(1000)]
_TWO_LAST: Final[list[str]] = [f"{digits:02d}".rstrip("0") for digits in range(100)]
"""A six-digit mantissa's texts, from tables: its first digit (with the point), the next three digits, the last two
(the last of these without their trailing zeros, as `%g` drops them)."""


def _g(value: float) -> str:
    """`"%g" % value`, as Batsim writes numbers (see `_g_span`)."""
    return _g_span(value)[0]


def _g_span(value: float) -> tuple[str, float, float]:
    """`"%g" % value`, and the numbers from low to high that `%g` writes with the same text. For a fraction of its cost
    when the number is whole (every time and energy of an SWF trace): from 1 to 999,999 as its int's digits (six
    significant digits hold it whole), up to 1e18 as `%g` writes it, rounded to six significant digits with ties to
    even in int arithmetic, which is exact (the float is the int) as `%g`'s rounding of the exact value is; every
    number within half a unit of the last digit kept rounds to the same digits (at a tie, only to even digits).
    Other numbers go through `%g` itself, and stand for themselves only."""
    if 1.0 <= value < 1e18:
        whole = int(value)
        if whole == value:
            if whole < 1_000_000:
                return str(whole), value, value
            exponent = 6
            while whole >= _POWERS_OF_TEN[exponent + 1]:
                exponent += 1
            unit = _POWERS_OF_TEN[exponent - 5]
            digits = whole // unit
            rest = 2 * (whole - digits * unit)
            low = high = whole
            if rest > unit or (rest == unit and digits % 2 == 1):
                digits += 1
            if digits == 1_000_000:  # rounded up to the next power of ten
                digits, exponent = 100_000, exponent + 1
            else:
                half, odd = unit // 2, digits % 2  # (unit is 10 or more: half is whole)
                center = digits * unit
                if center + half < _EXACT:
                    low, high = max(center - half + odd, _POWERS_OF_TEN[exponent]), center + half - odd
            first = digits // 100_000
            tail = digits - first * 100_000
            if tail == 0:
                text = _FIRST[first] + _EXPONENTS[exponent]
            else:
                three = tail // 100
                two = tail - three * 100
                if two == 0:
                    text = f"{_POINT[first]}{_THREE_LAST[three]}{_EXPONENTS[exponent]}"
                else:
                    text = f"{_POINT[first]}{_THREE[three]}{_TWO_LAST[two]}{_EXPONENTS[exponent]}"
            return text, float(low), float(high)
    return "%g" % value, value, value  # noqa: UP031 (the conversion Batsim's rows make)


def _write_rows(file: TextIO, rows: list[str]) -> None:
    """Write the rows kept, then forget them."""
    file.write("".join(rows))
    rows.clear()
