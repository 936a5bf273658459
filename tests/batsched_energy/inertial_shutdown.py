"""batsched's variants built on its inertial-shutdown monitor (src/algo/energy_bf_monitoring_inertial_shutdown.cpp
and energy_bf_monitoring_period.cpp), decision for decision: `energy_bf_idle_sleeper`, `energy_bf_subpart_sleeper`
and `energy_bf_monitoring_inertial` (src/algo/energy_bf_idle_sleeper.cpp, energy_bf_machine_subpart_sleeper.cpp,
and the monitor's own monitoring stage).

Unlike energy_bf, these do not switch a machine off as soon as its plan is empty. At each message they place the
queued jobs EASY-like in a copy of the plan (the "inertial" plan): the first queued jobs start while they can,
the first one that cannot start now is the priority job, reserved where it fits first (machines are woken for it
when it cannot fit at all: first the switches off still pending are cancelled, then the lowest sleeping machines
that sleep soonest are woken), and the other jobs start if they fit now. Then sleeping machines are woken for
the queued jobs that the idle machines cannot hold (at most as many as were put to sleep for being idle, never on
the priority job's machines), or, with `sedate_idle_on_classical_events`, machines idle for `idle_time_to_sedate`
seconds are put to sleep, keeping enough awake for the priority job. A requested call every `monitoring_period`
seconds (asked for at the first submission) is a monitoring stage, which each variant defines. The
liquid-load-horizon trace batsched writes to `trace_output_filename` is not written.
"""

from __future__ import annotations

import bisect
import math
from typing import Any

from batsched_energy.energy_bf import (
    ENSURED_SLEEP,
    POTENTIAL_SLEEP,
    SWITCH_OFF,
    EnergyBackfilling,
    EnergySchedule,
    _union,
)
from clustersim.intervals import IntervalSet

NEVER = math.inf
"""An idle start date for a machine that is not idle (batsched: the plan's infinite horizon)."""
INFINITE_HORIZON = 1e19
"""Where batsched's plan ends (its `Schedule`'s last slice)."""


