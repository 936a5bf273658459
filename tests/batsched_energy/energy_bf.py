"""batsched's `energy_bf` (src/algo/energy_bf.cpp) and `energy_bf_dicho` (src/algo/energy_bf_dicho.cpp), decision
for decision, on the project's time-slice plan (clustersim.policies.batch.timeslices, batsched's `Schedule`).

energy_bf plans machine power states as fake one-machine jobs in the same plan as the real jobs:
`fakejob_soff_<m>` (switching off, time_switch_off + rjms_delay), `fakejob_esleep_<m>` (a sleep long enough to pay
for the switches; 0 s with the corpus's bounds), `fakejob_psleep_<m>` (asleep until the end of time) and
`fakejob_son_<m>` (switching on, time_switch_on + rjms_delay). At each message it copies the plan, places the
queued jobs by first fit (waking the fewest sleeping machines, as late as possible, for a job that cannot fit
otherwise), puts every awake machine to sleep once it has nothing more to do, and applies what the copy's first
slice holds: the jobs to start, the machines to switch.
"""

from __future__ import annotations

import bisect
import copy
import math
from typing import Any

from batsched_variants import Batsched
from clustersim.intervals import IntervalSet
from clustersim.policies.batch.timeslices import Placement, Planned, TimeSlices

SWITCH_ON, SWITCH_OFF = "fakejob_son_", "fakejob_soff_"
ENSURED_SLEEP, POTENTIAL_SLEEP = "fakejob_esleep_", "fakejob_psleep_"
RJMS_DELAY = 5.0
"""batsched's default --rjms_delay, added to every walltime of the plan (the fake jobs' too)."""
_BLOCKER = "~before"


def _machine(key: str) -> int:
    return int(key.rsplit("_", 1)[1])


def _bits(mask: int) -> list[int]:
    return list(IntervalSet.from_mask(mask))


class EnergySchedule(TimeSlices):
    """The time-slice plan with what energy_bf asks of batsched's `Schedule` besides first fit: copies, the jobs of
    a slice, jobs put at a given instant on given machines, first fit after an instant, and the first slice moved
    forward dropping the slices (and the sleep jobs) that are over. It works on TimeSlices' own lists and its
    private `_jobs` (each a `Planned`: start, end, hosts, count, first, freed regions seen), `_edges` and `_take`: a
    change there shows in the energy tests. It places every job by the full search (`prune` off): its own steps
    (jobs dropped with their slices, jobs put on given machines) are outside what the skip of TimeSlices.replace is
    proved for. A copy shares the `Planned` entries: a place is never changed in place (a job placed again, or
    turned into a job of the first slice, gets a new entry), only `seen`, which no search reads with `prune` off."""

    def __init__(self, now: float, hosts: IntervalSet):
        super().__init__(now, hosts)
        self.prune = False
        self.everything = hosts.mask

    def copy(self) -> EnergySchedule:
        """An independent plan (batsched copies its `Schedule` by value): every list and dict is copied."""
        other = copy.copy(self)
        for name in (*TimeSlices.__slots__, *vars(self)):
            value = getattr(other, name)
            if isinstance(value, list | dict):
                setattr(other, name, type(value)(value))
        return other

    def has_real_job(self) -> bool:
        """Whether a job of the workload (not a power-state job) is planned (batsched's contains_any_nonfake_job)."""
        return any(not key.startswith("fakejob_") for key in self._jobs)

    def jobs_at(self, s: int) -> dict[str, int]:
        """The jobs planned in slice `s` and their machines (a mask), by job id (batsched's map order)."""
        begin = self.begins[s]
        return {key: job.hosts for key, job in sorted(self._jobs.items())
                if (job.first or job.start <= begin) and job.end > begin}

    def free_during(self, begin: float, end: float) -> IntervalSet:
        """The machines free all along [begin, end) (batsched's available_machines_during_period)."""
        mask = self.everything
        for s, start in enumerate(self.begins):
            if start < end and self.end_of(s) > begin:
                mask &= self.free[s]
        return IntervalSet.from_mask(mask)

    def end_of(self, s: int) -> float:
        return self.begins[s + 1] if s + 1 < len(self.begins) else math.inf

    def job_start(self, key: str) -> float:
        """When the job's (last, here only) occurrence begins, within the plan."""
        return max(self._jobs[key].start, self.begins[0])

    def put(self, key: str, start: float, end: float, hosts: int) -> None:
        """Plan `key` on `hosts` from `start` to `end` (batsched: a first fit that the caller knows lands there)."""
        begins = self.begins
        i = max(0, bisect.bisect_right(begins, start) - 1)
        if begins[i] < start:
            begins.insert(i + 1, start)
            self.free.insert(i + 1, self.free[i])
            self.counts.insert(i + 1, self.counts[i])
            i += 1
        k = bisect.bisect_left(begins, end, lo=i + 1)
        self._take(key, i, k, start, end, hosts, hosts.bit_count())

    def add_after(self, key: str, nb_res: int, walltime: float, after: float) -> Placement | None:
        """First fit starting no earlier than `after` (batsched's `add_job_first_fit_after_time`): every machine is
        held until then while the job is placed. batsched keeps a slice boundary at `after` even when the job
        starts later; here it merges again, which changes no first fit (the slices on both sides hold the same
        jobs, so a start at the earlier one comes first)."""
        if after <= self.begins[0]:
            return self.add(key, nb_res, walltime)
        self.put(_BLOCKER, self.begins[0], after, self.everything)
        try:
            return self.add(key, nb_res, walltime)
        finally:
            self.remove(_BLOCKER)

    def advance(self, now: float) -> bool:
        """batsched's `update_first_slice_removing_remaining_jobs`: slices over by `now` go, with the jobs that
        ended in them; True if any went."""
        begins, jobs = self.begins, self._jobs
        ended = len(begins) > 1 and begins[1] <= now
        while len(begins) > 1 and begins[1] <= now:
            self._edges.pop(begins[1], None)
            del begins[0], self.free[0], self.counts[0]
        begins[0] = now
        if ended:
            for key, job in list(jobs.items()):
                if job.end <= now:
                    del jobs[key]
                elif not job.first and job.start <= now:
                    jobs[key] = Planned(job.start, job.end, job.hosts, job.nb_res, True, job.seen)
        return ended


