"""batsched's `sleeper` (src/algo/sleeper.cpp): at most one job runs, on the lowest available machines; every
machine it does not use is put to sleep, and sleeping machines are woken when the first queued job needs them."""

from __future__ import annotations

from typing import Any

from batsched_variants import Batsched
from clustersim.intervals import IntervalSet


class Sleeper(Batsched):
    """`available` (batsched_variants.Batsched) holds the machines that are on and free."""

    def __init__(self, options: dict[str, Any]):
        super().__init__()
        self.compute_pstate = int(options["pstate_compute"])
        self.sleep_pstate = int(options["pstate_sleep"])
        self.sleeping = IntervalSet()
        self.switching_on = IntervalSet()
        self.switching_off = IntervalSet()
        self.pstate_changed: dict[int, IntervalSet] = {}

    def answer(self, message: dict[str, Any]) -> dict[str, Any]:
        """batsched's loop, plus the machines whose power state changed (RESOURCE_STATE_CHANGED)."""
        self.pstate_changed = {}
        for event in message["events"]:
            if event["type"] == "RESOURCE_STATE_CHANGED":
                pstate, machines = int(event["data"]["state"]), IntervalSet.parse(event["data"]["resources"])
                self.pstate_changed[pstate] = self.pstate_changed.get(pstate, IntervalSet()) | machines
        return super().answer(message)

    def _sleep_available(self, now: float) -> None:
        if self.available:
            self.add("SET_RESOURCE_STATE", now, resources=str(self.available), state=str(self.sleep_pstate))
            self.switching_off = self.switching_off | self.available
            self.available = IntervalSet()

    def make_decisions(self, now: float) -> None:
        assert len(self.ended) <= 1, "batsched's sleeper handles one job end per message"
        for pstate in sorted(self.pstate_changed):  # batsched keeps them in a map ordered by power state
            machines = self.pstate_changed[pstate]
            if pstate == self.compute_pstate:
                self.switching_on = self.switching_on - machines
                self.available = self.available | machines
            else:
                assert pstate == self.sleep_pstate
                self.switching_off = self.switching_off - machines
                self.sleeping = self.sleeping | machines
        if not self.queue or self.allocations:
            self._sleep_available(now)
            return
        key, res = self.queue[0]
        if len(self.available) >= res:
            self.execute(key, self.available.lowest(res), now)
            self.queue.pop(0)
            self._sleep_available(now)
            return
        missing = res - len(self.available) - len(self.switching_on)
        count = min(len(self.sleeping), missing)
        if count > 0:
            waking = self.sleeping.lowest(count)
            self.add("SET_RESOURCE_STATE", now, resources=str(waking), state=str(self.compute_pstate))
            self.sleeping = self.sleeping - waking
            self.switching_on = self.switching_on | waking