class InertialShutdown(EnergyBackfilling):
    """batsched's EnergyBackfillingMonitoringInertialShutdown: its `make_decisions` and the monitoring period
    (EnergyBackfillingMonitoringPeriod); a subclass gives the monitoring stage."""

    def __init__(self, options: dict[str, Any]):
        super().__init__(options)
        self.period = float(options["monitoring_period"])
        self.idle_time_to_sedate = float(options.get("idle_time_to_sedate", 1e18))
        self.sedate_on_events = bool(options.get("sedate_idle_on_classical_events", False))
        self.time_switch_on = float(options["time_switch_on"])
        self.inertial = EnergySchedule(0, IntervalSet())
        self.to_sedate = self.to_awaken = IntervalSet()
        """Switches decided but not done yet: machines still busy (off) or not asleep yet (on)."""
        self.idle = IntervalSet()
        self.idle_since: dict[int, float] = {}
        self.sedated_by_inertia = self.sedated_for_being_idle = 0
        self.sedated_since_monitoring = self.awakened_since_monitoring = IntervalSet()
        self.monitoring_launched = self.no_more_jobs = self.stop_calls = self.finished = False
        self.last_llh = self.last_llh_date = self.llh_integral = 0.0

    def on_event(self, now: float, kind: str, data: dict[str, Any]) -> None:
        super().on_event(now, kind, data)
        if kind == "SIMULATION_BEGINS":
            self.idle = IntervalSet.range(0, int(data["nb_resources"]))
            self.idle_since = dict.fromkeys(self.idle, now)
            self.inertial = self.schedule.copy()
        elif kind == "JOB_SUBMITTED" and not self.monitoring_launched:
            self.call_me_later(now)
            self.monitoring_launched = True
        elif kind == "REQUESTED_CALL" and not self.finished:
            self.on_monitoring_stage(now)
            if not self.stop_calls:
                self.call_me_later(now)
        elif kind == "NOTIFY" and data.get("type") == "no_more_static_job_to_submit":
            self.no_more_jobs = True
        elif kind == "SIMULATION_ENDS":
            self.finished = True

    def call_me_later(self, now: float) -> None:
        self.add("CALL_ME_LATER", now, timestamp=now + self.period)
        self.nb_calls_pending += 1

    def on_monitoring_stage(self, now: float) -> None:
        raise NotImplementedError

    # batsched's EnergyBackfillingMonitoringInertialShutdown::make_decisions

    def make_decisions(self, now: float) -> None:
        released = {key for key, _ in self.released}
        self.take_ended_and_released()
        if self.ended and self.no_more_jobs and self.schedule_is_done(released):
            self.stop_calls = True
        self.update_first_slice(now)
        self.integrate_load(now, [(key, res) for key, res in self.queue if key not in released])
        plan = self.inertial = self.schedule.copy()
        sedated, awakened = self.handle_queued_switches(plan, self.to_sedate, self.to_awaken)
        priority: tuple[str, int] | None = None
        if not self.queue:
            self.to_sedate, self.to_awaken = self.to_sedate - sedated, self.to_awaken - awakened
        else:
            priority, started, sedated, awakened = self.place_priority_jobs(plan, sedated, awakened)
            self.to_sedate, self.to_awaken = self.to_sedate - sedated, self.to_awaken - awakened
            self.sedated_since_monitoring = self.sedated_since_monitoring | sedated
            self.awakened_since_monitoring = self.awakened_since_monitoring | awakened
            available = plan.free[0].bit_count()
            for key, res in self.queue:
                if available <= 0:
                    break
                if (key, res) != priority and key not in started and res <= available:
                    placed = plan.add(key, res, self.walltimes[key])
                    if placed is not None and placed.now:
                        started.add(key)
                        available -= res
                    elif placed is not None:
                        plan.remove(key)
        self.decisions_of(plan, now, call_me_later=False)

        self.update_idle_states(now, plan)
        waking = self.idle_machines_to_awaken(plan, self.sedated_for_being_idle)
        if waking:
            self.to_awaken = self.to_awaken | waking
            self.sedated_for_being_idle -= len(waking)
            _, awakened = self.handle_queued_switches(plan, IntervalSet(), waking)
            assert awakened == waking, f"machines {waking} to wake for idleness, but {awakened} woken now"
            self.to_awaken = self.to_awaken - awakened
            self.decisions_of(plan, now, call_me_later=False)
        elif self.sedate_on_events and not self.switching_on and not self.to_awaken:
            self.update_idle_states(now, plan)
            awake_soon = (self.awake | self.switching_on) - self.switching_off | self.to_awaken
            sedating = self.idle_machines_to_sedate(now, awake_soon - self.to_sedate, priority)
            if sedating:
                sedated, _ = self.handle_queued_switches(plan, sedating, IntervalSet())
                self.decisions_of(plan, now, call_me_later=False)
                self.sedated_for_being_idle += len(sedated)
        self.last_llh, self.last_llh_date = self.liquid_load_horizon(plan, self.queue, now), now

    def liquid_load_horizon(self, plan: EnergySchedule, queue: list[tuple[str, int]], now: float) -> float:
        """batsched's liquid load horizon: how long the queued jobs' area (machines x walltime) takes to fill the
        free machines of `plan` from `now`, poured like a liquid (the plan's horizon if it never fills)."""
        load = sum(res * self.walltimes[key] for key, res in queue)
        when = now
        s = max(0, bisect.bisect_right(plan.begins, now) - 1)
        while load > 0 and s < len(plan.begins):
            free = plan.free[s].bit_count()
            area = free * max(0.0, min(plan.end_of(s), INFINITE_HORIZON) - max(now, plan.begins[s]))
            if area <= load:
                load -= area
                when = min(plan.end_of(s), INFINITE_HORIZON)
                s += 1
            else:
                when += load / free
                load = 0
        return (INFINITE_HORIZON if load > 0 else when) - now

    def integrate_load(self, now: float, queue: list[tuple[str, int]]) -> None:
        """The integral of the liquid load horizon over time (trapezoids), with the plan of the last decisions."""
        llh = self.liquid_load_horizon(self.inertial, queue, now)
        self.llh_integral += (self.last_llh + llh) / 2 * (now - self.last_llh_date)
        self.last_llh, self.last_llh_date = llh, now

    def schedule_is_done(self, released: set[str]) -> bool:
        """No job queued before this message, and none planned (batsched then stops asking to be called)."""
        return all(key in released for key, _ in self.queue) and not self.schedule.has_real_job()

    def place_priority_jobs(
        self, plan: EnergySchedule, sedated: IntervalSet, awakened: IntervalSet
    ) -> tuple[tuple[str, int] | None, set[str], IntervalSet, IntervalSet]:
        """The queue's head starts while it can; the first job that cannot start now (the priority job) is
        reserved where it fits first, machines being woken for it if it cannot fit at all. Returns the priority
        job (None if every job started), the jobs started, and the machines switched off and on now."""
        started: set[str] = set()
        for key, res in self.queue:
            walltime = self.walltimes[key]
            placed = plan.add(key, res, walltime)
            if placed is not None and placed.now:
                started.add(key)
                continue
            if placed is None:
                for m in self.to_sedate:  # cancel the switches off decided earlier, to make room
                    plan.remove(f"{SWITCH_OFF}{m}")
                    if self.ensured_sleep > 0:
                        plan.remove(f"{ENSURED_SLEEP}{m}")
                    plan.remove(f"{POTENTIAL_SLEEP}{m}")
                placed = plan.add(key, res, walltime)
                if placed is not None:
                    disturbing = self.to_sedate & placed.hosts
                    self.uncount_sedated(len(disturbing))
                    done, _ = self.handle_queued_switches(plan, self.to_sedate - placed.hosts, IntervalSet())
                    assert done.issubset(self.to_sedate - placed.hosts)
                    sedated = sedated - disturbing
                    self.to_sedate = self.to_sedate - disturbing
                else:
                    awake = self.awake | self.switching_on | self.to_awaken
                    missing = res - len(awake)
                    assert missing > 0, f"{key} fits no plan though {awake} are awake"
                    waking = self.first_machines_to_awaken(plan, missing, self.asleep | self.switching_off)
                    _, woken = self.handle_queued_switches(plan, IntervalSet(), waking)
                    placed = plan.add(key, res, walltime)
                    assert placed is not None and placed.start > plan.begins[0], f"waking {waking} for {key}"
                    self.uncount_sedated(len(self.to_sedate))
                    self.uncount_sedated(len(waking))
                    sedated = sedated - self.to_sedate
                    self.to_sedate = IntervalSet()
                    awakened = awakened | woken
                    self.to_awaken = self.to_awaken | (waking - woken)
            return (key, res), started, sedated, awakened
        return None, started, sedated, awakened

    def uncount_sedated(self, number: int) -> None:
        """`number` machines put to sleep are not any more: by inertia first, then for being idle."""
        by_inertia = min(number, self.sedated_by_inertia)
        self.sedated_by_inertia -= by_inertia
        self.sedated_for_being_idle -= number - by_inertia
        assert self.sedated_for_being_idle >= 0

    # what the monitor adds to EnergyBackfilling

    def handle_queued_switches(
        self, plan: EnergySchedule, to_sedate: IntervalSet, to_awaken: IntervalSet
    ) -> tuple[IntervalSet, IntervalSet]:
        """Wake each machine of `to_awaken` as soon as it sleeps, and switch each of `to_sedate` off once it has
        nothing more to do, in `plan`. Returns the machines switched off and on now."""
        now = plan.begins[0]
        awakened = [m for m in to_awaken if self.awaken_as_soon_as_possible(plan, m) == now]
        sedated = [m for m in to_sedate
                   if self.sedate_at_the_furthest_moment(plan, IntervalSet.from_ids([m])) == now]
        return IntervalSet.from_ids(sedated), IntervalSet.from_ids(awakened)

    def awaken_as_soon_as_possible(self, plan: EnergySchedule, m: int) -> float:
        key = f"{POTENTIAL_SLEEP}{m}"
        assert key in plan, f"cannot wake machine {m}: it is not asleep"
        when = plan.job_start(key)
        self.awaken(plan, m, when)
        return when

    @staticmethod
    def first_machines_to_awaken(plan: EnergySchedule, number: int, awakable: IntervalSet) -> IntervalSet:
        """The `number` machines of `awakable` that sleep the soonest in `plan` (the lowest first)."""
        chosen = IntervalSet()
        for s in range(len(plan.begins)):
            now = (IntervalSet.from_mask(_union(plan.jobs_at(s), POTENTIAL_SLEEP)) & awakable) - chosen
            if len(now) + len(chosen) >= number:
                return chosen | now.lowest(number - len(chosen))
            chosen = chosen | now
        raise AssertionError(f"cannot find {number} machines of {awakable} to wake")

    # batsched's EnergyBackfillingIdleSleeper helpers (also used by the monitor's make_decisions)

    def update_idle_states(self, now: float, plan: EnergySchedule) -> None:
        """Machines free in the plan's first slice are idle since now if they were not idle; the others are not."""
        free = IntervalSet.from_mask(plan.free[0])
        newly_idle, newly_busy = free - self.idle, self.idle - free
        for m in newly_idle:
            self.idle_since[m] = now
        for m in newly_busy:
            self.idle_since[m] = NEVER
        self.idle = (self.idle | newly_idle) - newly_busy

    def idle_machines_to_sedate(self, now: float, awake_soon: IntervalSet,
                                priority: tuple[str, int] | None) -> IntervalSet:
        """The lowest machines idle for `idle_time_to_sedate`, leaving awake enough for the priority job."""
        sedatable = IntervalSet.from_ids([m for m in self.idle
                                          if self.idle_since[m] <= now - self.idle_time_to_sedate])
        number = min(len(awake_soon) - (priority[1] if priority else 0), len(sedatable))
        return sedatable.lowest(number) if number > 0 else IntervalSet()

    def sedate_idle_machines(self, now: float, plan: EnergySchedule, awake_soon: IntervalSet,
                             priority: tuple[str, int] | None) -> None:
        """The monitoring stages' last step: with no machine on its way up, the long-idle ones go to sleep."""
        if not self.switching_on and not self.to_awaken:
            sedating = self.idle_machines_to_sedate(now, awake_soon, priority)
            if sedating:
                sedated, _ = self.handle_queued_switches(plan, sedating, IntervalSet())
                self.decisions_of(plan, now, call_me_later=False)
                self.sedated_for_being_idle += len(sedated)

    def idle_machines_to_awaken(self, plan: EnergySchedule, maximum: int) -> IntervalSet:
        """Sleeping machines to wake (at most `maximum`) so that queued jobs may run, as batsched's
        select_idle_machines_to_awaken (AWAKEN_FOR_ALL_JOBS_RESPECTING_PRIORITY_JOB) picks them: each queued job
        in turn takes idle machines first, then the lowest usable ones, never the priority job's."""
        waking = IntervalSet()
        if not self.queue:
            return waking
        awakable = IntervalSet.from_mask(_union(plan.jobs_at(0), POTENTIAL_SLEEP))
        if len(awakable) > maximum:
            awakable = awakable.lowest(maximum)
        reserved = self.priority_job_machines(plan)
        usable, usable_idle = (self.idle | awakable) - reserved, self.idle - reserved
        for _, res in self.queue:
            if not usable:
                break
            if res <= len(usable):
                use = IntervalSet()
                if usable_idle:
                    use = usable_idle.lowest(min(len(usable_idle), res))
                    usable_idle = usable_idle - use
                use = use | usable.lowest(res - len(use))  # batsched's lowest of `usable`, idle ones included
                usable = usable - use
                awakable, waking = awakable - use, waking | (awakable & use)
        return waking

    def priority_job_machines(self, plan: EnergySchedule) -> IntervalSet:
        """Where the queue's first job would be placed by first fit in `plan` (none if it cannot fit)."""
        key, res = self.queue[0]
        trial = plan.copy()
        trial.remove(key)
        placed = trial.add(key, res, self.walltimes[key])
        return IntervalSet() if placed is None else placed.hosts