class EnergyBackfilling(Batsched):
    """batsched's EnergyBackfilling: the plan `schedule` and what batsched knows of each machine's power state."""

    def __init__(self, options: dict[str, Any]):
        super().__init__(options)
        self.compute_pstate = int(options["pstate_compute"])
        self.sleep_pstate = int(options["pstate_sleep"])
        self.power = {state: float(options[f"power_{state}"]) for state in ("compute", "idle", "sleep")}
        time_on, time_off = float(options["time_switch_on"]), float(options["time_switch_off"])
        energy_on, energy_off = float(options["energy_switch_on"]), float(options["energy_switch_off"])
        self.switch_on_power, self.switch_off_power = energy_on / time_on, energy_off / time_off
        self.switch_on_walltime = time_on + RJMS_DELAY
        self.switch_off_walltime = time_off + RJMS_DELAY
        idle, sleep = self.power["idle"], self.power["sleep"]
        minimum = ((time_off + time_on + 2 * RJMS_DELAY) * idle - energy_off - energy_on) / (sleep - idle)
        self.ensured_sleep = min(max(minimum, float(options.get("ensured_sleep_time_lower_bound", 0))),
                                 float(options.get("ensured_sleep_time_upper_bound", 1e8)))
        self.schedule = EnergySchedule(0, IntervalSet())
        self.awake = self.asleep = self.switching_on = self.switching_off = IntervalSet()
        self.wakable = self.non_wakable = IntervalSet()
        self.walltimes: dict[str, float] = {}
        self.nb_jobs = self.nb_completed = self.nb_calls_pending = 0

    def on_event(self, now: float, kind: str, data: dict[str, Any]) -> None:
        """batsched's event loop: power-state changes and requested calls are handled as they are read, the rest
        in `make_decisions`."""
        if kind == "SIMULATION_BEGINS":
            machines = IntervalSet.range(0, int(data["nb_resources"]))
            self.schedule = EnergySchedule(now, machines)
            self.awake = machines
        elif kind == "JOB_SUBMITTED":
            self.walltimes[data["job_id"]] = float(data["job"]["walltime"]) + RJMS_DELAY
        elif kind == "RESOURCE_STATE_CHANGED":
            self.machine_state_changed(now, IntervalSet.parse(data["resources"]), int(data["state"]))
        elif kind == "REQUESTED_CALL":
            self.nb_calls_pending -= 1

    def machine_state_changed(self, now: float, machines: IntervalSet, pstate: int) -> None:
        schedule = self.schedule
        for m in machines:
            if pstate == self.compute_pstate:
                assert schedule.remove(f"{SWITCH_ON}{m}"), f"machine {m} switched on without a switch-on job"
                self.switching_on = self.switching_on - IntervalSet.from_ids([m])
                self.awake = self.awake | IntervalSet.from_ids([m])
            else:
                assert schedule.remove(f"{SWITCH_OFF}{m}"), f"machine {m} switched off without a switch-off job"
                self.switching_off = self.switching_off - IntervalSet.from_ids([m])
                self.asleep = self.asleep | IntervalSet.from_ids([m])
                if f"{ENSURED_SLEEP}{m}" in schedule:
                    self.non_wakable = self.non_wakable | IntervalSet.from_ids([m])
                else:
                    self.wakable = self.wakable | IntervalSet.from_ids([m])
        if pstate != self.compute_pstate:
            for m in machines:  # the sleep jobs start now rather than when the switch was planned to end
                schedule.remove(f"{ENSURED_SLEEP}{m}")
                assert schedule.remove(f"{POTENTIAL_SLEEP}{m}"), f"machine {m} switched off without a sleep job"
                self.sleep_without_switch(schedule, m, now)

    # batsched's make_decisions and the parts of EnergyBackfilling it calls

    def make_decisions(self, now: float) -> None:
        self.take_ended_and_released()
        self.update_first_slice(now)
        plan = self.schedule.copy()
        self.put_jobs_into(plan)
        self.sedate_at_the_furthest_moment(plan, self.awake)
        self.decisions_of(plan, now)

    def take_ended_and_released(self) -> None:
        for key in self.ended:
            self.nb_completed += 1
            assert self.schedule.remove(key), f"job {key} ended but is not in the plan"
        self.nb_jobs += len(self.released)
        self.nb_completed += sum(1 for _, res in self.released if res > self.nb_machines)

    def update_first_slice(self, now: float) -> None:
        """batsched's update_first_slice_taking_sleep_jobs_into_account (its checks left out)."""
        if self.schedule.advance(now):
            jobs = self.schedule.jobs_at(0)
            self.non_wakable = IntervalSet.from_mask(_union(jobs, ENSURED_SLEEP))
            self.wakable = IntervalSet.from_mask(_union(jobs, POTENTIAL_SLEEP))

    def put_jobs_into(self, plan: EnergySchedule) -> None:
        for key, res in self.queue:
            walltime = self.walltimes[key]
            if plan.add(key, res, walltime) is not None:
                continue
            last = len(plan.begins) - 1
            awakable = IntervalSet.from_mask(_union(plan.jobs_at(last), POTENTIAL_SLEEP))
            waking = awakable.lowest(res - plan.free[last].bit_count())
            when = self.earliest_moment_to_awaken(plan, waking.mask)
            for m in waking:
                self.awaken(plan, m, when)
            placed = plan.add_after(key, res, walltime, when)
            assert placed is not None and placed.mask & waking.mask, f"waking {waking} did not make {key} fit"

    def earliest_moment_to_awaken(self, plan: EnergySchedule, machines: int) -> float:
        s = len(plan.begins) - 1
        while True:
            if s > 0:
                s -= 1
            if _union(plan.jobs_at(s), POTENTIAL_SLEEP) & machines != machines:
                return plan.end_of(s)
            if s == 0:
                return plan.begins[0]

    def awaken(self, plan: EnergySchedule, m: int, when: float) -> None:
        key = f"{POTENTIAL_SLEEP}{m}"
        asleep_since = plan.job_start(key)
        plan.remove(key)
        if when > asleep_since:
            plan.put(key, asleep_since, when, 1 << m)
        plan.put(f"{SWITCH_ON}{m}", when, when + self.switch_on_walltime, 1 << m)

    def sedate_at_the_furthest_moment(self, plan: EnergySchedule, machines: IntervalSet) -> float:
        """Every machine of `machines` that is awake is switched off as soon as it has nothing more planned.
        Returns when the last one handled (the highest of the earliest slice reached) is switched off, infinity
        when none is."""
        to_sedate = machines.mask
        s = len(plan.begins) - 1
        awake = plan.free[s]
        when = math.inf
        while to_sedate & awake:
            if s > 0:
                s -= 1
            busy = 0
            for key, hosts in plan.jobs_at(s).items():
                if key.startswith(SWITCH_ON) or not key.startswith("fakejob_"):
                    busy |= hosts
            now_sedated = busy & awake & to_sedate
            for m in _bits(now_sedated):
                when = plan.end_of(s)
                self.sedate(plan, m, when)
            awake &= ~now_sedated
            if s == 0:
                now_sedated = awake & to_sedate
                for m in _bits(now_sedated):
                    when = plan.begins[0]
                    self.sedate(plan, m, when)
                awake &= ~now_sedated
        return when

    def sedate(self, plan: EnergySchedule, m: int, when: float) -> None:
        plan.put(f"{SWITCH_OFF}{m}", when, when + self.switch_off_walltime, 1 << m)
        self.sleep_without_switch(plan, m, when + self.switch_off_walltime)

    def sleep_without_switch(self, plan: EnergySchedule, m: int, when: float) -> None:
        if self.ensured_sleep > 0:
            plan.put(f"{ENSURED_SLEEP}{m}", when, when + self.ensured_sleep, 1 << m)
            when += self.ensured_sleep
        plan.put(f"{POTENTIAL_SLEEP}{m}", when, math.inf, 1 << m)

    def decisions_of(self, plan: EnergySchedule, now: float, call_me_later: bool = True) -> None:
        """batsched's make_decisions_of_schedule: what starts in the first slice of `plan` is done now."""
        schedule = self.schedule
        did_something = False
        switches: dict[int, IntervalSet] = {}
        queued = dict(self.queue)
        for key, hosts in plan.jobs_at(0).items():
            if key.startswith("fakejob_"):
                m = _machine(key)
                one = IntervalSet.from_ids([m])
                if key.startswith(SWITCH_ON) and key not in schedule:
                    removed = schedule.remove(f"{ENSURED_SLEEP}{m}")
                    removed = schedule.remove(f"{POTENTIAL_SLEEP}{m}") or removed
                    assert removed, f"machine {m} woken but not asleep"
                    schedule.put(key, now, now + self.switch_on_walltime, 1 << m)
                    switches[self.compute_pstate] = switches.get(self.compute_pstate, IntervalSet()) | one
                    self.asleep, self.wakable = self.asleep - one, self.wakable - one
                    self.switching_on = self.switching_on | one
                elif key.startswith(SWITCH_OFF) and key not in schedule:
                    self.sedate(schedule, m, now)
                    switches[self.sleep_pstate] = switches.get(self.sleep_pstate, IntervalSet()) | one
                    self.awake = self.awake - one
                    self.switching_off = self.switching_off | one
            elif key in queued:
                schedule.put(key, now, now + self.walltimes[key], hosts)
                self.add("EXECUTE_JOB", now, job_id=key, alloc=str(IntervalSet.from_mask(hosts)))
                did_something = True
                self.queue.remove((key, queued[key]))
        for pstate in sorted(switches):
            self.add("SET_RESOURCE_STATE", now, resources=str(switches[pstate]), state=str(pstate))
            did_something = True
        if call_me_later and not did_something and self.nb_completed < self.nb_jobs and not self.nb_calls_pending:
            end = schedule.end_of(0)
            self.add("CALL_ME_LATER", now, timestamp=(end if end < math.inf else 1e19) + 1)
            self.nb_calls_pending += 1


