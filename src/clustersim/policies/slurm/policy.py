"""A model of Slurm 22.05's scheduling (slurmctld with sched/backfill, select/cons_tres or select/linear).

Configured by a slurm.conf (`conf` option), the same file a real cluster reads; without one, the platform's
nodes form one partition with Slurm's defaults (cons_tres, CR_CPU). Jobs ask for CPUs (units of a Unit.CORE
platform, numbered node by node) and may span nodes; jobs of the sbatch-options format (`Job.extra["sbatch"]`)
also ask for memory, node counts and ranges, whole nodes, GPUs and other GRES, and arrays' tasks are throttled
(docs/slurm.md, "Requests beyond CPUs"); `Job.queue` names the partition or a list of them (`a,b`; the default partition
when it names none; an unknown name is rejected, as Slurm rejects it), `Job.user` and `Job.group` are the user
and account, `Job.extra["dependency"]` is `--dependency` (afterok/afterany; an SWF preceding job is afterany).

Slurm polls; the model reproduces when it looks at the queue (docs/slurm.md gives the sources):

- a submission or a job end only asks for the main scheduler (`queue_job_scheduler`): the background loop runs
  it at its next tick (about every second) once `batch_sched_delay` (3 s, in whole seconds tested at its
  ticks) has passed since its last run, and
  runs it on the whole queue every `sched_interval` (60 s);
- the main scheduler takes jobs in priority order (partition PriorityTier, priority, submit time, job id), at
  most `default_queue_depth` (100) of them when not run for the whole queue, and once a job of a partition does
  not fit, skips the rest of that partition and takes its nodes away from other partitions;
- the backfill scheduler runs every `bf_interval` (30 s) when something changed (clustersim.policies.slurm.backfill);
- priorities are recalculated every PriorityCalcPeriod (multifactor with slurmdbd only, as Slurm does);
- time limits are in whole minutes; jobs OverTimeLimit past theirs are killed by the check slurmctld runs
  every 30 s; node Weight orders the CPU selection; slurm.conf settings not modelled are named in one warning.

Options: `conf` (a slurm.conf path), `ctld_start` (when slurmctld started, relative to t=0; default 10
minutes before: it sets the phase of the periodic activities), `sched_latency` (how long after a job's CPUs come
back the background loop's pass serving it comes: 0.63 s, measured), `submit_latency` (the same after a
submission: half the loop's period, 0.51 s), `loop_period` (the background loop's period: 1 s, longer on an
accelerated clock), `epilog_delay` (how long an ended job keeps its CPUs
until its epilog completes: 0 s unaccelerated; a clock accelerated K times stretches it), `clock_origin` (the
epoch second t=0 stands for: Slurm rounds backfill times to bf_resolution, and will-run windows to 30 s, on
epoch time),
`qos_priorities` (`name=priority,...`:
QOS have no slurm.conf lines; a job's QOS is `Job.extra["qos"]`).
"""

from __future__ import annotations

import bisect
import math
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final

from clustersim.core.decisions import CallMeLater, Decision, KillJob, RejectJob, StartJob
from clustersim.core.events import Event, FinalState, JobCompleted, JobSubmitted, NoMoreJobs, RequestedCall
from clustersim.core.state import ClusterView
from clustersim.errors import InputError
from clustersim.intervals import IntervalSet
from clustersim.platform.model import Platform, Unit
from clustersim.policies.base import Policy
from clustersim.policies.registry import register_policy
from clustersim.policies.slurm.backfill import (
    BackfillMemory,
    BackfillParameters,
    Candidate,
    Running,
    backfill_cycle,
    idle_until,
    node_bitmap,
)
from clustersim.policies.slurm.conf import NodeConf, PartitionConf, SlurmConf, read_slurm_conf
from clustersim.policies.slurm.priority import BasicPriority, JobFactors, MultifactorPriority, PriorityPlugin
from clustersim.policies.slurm.select import Allocation, Consumables, GresHeld, Shape, ShapedRequest, select_cpus
from clustersim.workload.job import Job
from clustersim.workload.sbatch import SbatchOptions, SbatchRequest, sbatch_options

MODELLED = frozenset({
    "schedulertype", "schedulerparameters", "selecttype", "selecttypeparameters", "prioritytype",
    "priorityweightage", "priorityweightfairshare", "priorityweightjobsize", "priorityweightpartition",
    "priorityweightqos", "prioritymaxage", "priorityfavorsmall", "prioritycalcperiod", "prioritydecayhalflife",
    "priorityflags", "fairsharedampeningfactor", "accountingstoragetype", "enforcepartlimits", "killwait",
    "overtimelimit", "defmempercpu", "grestypes", "defcpupergpu", "defmempergpu",
})
"""Global slurm.conf keys the model reads."""
NOT_SCHEDULING = frozenset({
    "clustername", "slurmctldhost", "controlmachine", "controladdr", "backupcontroller", "backupaddr",
    "slurmctldport", "slurmdport", "authtype", "authinfo", "credtype", "cryptotype", "slurmuser", "slurmduser",
    "statesavelocation", "slurmdspooldir", "slurmctldpidfile", "slurmdpidfile", "slurmctldlogfile",
    "slurmdlogfile", "slurmctlddebug", "slurmddebug", "slurmschedlogfile", "slurmschedloglevel", "debugflags",
    "proctracktype", "taskplugin", "taskpluginparam", "switchtype", "mpidefault", "accountingstoragehost",
    "accountingstorageport", "accountingstorageuser", "accountingstoragepass", "accountingstorageloc",
    "accountingstorageenforce", "accountingstoragetres", "jobacctgathertype", "jobacctgatherfrequency",
    "jobcomptype", "jobcomploc", "minjobage", "maxjobcount", "firstjobid", "returntoservice",
    "slurmdparameters", "launchparameters", "messagetimeout", "tcptimeout", "slurmctldtimeout",
    "slurmdtimeout", "batchstarttimeout", "unkillablesteptimeout", "prologepilogtimeout", "inactivelimit",
    "plugstackconfig", "healthcheckprogram", "healthcheckinterval", "cgroupplugin", "mailprog",
    "slurmctldparameters", "communicationparameters", "waittime", "prolog", "epilog", "srunprolog",
    "srunepilog", "taskprolog", "taskepilog", "include",
})
"""Keys of daemons' plumbing (addresses, paths, logs, authentication, timeouts): no effect on scheduling."""
SCHEDULER_OPTIONS = frozenset({
    "sched_interval", "batch_sched_delay", "default_queue_depth", "bf_interval", "bf_resolution", "bf_window",
    "bf_max_job_test", "bf_continue",
})
NODE_KEYS = frozenset({"nodename", "cpus", "realmemory", "weight", "port", "nodeaddr", "nodehostname", "state",
                       "gres"})
PARTITION_KEYS = frozenset({
    "partitionname", "nodes", "default", "maxtime", "defaulttime", "priorityjobfactor", "prioritytier",
    "priority", "state", "maxnodes", "defcpupergpu", "defmempergpu",
})


class UnmodelledSlurmSettings(UserWarning):
    """A slurm.conf sets something the model does not model (it simulates as if it were not set)."""