class IdleSleeper(InertialShutdown):
    """batsched's `energy_bf_idle_sleeper`: the monitoring stage puts to sleep the machines idle for long enough."""

    def on_monitoring_stage(self, now: float) -> None:
        self.update_first_slice(now)
        self.inertial = self.schedule.copy()
        self.update_idle_states(now, self.inertial)
        priority = self.queue[0] if self.queue else None
        awake_soon = (self.awake | self.switching_on) - self.switching_off | self.to_awaken
        sedating = self.idle_machines_to_sedate(now, awake_soon - self.to_sedate, priority)
        if sedating:
            self.to_sedate = self.to_sedate | sedating
            self.sedated_for_being_idle += len(sedating)
            sedated, awakened = self.handle_queued_switches(self.inertial, self.to_sedate, self.to_awaken)
            self.to_sedate, self.to_awaken = self.to_sedate - sedated, self.to_awaken - awakened
            self.sedated_since_monitoring, self.awakened_since_monitoring = sedated, awakened
            self.decisions_of(self.inertial, now, call_me_later=False)


class SubpartSleeper(InertialShutdown):
    """batsched's `energy_bf_subpart_sleeper` (src/algo/energy_bf_machine_subpart_sleeper.cpp): the monitoring
    stage keeps `fraction_of_machines_to_let_awake` of the machines (at least the priority job's request) awake and
    puts the others to sleep once they have nothing more to do, without delaying the priority job; then, as the
    idle sleeper, the machines idle for long enough."""

    def __init__(self, options: dict[str, Any]):
        super().__init__(options)
        self.fraction_awake = float(options["fraction_of_machines_to_let_awake"])

    def on_monitoring_stage(self, now: float) -> None:
        self.update_first_slice(now)
        plan = self.inertial = self.schedule.copy()
        if self.to_sedate:  # switches off not done yet are decided again
            self.uncount_sedated(len(self.to_sedate))
            self.to_sedate = IntervalSet()
        priority = self.queue[0] if self.queue else None
        awake_soon = (self.awake | self.switching_on) - self.switching_off | self.to_awaken
        to_let_awake = int(self.fraction_awake * self.nb_machines)
        placed = None
        if priority is not None:
            key, res = priority
            placed = plan.add(key, res, self.walltimes[key])
            if placed is not None:
                plan.remove(key)
        if priority is None or placed is not None:
            usable_by_priority = IntervalSet()
            if placed is not None and priority is not None:
                to_let_awake = max(to_let_awake, priority[1])
                usable_by_priority = plan.free_during(placed.start, placed.start + self.walltimes[priority[0]])
            number = len(awake_soon) - to_let_awake
            if number > 0:
                stolen = min(self.sedated_for_being_idle, number)
                self.sedated_by_inertia += stolen
                self.sedated_for_being_idle -= stolen
                sedating = self.first_machines_to_sedate(plan, number, awake_soon, usable_by_priority, priority)
                self.to_sedate = self.to_sedate | sedating
                self.sedated_by_inertia += len(sedating)
                sedated, _ = self.handle_queued_switches(plan, self.to_sedate, IntervalSet())
                self.to_sedate = self.to_sedate - sedated
                self.decisions_of(plan, now, call_me_later=False)
            self.update_idle_states(now, plan)
            awake_soon = (self.awake | self.switching_on | self.to_awaken) - self.to_sedate
            self.sedate_idle_machines(now, plan, awake_soon, priority)
        if self.sedated_for_being_idle > to_let_awake:  # the surplus counts as sedated by inertia
            self.sedated_by_inertia += self.sedated_for_being_idle - to_let_awake
            self.sedated_for_being_idle = to_let_awake

    @staticmethod
    def first_machines_to_sedate(plan: EnergySchedule, number: int, sedatable: IntervalSet,
                                 usable_by_priority: IntervalSet, priority: tuple[str, int] | None) -> IntervalSet:
        """batsched's select_first_machines_to_sedate: the `number` machines of `sedatable` that are free the
        soonest in `plan` (the lowest first), taking from the machines the priority job could use only those it
        does not need."""
        chosen = stolen = IntervalSet()
        stealable = sedatable & usable_by_priority
        nb_stealable = max(0, len(stealable) - (priority[1] if priority else 0))
        for s in range(len(plan.begins)):
            now = (IntervalSet.from_mask(plan.free[s]) & sedatable) - chosen
            annoying = now & (stealable - stolen)
            if annoying and nb_stealable - len(stolen) > 0:
                taken = annoying.lowest(min(nb_stealable - len(stolen), len(annoying)))
                taken = taken.lowest(min(len(taken), number - len(chosen)))
                stolen, chosen = stolen | taken, chosen | taken
            now = now - annoying
            if len(now) + len(chosen) >= number:
                return chosen | now.lowest(number - len(chosen))
            chosen = chosen | now
        raise AssertionError(f"cannot find {number} machines of {sedatable} to switch off")