def _union(jobs: dict[str, int], prefix: str) -> int:
    mask = 0
    for key, hosts in jobs.items():
        if key.startswith(prefix):
            mask |= hosts
    return mask


class EnergyBackfillingDichotomy(EnergyBackfilling):
    """batsched's `energy_bf_dicho`: among plans with 0..n machines switched off now (or, when the current plan
    slows jobs down too much, 0..n sleeping machines woken), a dichotomy on that number keeps the plan of least
    estimated energy whose mean slowdown stays within `tolerated_slowdown_loss_ratio` of the all-awake plan's."""

    def __init__(self, options: dict[str, Any]):
        super().__init__(options)
        self.tolerated_ratio = float(options["tolerated_slowdown_loss_ratio"])
        self.comparison = str(options.get("comparison_type", "remove_sleep_jobs"))
        self.submitted_at: dict[str, float] = {}

    def on_event(self, now: float, kind: str, data: dict[str, Any]) -> None:
        super().on_event(now, kind, data)
        if kind == "JOB_SUBMITTED":
            self.submitted_at[data["job_id"]] = float(data["job"]["subtime"])

    def make_decisions(self, now: float) -> None:
        self.take_ended_and_released()
        self.update_first_slice(now)
        schedule = self.schedule
        first = schedule.jobs_at(0)
        sleeping = _union(first, ENSURED_SLEEP) | _union(first, POTENTIAL_SLEEP)
        awakable = IntervalSet.from_mask(_union(first, POTENTIAL_SLEEP))
        available = IntervalSet.from_mask(schedule.free[0])

        awakened = schedule.copy()
        for m in _bits(sleeping):
            if self.comparison == "switch_on":
                self.awaken(awakened, m, self.earliest_moment_to_awaken(awakened, 1 << m))
            else:
                awakened.remove(f"{ENSURED_SLEEP}{m}")
                awakened.remove(f"{POTENTIAL_SLEEP}{m}")
        self.put_jobs_into(awakened)
        online = schedule.copy()
        self.put_jobs_into(online)
        bound = self.mean_slowdown(awakened) * self.tolerated_ratio

        best, best_number = online, 0
        sedating = self.mean_slowdown(online) <= bound
        low, high = 1, len(available) if sedating else len(awakable)
        while low < high:
            number = (low + high) // 2
            plan = schedule.copy()
            if sedating:
                for m in available.lowest(number):
                    self.sedate(plan, m, plan.begins[0])
            else:
                for m in awakable.lowest(number):
                    self.awaken(plan, m, self.earliest_moment_to_awaken(plan, 1 << m))
            self.put_jobs_into(plan)
            if self.mean_slowdown(plan) <= bound:
                horizon = max(best.begins[-1], plan.begins[-1])
                best_energy, energy = self.energy(best, horizon), self.energy(plan, horizon)
                better_number = number > best_number if sedating else number < best_number
                if energy < best_energy or (energy == best_energy and better_number):
                    best, best_number = plan, number
                if sedating:
                    low = number + 1
                else:
                    high = number - 1
            elif sedating:
                high = number - 1
            else:
                low = number + 1
        self.decisions_of(best, now)

    def mean_slowdown(self, plan: EnergySchedule) -> float:
        """batsched's compute_metrics_of_schedule: the mean slowdown of the real jobs of the plan, each from its
        first slice's beginning to its last slice's end."""
        starts: dict[str, float] = {}
        ends: dict[str, float] = {}
        for s in range(len(plan.begins)):
            for key in plan.jobs_at(s):
                if not key.startswith("fakejob_"):
                    starts.setdefault(key, plan.begins[s])
                    ends[key] = plan.end_of(s)
        if not starts:
            return 0.0
        return sum((ends[k] - self.submitted_at[k]) / (ends[k] - starts[k]) for k in starts) / len(starts)

    def energy(self, plan: EnergySchedule, horizon: float) -> float:
        """batsched's estimate_energy_of_schedule up to `horizon`."""
        power = {SWITCH_ON: self.switch_on_power, SWITCH_OFF: self.switch_off_power,
                 ENSURED_SLEEP: self.power["sleep"], POTENTIAL_SLEEP: self.power["sleep"]}
        energy = 0.0
        for s, begin in enumerate(plan.begins):
            if begin >= horizon:
                break
            length = min(plan.end_of(s), horizon) - begin
            idle = self.nb_machines
            for key, hosts in plan.jobs_at(s).items():
                count = hosts.bit_count()
                idle -= count
                watts = power[key[:key.rindex("_") + 1]] if key.startswith("fakejob_") else self.power["compute"]
                energy += watts * count * length
            energy += self.power["idle"] * idle * length
        return energy