DEFAULT_SELECT = "select/linear"
"""Slurm 22.05's SelectType when slurm.conf sets none (whole nodes; 23.02 made select/cons_tres the default)."""
DEFAULT_SELECT_PARAMETERS = "CR_Core_Memory"
"""cons_tres's SelectTypeParameters when slurm.conf sets none, as real Slurm 22.05 behaves: memory is consumed
(without DefMemPerCPU a job takes all of its nodes' memory: one job per node)."""
MEMORY_PARAMETERS = frozenset({"CR_CPU_MEMORY", "CR_CORE_MEMORY", "CR_MEMORY"})
"""SelectTypeParameters that make memory a consumable resource."""
SELECT_PARAMETERS = frozenset({"CR_CPU", "CR_CORE", "CR_CPU_MEMORY", "CR_CORE_MEMORY"})
"""SelectTypeParameters the model simulates (cores as CPUs: one thread per core)."""
YEAR: Final = 365 * 86400.0
EPILOG_DELAY = 0.0
"""Seconds from a job's end (as Slurm records it) to its epilog's completion, when its CPUs come back: measured
under 25 ms on an unaccelerated slurmd (a backfill cycle 24 ms after a job's end used its CPUs); K times the
machine's latency on a clock accelerated K times (docs/slurm.md)."""
SCHED_LATENCY = 0.63
"""Seconds from a job's CPUs coming back to the background loop's pass serving it. Measured on real Slurm
without acceleration: a job's end to the main pass that starts the next job, 0.63 s on average over the 106 ends
of the five logged runs at K=1 (0.57 to 0.72 s per run); the records' whole-second gap from an end to the start
it made room for, 0.63 s at K=1, agrees. 0.12 s longer than a submission's (`SUBMIT_LATENCY`); the epilog
(under 25 ms) does not account for it, and what does is not measured (docs/slurm.md)."""
SUBMIT_LATENCY = 0.51
"""Seconds from a submission to the background loop's pass serving it: `_slurm_rpc_submit_batch_job` only
queues the request, which the loop (ten 100 ms sleeps, then its work) sees at its next tick, uniform in its
phase: half its period, 1.003 s at K=1 to 1.02-1.04 s at K=10 to 60 in slurmctld's logs."""
DEFAULT_LOOP_PERIOD = 1.0
"""Seconds between the background loop's ticks (`_slurmctld_background`: ten `usleep(100000)`, then its work).
The work adds 3 ms on this machine unaccelerated (1.003 s in slurmctld's logs), 9 ms over a `batch_sched_delay`
hold: left out, so a hold is 3 s. On a clock accelerated K times the work takes K times longer: 1.02 to 1.04 s
at K = 10 to 60 (`loop_period`, docs/slurm.md)."""
PERIODIC_TIMEOUT: Final = 30.0
"""slurmctld checks time limits every 30 s (slurmctld.h)."""
_EPS: Final = 1e-9
_QUIET_MARGIN: Final = 1e-6
"""How far before a time that ends a quiet stretch (a priority recalculation, an epilog, a time limit) the
stretch is taken to end."""


@dataclass(frozen=True, slots=True)
class _Partition:
    conf: PartitionConf
    index: int
    nodes: int
    """Bitmap of its nodes."""
    cpus: int
    norm_priority: float


@dataclass(slots=True)
class _Job:
    """A job as slurmctld holds it."""

    job: Job
    job_id: int
    submit: float
    cpus: int
    partition: _Partition
    """The first partition it names (its limits), then the one it started in."""
    limit: float | None
    """Time limit in seconds (whole minutes); None: unlimited."""
    factors: JobFactors
    partitions: tuple[_Partition, ...] = ()
    """Where it may run (`-p a,b`): one queue entry each, as Slurm's job queue holds one per partition."""
    priorities: dict[int, int] = field(default_factory=dict)
    """Priority per partition index (multifactor's partition factor differs between partitions)."""
    too_long: frozenset[int] = frozenset()
    """Partitions whose MaxTime its limit exceeds, or whose MaxNodes its `-N` exceeds: it waits there
    (EnforcePartLimits=NO; PartitionTimeLimit, PartitionNodeLimit)."""
    shape: Shape | None = None
    """Its request beyond "cpus CPUs anywhere" (None: just that)."""
    requests: dict[int, ShapedRequest] = field(default_factory=dict)
    """The shaped request per partition index (MaxNodes differs between partitions)."""
    memory: Allocation = field(default_factory=dict)
    """MiB it holds per node once started (memory as a consumable resource)."""
    gres: GresHeld = field(default_factory=dict)
    """GRES it holds per node once started."""
    array: _Array | None = None
    """The job array it is a task of (None: not an array task)."""
    task: int = 0
    """Its array task id (the order of an array's tasks in the queue)."""
    queued: int = 0
    """Its rank among the jobs ever queued (what breaks the last ties of the queue order)."""
    dependencies: list[tuple[str, str]] = field(default_factory=list)
    """Unmet (type, job id) dependencies: `afterany` or `afterok`."""
    never: bool = False
    """An afterok dependency failed: it stays pending (DependencyNeverSatisfied)."""
    candidates: dict[int, Candidate] = field(default_factory=dict)
    """What the backfill pass tests, per partition index (built once)."""
    running: Running | None = None
    """What the will-run test sees of it once started."""
    start: float = 0.0
    start_second: float = 0.0
    """The whole second Slurm records as its start (its end_time is that plus the limit)."""
    allocation: Allocation | None = None
    cpu_ids: dict[int, list[int]] = field(default_factory=dict)

    @property
    def slurm_end(self) -> float:
        return self.start_second + (YEAR if self.limit is None else self.limit)

    @property
    def priority(self) -> int:
        return self.priorities[self.partition.index]

    @property
    def runnable(self) -> bool:
        return not self.dependencies and not self.never


@dataclass(slots=True)
class _Array:
    """A job array (`--array=...%N`): its tasks share a job id and a priority; at most `throttle` run at once."""

    job_id: int
    priority: int
    throttle: int | None
    running: int = 0
    tasks: list[str] = field(default_factory=list)
    """Keys of its tasks: a dependency on the array waits for all of them."""


@dataclass(frozen=True, slots=True)
class _Timing:
    sched_interval: float
    batch_sched_delay: float
    queue_depth: int
    calc_period: float