class MonitoringInertial(InertialShutdown):
    """batsched's `energy_bf_monitoring_inertial`: at each monitoring stage, the integral of the liquid load horizon
    over the period past is compared with the period before: while it grows, more machines are woken (twice as
    many as at the last stage, at least one), while it falls, more are put to sleep (likewise, leaving the priority
    job its machines); then, as the idle sleeper, the machines idle for long enough sleep."""

    def __init__(self, options: dict[str, Any]):
        super().__init__(options)
        self.allow_future_switches = bool(options.get("allow_future_switches", True))
        self.upper_llh_threshold = float(options.get("upper_llh_threshold", 1e100))
        alteration = str(options.get("inertial_alteration", "x2")).strip()
        self.alteration_sum, self.alteration = alteration[0] == "p", float(alteration[1:])
        self.first_stage, self.awakening, self.inertial_number = True, True, 0
        self.preceding_llh_integral = 0.0

    def altered(self, number: int) -> int:
        return int(number + self.alteration if self.alteration_sum else number * self.alteration)

    def on_monitoring_stage(self, now: float) -> None:
        self.update_first_slice(now)
        self.integrate_load(now, self.queue)
        plan = self.inertial = self.schedule.copy()
        if self.to_sedate:
            self.uncount_sedated(len(self.to_sedate))
            self.to_sedate = IntervalSet()
        priority = self.queue[0] if self.queue else None
        placed = None
        reserved = usable_by_priority = IntervalSet()
        if priority is not None:
            key, res = priority
            placed = plan.add(key, res, self.walltimes[key])
            if placed is not None:
                plan.remove(key)
                reserved = placed.hosts
                usable_by_priority = plan.free_during(placed.start, placed.start + self.walltimes[key])
        needs_awakenings = priority is not None and placed is None
        if self.first_stage:
            self.first_stage, self.awakening, self.inertial_number = False, True, 0
        elif not needs_awakenings:
            if self.llh_integral / self.period >= self.upper_llh_threshold:
                if not self.awakening:
                    self.awakening, self.inertial_number = True, 0
                self.preceding_llh_integral = 0.0
            if self.awakening and self.llh_integral > self.preceding_llh_integral:
                self.awaken_by_inertia(plan)
            elif self.awakening:
                self.awakening, self.inertial_number = False, 0
            elif self.llh_integral <= self.preceding_llh_integral:
                self.sedate_by_inertia(plan, priority, reserved, usable_by_priority)
            else:
                self.awakening, self.inertial_number = True, 0
        if priority is not None and not needs_awakenings:
            placed_after = plan.add(priority[0], priority[1], self.walltimes[priority[0]])
            assert placed is not None and placed_after is not None and placed_after.start <= placed.start, (
                f"the energy decisions delayed the priority job {priority[0]}")
        self.preceding_llh_integral, self.llh_integral = self.llh_integral, 0.0
        sedated, awakened = self.handle_queued_switches(plan, self.to_sedate, self.to_awaken)
        self.to_sedate, self.to_awaken = self.to_sedate - sedated, self.to_awaken - awakened
        self.sedated_since_monitoring, self.awakened_since_monitoring = sedated, awakened
        self.decisions_of(plan, now, call_me_later=False)
        if priority is not None and needs_awakenings:
            plan.add(priority[0], priority[1], self.walltimes[priority[0]])
        self.update_idle_states(now, plan)
        awake_soon = ((self.awake | self.switching_on) - self.switching_off | self.to_awaken) - self.to_sedate
        self.sedate_idle_machines(now, plan, awake_soon, priority)
        self.last_llh, self.last_llh_date = self.liquid_load_horizon(plan, self.queue, now), now

    def awaken_by_inertia(self, plan: EnergySchedule) -> None:
        awakable = self.asleep - self.to_awaken
        if not self.allow_future_switches:
            awakable = awakable - self.non_wakable
        self.inertial_number = min(max(self.altered(len(self.awakened_since_monitoring)), 1), len(awakable))
        if self.inertial_number > 0:
            waking = self.first_machines_to_awaken(plan, self.inertial_number, awakable)
            self.to_awaken = self.to_awaken | waking
            self.uncount_sedated(len(waking))

    def sedate_by_inertia(self, plan: EnergySchedule, priority: tuple[str, int] | None, reserved: IntervalSet,
                          usable_by_priority: IntervalSet) -> None:
        sedatable = self.awake - self.to_sedate
        if not self.allow_future_switches:
            sedatable = sedatable & IntervalSet.from_mask(plan.free[0])
        nb_sedatable = len(sedatable) if priority is None else max(0, len(sedatable) - len(reserved))
        self.inertial_number = min(max(self.altered(len(self.sedated_since_monitoring)), 1), nb_sedatable)
        if self.inertial_number > 0:
            stolen = min(self.sedated_for_being_idle, self.inertial_number)
            sedating = IntervalSet()
            if self.inertial_number - stolen > 0:
                sedating = SubpartSleeper.first_machines_to_sedate(plan, self.inertial_number, sedatable,
                                                                   usable_by_priority, priority)
            self.sedated_by_inertia += len(sedating) + stolen
            self.sedated_for_being_idle -= stolen
            self.to_sedate = self.to_sedate | sedating
