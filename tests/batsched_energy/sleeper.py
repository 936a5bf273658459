"""batsched's `sleeper` (src/algo/sleeper.cpp): at most one job runs, on the lowest available machines; every
machine it does not use is put to sleep, and sleeping machines are woken when the first queued job needs them."""

from __future__ import annotations

from typing import Any

from batsched_energy.framework import Batsched, left


class Sleeper(Batsched):
    def __init__(self, options: dict[str, Any]):
        super().__init__(options)
        self.compute_pstate = int(options["pstate_compute"])
        self.sleep_pstate = int(options["pstate_sleep"])
        self.available: set[int] = set()
        self.computing: set[int] = set()
        self.sleeping: set[int] = set()
        self.switching_on: set[int] = set()
        self.switching_off: set[int] = set()
        self.job_being_computed = ""

    def on_simulation_start(self, date: float) -> None:
        self.available = set(range(self.nb_machines))

    def _sleep_available(self) -> None:
        if self.available:
            self.set_state(self.available, self.sleep_pstate)
            self.switching_off |= self.available
            self.available = set()

    def make_decisions(self, date: float) -> None:
        assert len(self.ended) <= 1
        if self.ended:
            assert self.job_being_computed == self.ended[0]
            self.job_being_computed = ""
            self.available |= self.computing
            self.computing = set()
        for job_id in self.released:
            job = self.jobs[job_id]
            if job.nb_requested_resources > self.nb_machines:
                self.reject(job_id)
            else:
                self.append_to_queue(job)
        for pstate in sorted(self.pstate_changed):
            machines = self.pstate_changed[pstate]
            if pstate == self.compute_pstate:
                self.switching_on -= machines
                self.available |= machines
            else:
                assert pstate == self.sleep_pstate
                self.switching_off -= machines
                self.sleeping |= machines
        self.sort_queue()

        if not self.queue or self.job_being_computed:
            self._sleep_available()
            return
        job = self.queue[0]
        if len(self.available) >= job.nb_requested_resources:
            alloc = left(self.available, job.nb_requested_resources)
            self.execute(job, alloc)
            self.available -= alloc
            self.computing |= alloc
            self._sleep_available()
            self.job_being_computed = job.id
            self.queue.pop(0)
            return
        future = len(self.available) + len(self.switching_on)
        if future < job.nb_requested_resources:
            count = min(len(self.sleeping), job.nb_requested_resources - future)
            if count > 0:
                waking = left(self.sleeping, count)
                self.set_state(waking, self.compute_pstate)
                self.sleeping -= waking
                self.switching_on |= waking