class SlurmModel:
    """Slurm 22.05's main and backfill schedulers, priority plugins and cons_tres CPU allocation: the model the
    `slurm` policy (`Slurm`) runs. A class of its own, with no Python base, so that the compiled path makes it a
    native class (its attributes in fixed slots, not in an instance dict)."""

    def __init__(
        self,
        conf: str | Path | SlurmConf | None = None,
        ctld_start: float | str = -600.0,
        sched_latency: float | str = SCHED_LATENCY,
        clock_origin: float | str = 0.0,
        qos_priorities: str | Mapping[str, int] = "",
        epilog_delay: float | str = EPILOG_DELAY,
        submit_latency: float | str = SUBMIT_LATENCY,
        loop_period: float | str = DEFAULT_LOOP_PERIOD,
    ) -> None:
        if isinstance(conf, str | Path):
            conf = read_slurm_conf(conf)
        self._conf: SlurmConf | None = conf
        self._ctld = float(ctld_start)
        self._latency = float(sched_latency)
        self._epilog_delay = float(epilog_delay)
        self._submit_latency = float(submit_latency)
        if not (self._latency >= 0 and self._epilog_delay >= 0 and self._submit_latency >= 0):
            raise InputError("slurm policy", "sched_latency, submit_latency and epilog_delay are seconds, at least 0",
                             field="epilog_delay")
        self._loop_period = float(loop_period)
        if not self._loop_period > 0:
            raise InputError("slurm policy", f"loop_period is the background loop's period in seconds, more than 0: "
                             f"{loop_period}", field="loop_period")
        self._held_from = math.nan
        self._held_until = math.nan
        """`_hold_end` as of the last pass at `_held_from`."""
        self._completing: dict[str, float] = {}
        """Jobs that ended but whose epilog has not completed: their CPUs are still held (job key -> when)."""
        self._epoch = float(clock_origin)
        self._qos = _qos(qos_priorities)
        self._pending: dict[str, _Job] = {}
        self._running: dict[str, _Job] = {}
        self._seq = 0
        self._arrays: dict[str, _Array] = {}
        """Job arrays by the key the workload gives them (`workload!id` of their row)."""
        self._ended: dict[str, FinalState] = {}
        """Final state of every job that ended (dependencies are tested against it)."""
        self._dependents: dict[str, list[_Job]] = {}
        self._calls: set[float] = set()
        """The calls the model asks for, as Slurm's threads wake (within 1e-9 s of one another count once)."""
        self._issued: set[float] = set()
        """The calls of `_calls` not yet come, each at its exact time; with quiet calls (`ClusterView.quiet_calls`)
        only some are asked of the core, and the others are gone through when the model is next called."""
        self._asked: set[float] = set()
        """With quiet calls: the calls asked of the core and not yet come."""
        self._quiet_calls = False
        self._changes = 0
        """Counts the changes a main pass depends on: submissions, starts, ends, CPUs coming back, priorities."""
        self._idle_full = -1
        """`_changes` as the last main pass that started nothing (not cut short by the queue depth) saw it: a full
        pass on the same state starts nothing either."""
        self._idle_skipped = False
        """Whether that pass skipped jobs (an update for the backfill thread)."""
        self._no_more_jobs = False
        self._stuck = False

    # -- set-up ----------------------------------------------------------------------------------------

    @property
    def platform(self) -> Platform | None:
        """The cluster the slurm.conf describes (None without one): the CLI simulates it by default."""
        from clustersim.policies.slurm.conf import platform_from_conf

        return platform_from_conf(self._conf) if self._conf is not None else None

    def begin(self, view: ClusterView) -> None:
        platform = view.platform
        self._quiet_calls = view.quiet_calls
        conf = self._conf if self._conf is not None else _default_conf(platform)
        self._conf = conf
        _check_platform(conf, platform)
        unmodelled = unmodelled_settings(conf)
        if unmodelled:
            warnings.warn(
                f"{conf.source}: the slurm policy does not model {', '.join(unmodelled)}: simulated as if unset",
                UnmodelledSlurmSettings,
                stacklevel=2,
            )
        self._offsets: list[int] = []
        offset = 0
        for node in conf.nodes:
            self._offsets.append(offset)
            offset += node.cpus
        self._free = [node.cpus for node in conf.nodes]
        """Idle CPUs per node; only this policy starts jobs, so it keeps the count itself."""
        self._node_cpus = tuple(node.cpus for node in conf.nodes)
        self._idle_nodes = (1 << len(conf.nodes)) - 1
        """The nodes all of whose CPUs are idle (bitmap), kept as jobs start and CPUs come back."""
        self._free_ids = [list(range(node.cpus)) for node in conf.nodes]
        self._bf_memory = BackfillMemory()
        """What backfill cycles reuse while no job starts or ends."""
        self._entries: list[tuple[_Job, _Partition]] | None = None
        """The queue in Slurm's order (None: to be sorted again); kept in order as jobs come and go."""
        self._order: list[_QueueKey] = []
        """The sort key of each entry of `_entries`."""
        self._throttling = False
        """Whether an array is throttled (`%`): then one job's change moves others in or out of the queue."""
        self._queued_jobs = 0
        """How many jobs were ever queued (each job's `queued` rank)."""
        self._candidates: list[Candidate] = []
        self._running_records: list[Running] | None = None
        """What the will-run test sees of the running jobs (kept until a job starts or ends)."""
        self._kill_checks: dict[str, float] = {}
        self._first_limit: float | None = math.inf
        """The earliest end (start + limit) of a running job with a limit (None: to be recomputed)."""
        """Running jobs the model kills itself (no walltime): the 30 s check that will find them over."""
        self._by_candidate: dict[int, tuple[_Job, _Partition]] = {}
        index = conf.node_index()
        top = max((p.priority_job_factor for p in conf.partitions), default=1) or 1
        self._partitions: dict[str, _Partition] = {}
        for i, part in enumerate(conf.partitions):
            bitmap = sum(1 << index[name] for name in part.nodes)
            cpus = sum(conf.nodes[index[name]].cpus for name in part.nodes)
            self._partitions[part.name] = _Partition(part, i, bitmap, cpus, part.priority_job_factor / top)
        self._default_partition = self._partitions[conf.default_partition.name]
        self._up = (1 << len(conf.nodes)) - 1
        params = conf.scheduler_parameters
        self._timing = _Timing(
            sched_interval=float(_param(params, "sched_interval", 60, conf)),
            batch_sched_delay=float(_param(params, "batch_sched_delay", 3, conf)),
            queue_depth=_param(params, "default_queue_depth", 100, conf),
            calc_period=conf.time("PriorityCalcPeriod", 300.0) or 300.0,
        )
        self._backfill = conf.get("SchedulerType", "sched/backfill").lower() != "sched/builtin"
        weights = tuple(node.weight for node in conf.nodes)
        select_type = conf.get("SelectType", DEFAULT_SELECT).lower()
        default_params = "" if select_type == "select/linear" else DEFAULT_SELECT_PARAMETERS
        words = {word.strip().upper() for word in conf.get("SelectTypeParameters", default_params).split(",")
                 if word.strip()}
        if select_type == "select/linear" and words & {"CR_CPU", "CR_CORE", "CR_CPU_MEMORY", "CR_CORE_MEMORY"}:
            raise InputError(conf.source, f"SelectTypeParameters={conf.get('SelectTypeParameters')} with "
                             f"SelectType={select_type}: slurmd refuses it (select/linear allocates whole nodes; "
                             "set SelectType=select/cons_tres)", field="SelectTypeParameters")
        memory = bool(words & MEMORY_PARAMETERS) and select_type != "select/linear"
        self._real_memory = tuple(node.real_memory for node in conf.nodes) if memory else None
        self._other = self._idle_consumables()
        """Memory free per node when a consumable resource (CR_CPU_Memory, CR_Core_Memory), and GRES free."""
        self._consumables = self._other.memory is not None or bool(self._other.gres)
        self._sizes = tuple(node.cpus for node in conf.nodes)
        self._linear = select_type == "select/linear"
        self._def_mem_per_cpu = conf.integer("DefMemPerCPU", 0)
        self._bf = BackfillParameters(
            interval=float(_param(params, "bf_interval", 30, conf)),
            resolution=float(_param(params, "bf_resolution", 60, conf)),
            window=60.0 * _param(params, "bf_window", 1440, conf),
            max_job_test=_param(params, "bf_max_job_test", 500, conf),
            continue_="bf_continue" in params,
            kill_wait=float(conf.integer("KillWait", 30)),
            over_time_limit=_over_time_limit(conf),
            weights=weights if len(set(weights)) > 1 else None,
            node_cpus=tuple(node.cpus for node in conf.nodes),
        )
        self._enforce_limits = conf.get("EnforcePartLimits", "NO").upper() not in ("NO", "0", "")
        cluster_cpus = sum(node.cpus for node in conf.nodes)
        self._plugin: PriorityPlugin
        if conf.get("PriorityType", "priority/basic").lower() == "priority/multifactor":
            self._plugin = MultifactorPriority(conf, cluster_cpus, len(conf.nodes), self._qos)
        else:
            self._plugin = BasicPriority()
        start = self._ctld
        self._last_sched = start
        self._next_full = start + self._timing.sched_interval
        self._request: float | None = None
        """When the oldest unserved request for a scheduling pass (a submission, a job end) was made."""
        self._request_due = math.inf
        """When the background loop's tick serving the unserved requests comes (the earliest request's latency)."""
        # The backfill thread first looks at t = start + bf_interval, with work to do (node registrations).
        self._last_bf = start
        self._bf_work_at: float | None = start
        """When something first changed since the last backfill cycle (Slurm's `_more_work`); None: nothing."""
        self._last_update = start
        self._planned_idle = False
        """Whether the last backfill cycle left planned nodes that hold no job (Slurm's PLANNED nodes)."""
        self._idle_planned = (-1, False)
        """`_plans_idle_node` as of a count of `_changes`."""
        self._last_calc = start
        self._next_calc = start + self._timing.calc_period
        self._skip_idle_backfill(0.0)

    # -- decisions -------------------------------------------------------------------------------------

    def decide(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        if not self._quiet_calls:
            yield from self._instant(now, events)
            return
        # The calls left out before now were quiet: their bookkeeping first, then this call, unless it is only
        # the end of a quiet stretch, asked here and not a call the model would have asked.
        self._catch_up_calls(now)
        bound = now in self._asked and now not in self._issued
        self._issued.discard(now)
        self._asked = {t for t in self._asked if t > now}
        if not bound or not all(type(event) is RequestedCall for event in events):
            yield from self._instant(now, events)
        call = self._ask_call()
        if call is not None:
            yield call

    def _instant(self, now: float, events: Sequence[Event]) -> Iterator[Decision]:
        """What the model does when called at now: Slurm's threads that are due, then the next call."""
        self._calls = {t for t in self._calls if t > now + _EPS}
        self._skip_idle_backfill(now)
        self._catch_up_priorities(now)
        self._complete_epilogs(now)
        for event in events:
            if isinstance(event, JobSubmitted):
                rejected = self._submit(event.job, now)
                if rejected is not None:
                    yield rejected
            elif isinstance(event, JobCompleted):
                self._end(event.job.key, now, event.state)
                if event.job.key in self._running and self._epilog_delay <= 0:
                    self._release(event.job.key, now)
            elif isinstance(event, NoMoreJobs):
                self._no_more_jobs = True
        yield from self._enforce_time_limits(now)
        full = self._full_due(now)
        tick = self._tick_time()
        if full or (tick is not None and now >= tick - _EPS):
            self._last_sched = now
            self._request = None
            yield from self._main_pass(now, full=full)
        due = self._bf_due()
        if self._backfill and due is not None and now >= due - _EPS:
            yield from self._backfill_cycle(now)
        call = self._wake_up(now)
        if call is not None:
            yield call

    def _submit(self, job: Job, now: float) -> Decision | None:
        """`_slurm_rpc_submit_batch_job`: reject what Slurm rejects, else queue the job (one entry per partition)."""
        names = [name.strip() for name in job.queue.split(",")] if job.queue else []
        if any(name not in self._partitions for name in names):
            return RejectJob(job.key)  # "Invalid partition name specified"
        named = [self._partitions[name] for name in dict.fromkeys(names)] or [self._default_partition]
        first = named[0].conf
        limit = _minutes(job.walltime)
        if limit is None:
            limit = _minutes(first.default_time) if first.default_time is not None else _minutes(first.max_time)
        too_long = frozenset(
            p.index for p in named if p.conf.max_time is not None and (limit is None or limit > p.conf.max_time)
        )
        options = sbatch_options(job)
        shape = self._shape(job, options, first)
        if shape is not None and shape.nodes is not None:
            too_long |= {p.index for p in named if p.conf.max_nodes is not None and shape.nodes > p.conf.max_nodes}
        holding = tuple(p for p in named if self._fits_empty(job, shape, p))
        if not holding or job.nb_res <= 0 or (too_long and self._enforce_limits):
            return RejectJob(job.key)  # "Requested node configuration is not available" / a partition limit
        dependencies = self._dependencies(job)
        if dependencies is None:
            return RejectJob(job.key)  # "Job dependency problem"
        array = self._arrays.get(f"{job.workload}!{job.extra['array_job']}") if "array_job" in job.extra else None
        if array is None:
            self._seq += 1
        factors = JobFactors(
            cpus=job.nb_res, min_nodes=(shape.nodes or 1) if shape is not None else 1, eligible=now, user=job.user,
            account=job.group or "root",
            partition_factor=named[0].norm_priority,
            time_limit_minutes=None if limit is None else limit / 60, qos=str(job.extra.get("qos", "normal")),
        )
        info = _Job(job, self._seq if array is None else array.job_id, now, job.nb_res, named[0], limit, factors,
                    holding, too_long=too_long, shape=shape)
        # The tasks of an array share the first one's job id and priority; they queue in task order.
        first_priority = self._plugin.initial(factors, now) if array is None else array.priority
        if "array_job" in job.extra and options is not None:
            info.array = self._arrays.setdefault(
                f"{job.workload}!{job.extra['array_job']}",
                _Array(info.job_id, first_priority, options.throttle))
            self._throttling = self._throttling or info.array.throttle is not None
            info.array.tasks.append(job.key)
            suffix = job.id.rpartition("_")[2]
            info.task = int(suffix) if suffix.isdigit() else 0
        info.priorities = {p.index: first_priority for p in named}
        if len(named) > 1:
            self._set_priorities(info, now)
        for kind, dependee in dependencies:
            info.dependencies.append((kind, dependee))
            self._dependents.setdefault(dependee, []).append(info)
        self._queued_jobs += 1
        info.queued = self._queued_jobs
        self._pending[job.key] = info
        self._requeued(info, queued=True)
        self._ask_for_pass(now, self._submit_latency)
        return None

    def _shape(self, job: Job, options: SbatchOptions | None, part: PartitionConf) -> Shape | None:
        """The job's request as select sees it (None: `nb_res` CPUs anywhere, memory not consumable).

        An sbatch-options job brings its own; under select/linear every job takes whole nodes; with memory
        consumable, a job naming no memory gets DefMemPerGPU per GPU if it asks GPUs and `part` (its first
        partition) or the conf sets it, else DefMemPerCPU per CPU, or without it all of each node's memory.
        A job asking GPUs without `-c` or `--cpus-per-gpu` gets DefCpuPerGPU likewise (measured on 22.05).
        """
        if options is None and not self._linear and self._real_memory is None:
            return None  # `nb_res` CPUs anywhere (`SbatchRequest(job.nb_res)` is plain)
        request = options.request if options is not None else SbatchRequest(job.nb_res)
        if request.plain and not self._linear and self._real_memory is None:
            return None
        gpus = request.gpus_asked > 0
        per_gpu = request.cpus_per_gpu
        if gpus and not per_gpu and not request.cpus_per_task_given and part.def_cpu_per_gpu:
            per_gpu = part.def_cpu_per_gpu
        mem, per_cpu, mem_per_gpu = request.mem, request.mem_per_cpu, None
        if self._real_memory is not None and mem is None and per_cpu is None:
            if gpus and part.def_mem_per_gpu:
                mem_per_gpu = part.def_mem_per_gpu
            elif self._def_mem_per_cpu:
                per_cpu = self._def_mem_per_cpu
            else:
                mem = 0
        return Shape(request.ntasks, request.cpus_per_task, request.nodes, request.ntasks_per_node,
                     request.exclusive or self._linear, mem, per_cpu, request.max_nodes, request.per_node_tasks,
                     request.gres, request.gpus, request.gpus_per_task, request.gpu_type, per_gpu, mem_per_gpu,
                     request.tasks_unknown)

    def _shaped(self, info: _Job, part: _Partition) -> ShapedRequest | None:
        """The job's shaped request in a partition (made once; None for a plain job in a partition without
        MaxNodes)."""
        request = info.requests.get(part.index)
        if request is None:
            if info.shape is None and part.conf.max_nodes is None:
                return None
            shape = info.shape if info.shape is not None else Shape(info.cpus)
            request = ShapedRequest(shape, self._sizes, self._real_memory, part.conf.max_nodes, self._bf.weights)
            info.requests[part.index] = request
        return request

    def _fits_empty(self, job: Job, shape: Shape | None, part: _Partition) -> bool:
        """Whether the job fits the partition's nodes when they are idle: Slurm rejects it at submission
        otherwise (an explicit `-N` above MaxNodes waits instead: it is checked without MaxNodes)."""
        if shape is None and part.conf.max_nodes is None:
            return job.nb_res <= part.cpus
        shape = shape if shape is not None else Shape(job.nb_res)
        max_nodes = None if shape.nodes is not None else part.conf.max_nodes
        request = ShapedRequest(shape, self._sizes, self._real_memory, max_nodes, self._bf.weights)
        return request.select(part.nodes, self._sizes, self._idle_consumables()) is not None

    def _idle_consumables(self) -> Consumables:
        """Memory (when consumable) and GRES of the idle cluster."""
        nodes = self._conf.nodes if self._conf is not None else ()
        names = dict.fromkeys(name for node in nodes for name, _ in node.gres + node.gres_types)
        return Consumables(None if self._real_memory is None else list(self._real_memory),
                           {name: [dict(node.gres + node.gres_types).get(name, 0) for node in nodes] for name in names})

    def _select(self, info: _Job, part: _Partition, avail: int) -> Allocation | None:
        request = None if info.shape is None and part.conf.max_nodes is None else self._shaped(info, part)
        if request is None:
            if self._bf_memory.idle_cpus(part.nodes & avail, self._free) < info.cpus:
                return None  # select_cpus fails exactly then
            return select_cpus(info.cpus, part.nodes & avail, self._free, weights=self._bf.weights)
        return request.select(part.nodes & avail, self._free, self._other)

    def _candidate(self, info: _Job, part: _Partition) -> Candidate:
        """The job as the backfill pass tests it in `part` (made once per job and partition)."""
        candidate = info.candidates.get(part.index)
        if candidate is None:
            candidate = Candidate(info.job.key, info.cpus, part.nodes if part.conf.up else 0, _bf_limit(info, part),
                                  self._shaped(info, part))
            info.candidates[part.index] = candidate
        return candidate

    def _dependencies(self, job: Job) -> list[tuple[str, str]] | None:
        """The job's unmet dependencies as (type, job key); None when one names no job Slurm knows.

        `--dependency=afterok:1:2,afterany:3` is `Job.extra["dependency"]`; an SWF record's preceding job
        (`Job.extra["preceding_job"]`) is `afterany` on it, and is met when that job is not in the simulation.
        """
        wanted: list[tuple[str, str, bool]] = []
        text = str(job.extra.get("dependency", "") or "")
        for item in filter(None, (part.strip() for part in text.replace("?", ",").split(","))):
            kind, _, ids = item.partition(":")
            if kind not in ("afterok", "afterany") or not ids:
                raise InputError(job.key, f"dependency '{item}' is not afterok:ID[:ID...] or afterany:ID[:ID...]",
                                 field="dependency")
            wanted.extend((kind, f"{job.workload}!{i.partition('+')[0]}", True) for i in ids.split(":"))
        preceding = job.extra.get("preceding_job")
        if preceding is not None:
            wanted.append(("afterany", f"{job.workload}!{preceding}", False))
        unmet: list[tuple[str, str]] = []
        wanted = [(kind, task, strict) for kind, key, strict in wanted  # an array: all its tasks
                  for task in (self._arrays[key].tasks if key in self._arrays else [key])]
        for kind, key, strict in wanted:
            state = self._ended.get(key)
            if state is not None:
                if kind == "afterok" and state is not FinalState.COMPLETED_SUCCESSFULLY:
                    return None  # Slurm refuses a dependency that can never be satisfied
                continue
            if key in self._pending or key in self._running:
                unmet.append((kind, key))
            elif strict:
                return None
        return unmet

    def _set_priorities(self, info: _Job, now: float) -> None:
        """Multifactor priorities in each of its partitions (their PriorityJobFactor differ); basic: one for all."""
        if not isinstance(self._plugin, MultifactorPriority):
            return
        for part in info.partitions:
            factors = replace(info.factors, partition_factor=part.norm_priority)
            info.priorities[part.index] = self._plugin.recalculate(factors, now)

    def _end(self, key: str, now: float, state: FinalState) -> None:
        self._ended[key] = state
        dependents = self._dependents.pop(key, [])
        if dependents or key not in self._running or self._throttling:
            # Dependents become runnable (or never will), a pending job leaves the queue, or a throttled array
            # may let another task in once this one's CPUs come back.
            self._changed()
        else:
            self._changes += 1  # a running job ended: the queue stays as it is
        for dependent in dependents:
            met = [(kind, k) for kind, k in dependent.dependencies if k == key]
            dependent.dependencies = [(kind, k) for kind, k in dependent.dependencies if k != key]
            if any(kind == "afterok" for kind, _ in met) and state is not FinalState.COMPLETED_SUCCESSFULLY:
                dependent.never = True
        self._kill_checks.pop(key, None)
        if key not in self._running:
            self._pending.pop(key, None)
            return
        if self._epilog_delay > 0:
            self._completing[key] = now + self._epilog_delay

    def _complete_epilogs(self, now: float) -> None:
        """`_slurm_rpc_epilog_complete`: the CPUs of the jobs whose epilog is done come back."""
        if not self._completing:
            return
        for key in [key for key, at in self._completing.items() if at <= now + _EPS]:
            del self._completing[key]
            self._release(key, now)

    def _release(self, key: str, now: float) -> None:
        """Free an ended job's CPUs and ask for a pass (`queue_job_scheduler`: measured, the pass comes with the
        background loop's next tick, not at once)."""
        info = self._running.pop(key)
        self._changes += 1
        if info.limit is not None and info.slurm_end == self._first_limit:
            self._first_limit = None
        self._running_records = None
        if info.array is not None:
            info.array.running -= 1
        self._bf_memory.clear()
        for node, ids in info.cpu_ids.items():
            self._free_ids[node] = sorted(self._free_ids[node] + ids)
            self._free[node] += len(ids)
            if self._free[node] == self._node_cpus[node]:
                self._idle_nodes |= 1 << node
        self._other.add(info.memory, info.gres)
        if isinstance(self._plugin, MultifactorPriority) and self._plugin.accounting:
            elapsed = now - max(self._last_calc, info.start)
            self._plugin.fairshare.charge(info.factors.user, info.factors.account, info.cpus, elapsed)
        self._ask_for_pass(now, self._latency)

    def _changed(self) -> None:
        """The queue changed (a job, its order or its dependencies): sorted again at the next pass."""
        self._entries = None
        self._changes += 1

    def _requeued(self, info: _Job, queued: bool) -> None:
        """A job joined the pending jobs (`queued`) or left them: its entries take or leave their place in the
        kept order by bisection; a job leaves on new lists (it starts while a pass goes through the old ones), a
        job joins in place (at its submission, when no pass runs). Sorted again instead while arrays are
        throttled (one task's change moves others)."""
        self._changes += 1
        entries = self._entries
        if entries is None or self._throttling:
            self._entries = None
            return
        if queued and not info.runnable:
            return
        candidates, order = self._candidates, self._order
        if not queued:
            entries, candidates = entries.copy(), candidates.copy()
        for position, part in enumerate(info.partitions):
            if part.index in info.too_long:
                continue
            key = _queue_key(info, part, position)
            at = bisect.bisect_left(order, key)
            if queued:
                candidate = self._candidate(info, part)
                order.insert(at, key)
                entries.insert(at, (info, part))
                candidates.insert(at, candidate)
                self._by_candidate[id(candidate)] = (info, part)
            else:
                assert order[at] == key, "a job left the queue from a place it did not hold"
                del order[at], entries[at]
                self._by_candidate.pop(id(candidates.pop(at)), None)
        self._entries, self._candidates = entries, candidates

    def _ask_for_pass(self, now: float, latency: float) -> None:
        """`queue_job_scheduler`: a submission or a job end asks the background loop for a pass, which comes
        `latency` later (at the loop's tick) unless an earlier request's comes first."""
        if self._request is None:
            self._request = now
            self._request_due = now + latency
        else:
            self._request_due = min(self._request_due, now + latency)
        self._note_work(now)
        self._stuck = False

    def _tick_time(self) -> float | None:
        """When the background loop serves the pending request: at its next tick, once batch_sched_delay has
        passed since its last pass (`_hold_end`)."""
        if self._request is None:
            return None
        return max(self._request_due, self._hold_end())

    def _hold_end(self) -> float:
        """The first tick at which batch_sched_delay lets the loop run a pass again. Slurm tests
        `difftime(now, last_sched_time) >= batch_sched_delay` at each tick, on whole epoch seconds (`time_t`, the
        last pass's second): the first tick whose second is batch_sched_delay past the last pass's, the ticks
        `loop_period` apart from the last pass. With a period over 1 s that is batch_sched_delay periods after
        it (one fewer when the last pass came late enough in its second), not batch_sched_delay seconds."""
        last = self._last_sched
        if last != self._held_from:
            second = self._second(last) + self._timing.batch_sched_delay - self._epoch
            ticks = max(0, math.ceil((second - last) / self._loop_period - _EPS))
            self._held_from, self._held_until = last, last + ticks * self._loop_period
        return self._held_until

    # -- the main scheduler --------------------------------------------------------------------------

    def _queue(self) -> list[tuple[_Job, _Partition]]:
        """Runnable pending jobs in Slurm's order, one entry per partition (`build_job_queue`): partition tier,
        priority, submit time, job id. Kept until a job is submitted, starts or ends, or a priority changes."""
        if self._entries is None:
            throttled = self._throttled()
            rows = sorted(
                (_queue_key(info, part, position), info, part)
                for info in self._pending.values() if info.runnable and info.job.key not in throttled
                for position, part in enumerate(info.partitions) if part.index not in info.too_long
            )
            self._order = [key for key, _, _ in rows]
            entries = [(info, part) for _, info, part in rows]
            self._entries = entries
            self._candidates = [self._candidate(info, part) for info, part in entries]
            self._by_candidate = {id(c): entry for c, entry in zip(self._candidates, entries, strict=True)}
        return self._entries

    def _throttled(self) -> set[str]:
        """Array tasks held by their array's `%` limit (reason JobArrayTaskLimit): all but the first
        `throttle - running` runnable pending tasks of each array, so that no pass can start more."""
        held: set[str] = set()
        for array in self._arrays.values():
            if array.throttle is None:
                continue
            free = array.throttle - array.running
            for key in array.tasks:
                info = self._pending.get(key)
                if info is not None and info.runnable:
                    if free > 0:
                        free -= 1
                    else:
                        held.add(key)
        return held

    def _main_pass(self, now: float, full: bool) -> Iterator[Decision]:
        """`_schedule`: start jobs in priority order; a job that does not fit closes its partition's nodes.

        A full pass on the state of the last pass that started nothing, and that the queue depth did not cut
        short, starts nothing again (its only effect, a skipped job's update, is known)."""
        if full and self._repeats_idle_pass(now):
            return
        changes = self._changes
        avail = self._up
        failed: set[int] = set()
        depth = 0
        limit = self._timing.queue_depth
        skipped = False
        cut = False
        closed = {p.index for p in self._partitions.values() if not p.conf.up}
        queue = self._queue()
        for position, (info, part) in enumerate(queue):
            if info.job.key not in self._pending:
                continue  # started from an entry of another partition
            if not full:
                if depth > limit:
                    cut = True
                    break
                depth += 1
            if part.index in failed or part.index in closed:
                skipped = True  # Slurm sets the job's reason to Priority: an update
                continue
            allocation = self._select(info, part, avail)
            if allocation is None:
                failed.add(part.index)
                avail &= ~part.nodes
                if len(failed) + len(closed) == len(self._partitions):
                    # Every later entry would only be skipped: whether one is reached is all that is left.
                    later = any(i.job.key in self._pending for i, _ in queue[position + 1:])
                    skipped = skipped or (later and (full or depth <= limit))
                    cut = cut or (not full and depth > limit)
                    break
                continue
            yield self._start(info, allocation, now, part)
        if skipped:
            self._note_work(now)
        if changes == self._changes and not cut:
            self._idle_full, self._idle_skipped = changes, skipped
        if full and not self._running and self._pending:
            self._stuck = True

    def _repeats_idle_pass(self, now: float) -> bool:
        """Whether a full pass at now repeats the last pass that started nothing (`_main_pass`), its effect then
        applied: a skipped job's update."""
        if self._idle_full != self._changes:
            return False
        if self._idle_skipped:
            self._note_work(now)
        if not self._running and self._pending:
            self._stuck = True
        return True

    def _start(self, info: _Job, allocation: Allocation, now: float, part: _Partition) -> StartJob:
        """Take the lowest free CPU ids of each allocated node (Slurm's CPU_IDs are lowest first), of the highest
        ones a GRES job may use there (as real Slurm 22.05 does: docs/slurm.md, GRES)."""
        self._bf_memory.clear()
        self._running_records = None
        units: list[int] = []
        cpu_ids: dict[int, list[int]] = {}
        reported = _asked(allocation, info.cpus) if sum(allocation.values()) > info.cpus else allocation
        for node, count in sorted(allocation.items()):
            ids = self._free_ids[node]
            skip = len(ids) - self._gres_cpus(info.shape, node, count)
            taken, self._free_ids[node] = ids[skip:skip + count], ids[:skip] + ids[skip + count:]
            cpu_ids[node] = taken
            self._free[node] -= count
            if self._free[node] != self._node_cpus[node]:
                self._idle_nodes &= ~(1 << node)
            offset = self._offsets[node]
            units.extend(offset + cpu for cpu in taken[:reported[node]])
        request = self._shaped(info, part)
        if request is not None:
            info.memory, info.gres = request.holds(allocation, self._other)
            self._other.add(info.memory, info.gres, -1)
        del self._pending[info.job.key]
        self._requeued(info, queued=False)
        if info.array is not None:
            info.array.running += 1
        info.partition = part
        info.start = now
        info.start_second = self._second(now) - self._epoch
        info.allocation = allocation
        info.cpu_ids = cpu_ids
        info.running = Running(info.job.key, info.slurm_end, allocation, node_bitmap(allocation), info.limit,
                               info.memory, info.gres)
        over = self._bf.over_time_limit
        walltime = info.job.walltime
        if over is not None and info.limit is not None and (walltime is None or walltime > info.limit):
            kill = info.slurm_end + over
            self._kill_checks[info.job.key] = (
                self._ctld + math.ceil((kill - self._ctld) / PERIODIC_TIMEOUT - _EPS) * PERIODIC_TIMEOUT)
        self._running[info.job.key] = info
        if info.limit is not None and self._first_limit is not None:
            self._first_limit = min(self._first_limit, info.slurm_end)
        self._note_work(now)
        return StartJob(info.job.key, IntervalSet.from_ids(units))

    def _gres_cpus(self, shape: Shape | None, node: int, count: int) -> int:
        """How many of a node's free CPUs, the highest, a job may take `count` of: those of the tasks it may run
        there when cons_tres knows their number (`Shape.known_tasks`, GRES jobs: measured on real Slurm
        22.05), else all of them (the lowest are taken first)."""
        ids = len(self._free_ids[node])
        known = None if shape is None else shape.known_tasks(
            self._other.gres[shape.gpu_name][node] if shape.gpus_per_task else 0)
        if shape is None or known is None:
            return ids
        return max(count, min(ids, known * shape.cpus_per_task))

    # -- the backfill scheduler ----------------------------------------------------------------------

    def _backfill_cycle(self, now: float) -> Iterator[Decision]:
        """`_attempt_backfill` on the runnable queue (clustersim.policies.slurm.backfill)."""
        self._last_bf = now
        queue = self._queue()
        candidates, by_candidate = self._candidates, self._by_candidate
        if self._running_records is None:
            self._running_records = [info.running for info in self._running.values() if info.running is not None]
        running = self._running_records  # backfill_cycle works on a sorted copy
        started = False
        second = self._second(now) - self._epoch  # backfill.c works in whole seconds (time_t)
        cycle = backfill_cycle(second, candidates, self._free, running, self._up, self._bf, self._epoch,
                               self._bf_memory, self._other if self._consumables else None)
        for candidate, allocation in cycle:
            started = True
            info, part = by_candidate[id(candidate)]
            yield self._start(info, allocation, now, part)
        # Slurm compares update times with the cycle's in whole seconds (`>=`): a change in the same second as
        # the cycle, even just before it, is work for the next cycle.
        # A cycle that only plans reservations changes nothing Slurm counts as an update: only starts do.
        self._cycle_done(now, started)
        if queue and not started and not self._running:
            self._stuck = True

    def _cycle_done(self, now: float, started: bool) -> None:
        """The work left for the next cycle (Slurm's `_more_work`): none unless the cycle started a job, a
        change came in its second, or it marks or clears planned nodes.

        A cycle's last step (`_handle_planned`) marks the nodes it planned for a pending job that hold no job
        (PLANNED) and sets last_node_update; the next cycle first clears them, again setting it. Both fall in the
        cycle's own second, so while a job waits for nodes one of which holds no job, and once more after, the
        thread cycles every bf_interval instead of waiting for a change."""
        same_second = self._second(self._last_update) >= self._second(now)
        cleared, self._planned_idle = self._planned_idle, self._plans_idle_node()
        self._bf_work_at = now if started or same_second or self._planned_idle or cleared else None

    def _plans_idle_node(self) -> bool:
        """Whether a runnable pending job is planned on a node that holds no job: a job waits while a node of
        its partitions holds none (backfill plans whole nodes, and that one is usable over the whole plan).
        Known until the next change (a start, an end's CPUs back, a submission, a dependency met)."""
        if self._idle_planned[0] != self._changes:
            idle = self._idle_nodes & self._up
            planned = bool(idle) and any(part.nodes & idle for info in self._pending.values() if info.runnable
                                         for part in info.partitions if part.index not in info.too_long)
            self._idle_planned = (self._changes, planned)
        return self._idle_planned[1]

    # -- periodic activities -------------------------------------------------------------------------

    def _note_work(self, now: float) -> None:
        """A job or node changed (Slurm's last_job_update / last_node_update)."""
        self._last_update = now
        if self._bf_work_at is None:
            self._bf_work_at = now

    def _second(self, t: float) -> int:
        """The whole epoch second of simulated time t (Slurm's time_t)."""
        return math.floor(t + self._epoch + _EPS)

    def _bf_due(self) -> float | None:
        """When the backfill thread runs next: bf_interval after its last cycle if something changed by then,
        else at its first one-second check after the change (None: nothing changed)."""
        if self._bf_work_at is None:
            return None
        base = self._last_bf + self._bf.interval
        late = self._bf_work_at - base
        return base if late <= _EPS else base + math.ceil(late - _EPS)

    def _skip_idle_backfill(self, now: float) -> None:
        """Cycles due before now while nothing was pending ran on an empty queue: they only set the phase (the
        first clears the nodes the last cycle planned, work for one more)."""
        due = self._bf_due()
        while due is not None and due < now - _EPS and not self._pending:
            self._last_bf = due
            cleared, self._planned_idle = self._planned_idle, False
            self._bf_work_at = due if cleared else None
            due = self._bf_due()

    def _full_due(self, now: float) -> bool:
        """Whether the background loop runs the whole queue now (every sched_interval since slurmctld started).

        Passes at instants the model was not woken for (nothing pending) still count as the last pass.
        """
        due = False
        while self._next_full <= now + _EPS:
            if abs(self._next_full - now) <= _EPS:
                due = True
            else:
                self._last_sched = max(self._last_sched, self._next_full)
                if self._request is not None and self._request <= self._next_full:
                    self._request = None
            self._next_full += self._timing.sched_interval
        return due

    def _catch_up_priorities(self, now: float) -> None:
        plugin = self._plugin
        if not plugin.recalculates or not isinstance(plugin, MultifactorPriority):
            return
        fairshare = plugin.fairshare
        while self._next_calc <= now + _EPS:
            tick = self._next_calc
            fairshare.decay(tick - self._last_calc)
            for info in self._running.values():
                fairshare.charge(info.factors.user, info.factors.account, info.cpus,
                                 tick - max(self._last_calc, info.start))
            fairshare.update_factors()
            for info in self._pending.values():
                before = dict(info.priorities)
                for part in info.partitions:
                    factors = replace(info.factors, partition_factor=part.norm_priority)
                    info.priorities[part.index] = plugin.recalculate(factors, tick)
                if info.priorities != before:
                    self._changed()
                    self._note_work(tick)
            self._last_calc = tick
            self._next_calc = tick + self._timing.calc_period

    def _enforce_time_limits(self, now: float) -> list[KillJob]:
        """`job_time_limit`: every 30 s, kill the jobs OverTimeLimit past their limit (never when UNLIMITED)."""
        over = self._bf.over_time_limit
        if over is None or not self._running:
            return []
        if self._first_limit is None:
            self._first_limit = min((i.slurm_end for i in self._running.values() if i.limit is not None),
                                    default=math.inf)
        if self._first_limit + over > now + _EPS or not _on_period(now - self._ctld, PERIODIC_TIMEOUT):
            return []  # no running job is past its limit yet
        return [KillJob(key) for key, info in self._running.items()
                if key not in self._completing  # ended: only its epilog is left
                and info.limit is not None and info.slurm_end + over <= now + _EPS]

    def _wake_up(self, now: float) -> CallMeLater | None:
        """The call the model asks for next: the earliest time after now at which one of Slurm's threads is due
        (None when there is none, it is asked already, or quiet calls keep it to themselves: `_issued`)."""
        after = now + _EPS
        times: list[float] = []
        stuck = self._stuck and not self._running and self._no_more_jobs
        tick = self._tick_time()
        if tick is not None:
            times.append(tick)
        if self._pending and not stuck:
            times.append(self._next_full)
            if self._plugin.recalculates:
                times.append(self._next_calc)
        due = self._bf_due()
        if self._backfill and due is not None and not stuck:
            times.append(due)  # even on an empty queue: the cycle sets the phase of the next ones
        if self._kill_checks:
            times.extend(self._kill_checks.values())
        if self._completing:
            times.extend(self._completing.values())
        wake = math.inf
        found = False
        for t in times:
            if t > after and (not found or t < wake):
                wake, found = t, True
        if not found or not all(abs(wake - t) > _EPS for t in self._calls):
            return None
        self._calls.add(wake)
        if self._quiet_calls:
            self._issued.add(wake)
            return None
        return CallMeLater(wake)

    # -- quiet calls (`ClusterView.quiet_calls`) -----------------------------------------------------

    def _quiet_until(self) -> float:
        """Until when (exclusive) the calls are quiet: the model, called then, would start, kill and change
        nothing but the phase of its threads (-inf: not known to be quiet now).

        While no job is submitted or ends: every full pass repeats the last one, which started nothing; the
        backfill cycles are known to start nothing (`idle_until`), up to the end of that knowledge; no
        priority is recalculated, no epilog completes, no running job comes within reach of the time-limit
        check. A tick pass (a pending request) is never quiet.
        """
        if not (self._running and self._pending) or self._request is not None or self._idle_full != self._changes:
            return -math.inf
        bound = math.inf
        if self._backfill and (self._bf_work_at is not None or self._idle_skipped):
            second = self._second(self._last_bf) - self._epoch
            self._queue()
            # A cycle at t works at its whole second, at most t (less rounding on epoch times): 1 s of margin.
            bound = idle_until(second, self._candidates, self._free, self._up, self._bf_memory) - 1.0
        if self._plugin.recalculates:
            bound = min(bound, self._next_calc - _QUIET_MARGIN)
        over = self._bf.over_time_limit
        if over is not None:
            if self._first_limit is None:
                self._first_limit = min((i.slurm_end for i in self._running.values() if i.limit is not None),
                                        default=math.inf)
            bound = min(bound, self._first_limit + over - _QUIET_MARGIN)
        for times in (self._kill_checks, self._completing):
            if times:
                bound = min(bound, min(times.values()) - _QUIET_MARGIN)
        return bound

    def _ask_call(self) -> CallMeLater | None:
        """The call to ask of the core unless it is quiet; for the end of the quiet stretch then (a call the
        model would not have asked: it only goes through the quiet calls before it). None: nothing to ask."""
        if not self._issued:
            return None
        first = min(self._issued)
        quiet = self._quiet_until()
        target = quiet if first < quiet else first
        if target < math.inf and target not in self._asked:
            self._asked.add(target)
            return CallMeLater(target)
        return None

    def _catch_up_calls(self, now: float) -> None:
        """Go through the quiet calls left out before now, as `_instant` does with no event (and yields
        nothing, as they are quiet): the passes and cycles due there only set the phase."""
        issued = self._issued
        while issued:
            call = min(issued)
            if call >= now:
                return
            issued.discard(call)
            self._calls = {t for t in self._calls if t > call + _EPS}
            if self._full_due(call):
                self._last_sched = call
                if not self._repeats_idle_pass(call):  # else no pass to make: it is known to start nothing
                    for _ in self._main_pass(call, full=True):
                        raise AssertionError("a quiet full pass started a job")
            due = self._bf_due()
            if self._backfill and due is not None and call >= due - _EPS:
                self._last_bf = call
                self._cycle_done(call, started=False)
            if self._wake_up(call) is not None:
                raise AssertionError("quiet calls are not asked")


@register_policy("slurm")
class Slurm(Policy):
    """Slurm 22.05's main and backfill schedulers, priority plugins and cons_tres CPU allocation.

    The policy users name: `SlurmModel` (its options, the same) does the work, and `model` holds its state."""

    def __init__(
        self,
        conf: str | Path | SlurmConf | None = None,
        ctld_start: float | str = -600.0,
        sched_latency: float | str = SCHED_LATENCY,
        clock_origin: float | str = 0.0,
        qos_priorities: str | Mapping[str, int] = "",
        epilog_delay: float | str = EPILOG_DELAY,
        submit_latency: float | str = SUBMIT_LATENCY,
        loop_period: float | str = DEFAULT_LOOP_PERIOD,
    ) -> None:
        self.model = SlurmModel(conf, ctld_start, sched_latency, clock_origin, qos_priorities, epilog_delay,
                                submit_latency, loop_period)

    @property
    def platform(self) -> Platform | None:
        """The cluster the slurm.conf describes (None without one): the CLI simulates it by default."""
        return self.model.platform

    def begin(self, view: ClusterView) -> None:
        self.model.begin(view)

    def decide(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterator[Decision]:
        return self.model.decide(now, events, view)


_QueueKey = tuple[int, int, float, int, int, int, int]


def _queue_key(info: _Job, part: _Partition, position: int) -> _QueueKey:
    """A queue entry's place (`build_job_queue`'s order): partition tier, priority, submit time, job id, then
    array task, then the order the jobs and their partitions were queued in (keys are unique)."""
    return (-part.conf.priority_tier, -info.priorities[part.index], info.submit, info.job_id, info.task,
            info.queued, position)


def _on_period(elapsed: float, period: float) -> bool:
    return elapsed > 0 and abs(elapsed / period - round(elapsed / period)) * period <= 1e-6


def _minutes(seconds: float | None) -> float | None:
    """A time limit as Slurm keeps it: whole minutes, rounded up, at least one."""
    if seconds is None:
        return None
    return 60.0 * max(1, math.ceil(seconds / 60 - 1e-9))


def _bf_limit(info: _Job, part: _Partition) -> float:
    part_max = part.conf.max_time
    limits = [t for t in (info.limit, part_max) if t is not None]
    return min(limits) if limits else YEAR


def _asked(allocation: Allocation, cpus: int) -> Allocation:
    """The CPUs a job holding whole nodes reports (the core counts the CPUs it asked): on each node in order as
    many as are left after one for each later node, so that every node it holds shows."""
    asked: Allocation = {}
    remaining = cpus
    nodes = sorted(allocation)
    for position, node in enumerate(nodes):
        asked[node] = max(0, min(allocation[node], remaining - (len(nodes) - position - 1)))
        remaining -= asked[node]
    return asked



def unmodelled_settings(conf: SlurmConf) -> list[str]:
    """What a slurm.conf sets that the model does not model, each as `Key`, `Key=value` or `Line: Key`."""
    out = [
        conf.original_keys.get(key, key)
        for key in conf.settings
        if key not in MODELLED and key not in NOT_SCHEDULING
    ]
    out += [f"SchedulerParameters {name}" for name in conf.scheduler_parameters if name not in SCHEDULER_OPTIONS]
    select = conf.get("SelectType", DEFAULT_SELECT).lower()
    if select not in ("select/cons_tres", "select/cons_res", "select/linear"):
        out.append(f"SelectType={select} (simulated as select/cons_tres)")
    params = conf.get("SelectTypeParameters", "" if select == "select/linear" else DEFAULT_SELECT_PARAMETERS)
    if any(word.strip().upper() not in SELECT_PARAMETERS for word in params.split(",") if word.strip()):
        out.append(f"SelectTypeParameters={params} (simulated as CR_CPU)")
    modelled_flags = {"NO_FAIR_TREE", "SMALL_RELATIVE_TO_TIME"}
    out += [f"PriorityFlags {flag}" for flag in sorted(conf.priority_flags - modelled_flags)]
    for kind, known, label in (("nodename", NODE_KEYS, "NodeName"), ("partitionname", PARTITION_KEYS,
                                                                       "PartitionName")):
        out += [f"{label}: {key}" for key in sorted(conf.line_keys.get(kind, ())) if key not in known]
    return out


def _over_time_limit(conf: SlurmConf) -> float | None:
    """OverTimeLimit in seconds (slurm.conf gives minutes), None for UNLIMITED."""
    text = conf.get("OverTimeLimit", "0").strip()
    if text.lower() in ("unlimited", "infinite"):
        return None
    return 60.0 * conf.integer("OverTimeLimit", 0)


def _param(params: Mapping[str, str], name: str, default: int, conf: SlurmConf) -> int:
    text = params.get(name)
    if text is None:
        return default
    try:
        return int(text)
    except ValueError:
        raise InputError(conf.source, f"SchedulerParameters {name}={text} is not an integer",
                         field="SchedulerParameters") from None


def _qos(text: str | Mapping[str, int]) -> dict[str, int]:
    if not isinstance(text, str):
        return dict(text)
    qos: dict[str, int] = {}
    for item in text.split(","):
        name, _, value = item.strip().partition("=")
        if name:
            try:
                qos[name] = int(value)
            except ValueError:
                raise InputError("qos_priorities", f"'{item}' is not NAME=PRIORITY") from None
    return qos


def _default_conf(platform: Platform) -> SlurmConf:
    """Slurm's defaults on the simulated platform: one partition with every node; select/cons_tres, CR_CPU (the
    allocation of CPUs, not of whole nodes, that a platform's cores stand for)."""
    cores = [node.cores if platform.unit is Unit.CORE else 1 for node in platform.nodes]
    nodes = tuple(NodeConf(node.name, cpus=c) for node, c in zip(platform.nodes, cores, strict=True))
    partition = PartitionConf("default", tuple(n.name for n in nodes), default=True)
    return SlurmConf("<defaults>", {"selecttype": "select/cons_tres", "selecttypeparameters": "CR_CPU"}, nodes,
                     (partition,))


def _check_platform(conf: SlurmConf, platform: Platform) -> None:
    """The simulated platform must be the slurm.conf's cluster: same nodes, one unit per CPU."""
    cores = [node.cores if platform.unit is Unit.CORE else 1 for node in platform.nodes]
    wanted = [node.cpus for node in conf.nodes]
    if cores != wanted:
        raise InputError(
            conf.source,
            f"the platform ({len(cores)} nodes, {sum(cores)} {platform.unit.value}s) is not the cluster of this "
            f"slurm.conf ({len(wanted)} nodes, {sum(wanted)} CPUs): simulate the slurm.conf's own cluster "
            "(no --platform) or a Unit.CORE platform with the same nodes",
        )

