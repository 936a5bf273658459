"""Batsim's machine_states.csv without energy: Batsim 4.2 writes it on every run (not only with `-E`), a row at
each job start and end with the number of machines idle and computing after it.

With energy, `EnergyMeter` writes the file (sleeping and switching machines too). Without, this trace does: it
buffers the rows of the current instant and writes them in the order Batsim's actors write them, by the message
count at which each happens (`Simulation._deliver_messages`): an executor writes its job's end row when its job
ends, before its message reaches the server (jobs_execution.cpp), a new executor its start row once the server
has received the EXECUTE_JOB; at one count, ends come first (the executors woken then run before the one the
server creates).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, TextIO

from clustersim.core.energy_meter import MACHINE_STATES_COLUMNS, MACHINE_STATES_ROW
from clustersim.intervals import IntervalSet
from clustersim.platform.model import Platform


class Timed(Protocol):
    """What orders a job's rows: the message count of its start (and so of its end) and its executor's rank."""

    offset: int
    born: int


class MachineStatesTrace:
    """Streams machine_states.csv for a run without energy (see the module docstring)."""

    def __init__(self, platform: Platform, path: Path):
        self._node = [platform.node_of(unit).id for unit in range(platform.nb_resources)]
        self._busy_units = [0] * len(platform.nodes)
        self._computing = 0
        self._nb_nodes = len(platform.nodes)
        self._now = 0.0
        self._changes: list[tuple[bool, IntervalSet, Timed]] = []
        self._file: TextIO = open(path, "w", encoding="utf-8")  # noqa: SIM115 (closed by close)
        self._file.write(MACHINE_STATES_COLUMNS + "\n")

    def started(self, now: float, resources: IntervalSet, timing: Timed) -> None:
        self._add(now, True, resources, timing)

    def ended(self, now: float, resources: IntervalSet, timing: Timed) -> None:
        self._add(now, False, resources, timing)

    def close(self) -> None:
        self._flush()
        self._file.close()

    def _add(self, now: float, start: bool, resources: IntervalSet, timing: Timed) -> None:
        if now != self._now:
            self._flush()
            self._now = now
        self._changes.append((start, resources, timing))

    def _flush(self) -> None:
        """Write the instant's rows, ordered by message count (read now: a start's count is known once its
        decision reached the server), ends before starts at one count, then by executor rank."""
        changes = sorted(self._changes, key=lambda c: (c[2].offset, c[0], c[2].born))
        self._changes = []
        rows = []
        for start, resources, _ in changes:
            for lo, hi in resources.intervals:
                for unit in range(lo, hi + 1):
                    node = self._node[unit]
                    before = self._busy_units[node]
                    self._busy_units[node] = before + (1 if start else -1)
                    if start and before == 0:
                        self._computing += 1
                    elif not start and before == 1:
                        self._computing -= 1
            rows.append(MACHINE_STATES_ROW % (self._now, 0, 0, 0, self._nb_nodes - self._computing, self._computing))
        self._file.write("".join(rows))
