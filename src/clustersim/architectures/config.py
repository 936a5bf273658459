"""The configuration file: cluster, workloads, schedulers, initial state and architectures, as data.

```yaml
seed: 42                    # every random stream derives from it
duration: 86400             # simulated seconds
architecture: all           # monolithic, mesos, omega, or all (default); the CLI's --architecture wins
utilisation_period: 60      # seconds between utilisation samples
cluster:                    # one group of identical machines, or a list of groups
  machines: 100
  cpu: 4                    # cores per machine (or a Kubernetes quantity: "3500m")
  memory: 16                # GiB per machine (or a Kubernetes quantity: "16Gi")
schedulers:
  batch:   {t_job: 0.1, t_task: 0.005}   # picker, max_attempts (1000), retry_delay (1 s) optional
  service: {t_job: 1.0, t_task: 0.005, picker: randomized-first-fit}
workloads:                  # job types; each one's jobs go to `scheduler` (default: the one of the same name)
  batch:
    interarrival: {distribution: exponential, mean: 10}
    tasks: {file: traces/csizes.log}         # samples, one per line or in the seed's 4-column format
    runtime: {distribution: lognormal, mu: 4, sigma: 1.5}
    cpu: 0.3                                 # cores per task
    memory: {distribution: weibull, shape: 2, scale: 1, max: 8}   # GiB per task
initial_state:              # jobs running at time 0 (any of these three)
  file: traces/init-cluster-state.log        # the seed's format
  jobs: [{tasks: 10, cpu: 0.5, memory: 1, end: 120}]               # end omitted: runs past the end
  fill: {workload: service, cpu: 0.3}        # draw jobs of a workload until 30% of the cpu is in use
architectures:              # options of each architecture
  omega: {conflicts: resource-fit, transactions: incremental}
  mesos: {offer_interval: 1.0, allocator_think: 0.0}
sweep: {scheduler: batch, t_job: [0.01, 0.1, 1, 10, 100]}
```

Relative paths are resolved against the configuration file's directory. Every key is checked: a misspelt key,
a missing one or a bad value is an `InputError` naming the file and the key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from clustersim._io.documents import load_document
from clustersim._io.fields import Checker, child, item
from clustersim._io.quantities import parse_bytes, parse_millicores
from clustersim.architectures.architecture import ARCHITECTURES, ArchitectureSpec
from clustersim.architectures.distributions import Constant, Distribution, SpecContext, parse_distribution
from clustersim.architectures.jobs import GIB, MILLICORES
from clustersim.architectures.pickers import parse_picker
from clustersim.architectures.prefill import Fill, InitialState, RunningTasks
from clustersim.architectures.scheduler import DEFAULT_MAX_ATTEMPTS, SchedulerSpec
from clustersim.architectures.tracefiles import read_initial_state
from clustersim.architectures.workload import WorkloadSpec

ALL = "all"
TOP_KEYS = ("seed", "duration", "architecture", "utilisation_period", "cluster", "schedulers", "workloads",
            "initial_state", "architectures", "sweep")
GROUP_KEYS = ("machines", "cpu", "memory")
SCHEDULER_KEYS = ("t_job", "t_task", "picker", "max_attempts", "retry_delay")
WORKLOAD_KEYS = ("scheduler", "interarrival", "tasks", "runtime", "cpu", "memory", "trace_id")
INITIAL_KEYS = ("file", "jobs", "fill")
DEFAULT_TRACE_IDS = {"batch": 0, "service": 1}
"""The seed's sample files tag rows with scheduler id 0 (batch) or 1 (service)."""
DEFAULT_SWEEP = (0.01, 0.1, 1.0, 10.0, 100.0)


@dataclass(frozen=True, slots=True)
class MachineGroup:
    count: int
    cpu: int
    memory: int


@dataclass(frozen=True)
class SweepSpec:
    """Which scheduler's t_job the sweep varies, over which values."""

    scheduler: str
    t_job: tuple[float, ...] = DEFAULT_SWEEP


@dataclass(frozen=True)
class Config:
    source: str
    seed: int
    duration: float
    architecture: str
    architectures: dict[str, ArchitectureSpec]
    machines: tuple[MachineGroup, ...]
    schedulers: dict[str, SchedulerSpec]
    workloads: dict[str, WorkloadSpec]
    initial_state: InitialState = field(default_factory=InitialState)
    utilisation_period: float = 60.0
    sweep: SweepSpec | None = None

    def selected(self, name: str | None = None) -> list[ArchitectureSpec]:
        """The architectures to run: `name` (or the file's choice), every registered one for `all`."""
        chosen = name or self.architecture
        if chosen == ALL:
            return [self.architectures[n] for n in ARCHITECTURES.names()]
        ARCHITECTURES.get(chosen)  # UnknownNameError listing the valid ones
        return [self.architectures[chosen]]

    def with_t_job(self, scheduler: str, t_job: float) -> Config:
        """The same configuration with another constant think time for one scheduler."""
        schedulers = dict(self.schedulers)
        schedulers[scheduler] = replace(schedulers[scheduler], t_job=t_job)
        return replace(self, schedulers=schedulers)

    @property
    def total_machines(self) -> int:
        return sum(group.count for group in self.machines)


def load_config(path: str | Path) -> Config:
    """Read and check a configuration file."""
    source = str(path)
    return parse_config(load_document(path), source=source, base_dir=Path(path).resolve().parent)


def parse_config(document: object, *, source: str = "<memory>", base_dir: Path = Path(".")) -> Config:
    """Build a configuration from a decoded YAML document."""
    check = Checker(source)
    top = check.mapping(document, "")
    check.known_keys(top, "", TOP_KEYS)
    seed = check.integer(top.get("seed", 0), "seed", 0)
    duration = check.number(check.required(top, "duration", ""), "duration", 0, above=True)
    period = check.number(top.get("utilisation_period", 60.0), "utilisation_period", 0, above=True)
    architectures = _architectures(top.get("architectures", {}), check)
    architecture = check.string(top.get("architecture", ALL), "architecture")
    if architecture != ALL and architecture not in ARCHITECTURES:
        check.fail("architecture", f"unknown architecture '{architecture}'; valid: "
                                   f"{', '.join([*ARCHITECTURES.names(), ALL])}")
    machines = _cluster(check.required(top, "cluster", ""), check)
    schedulers = _schedulers(check.required(top, "schedulers", ""), check)
    workloads = _workloads(check.required(top, "workloads", ""), schedulers, check, base_dir)
    _check_fits(machines, workloads, check)
    initial = _initial_state(top.get("initial_state", {}), workloads, check, base_dir)
    sweep = _sweep(top.get("sweep"), schedulers, check)
    return Config(source, seed, duration, architecture, architectures, machines, schedulers, workloads, initial,
                  period, sweep)


def _architectures(value: object, check: Checker) -> dict[str, ArchitectureSpec]:
    options = check.mapping(value, "architectures")
    for name in options:
        if name not in ARCHITECTURES:
            check.fail(child("architectures", name),
                       f"unknown architecture '{name}'; valid: {', '.join(ARCHITECTURES.names())}")
    return {
        name: ARCHITECTURES.get(name)(
            check.mapping(options.get(name) or {}, child("architectures", name)), child("architectures", name),
            check,
        )
        for name in ARCHITECTURES.names()
    }


def _cpu(value: object, field: str, check: Checker) -> int:
    return _amount(value, field, check, parse_millicores, MILLICORES, "cpu")


def _memory(value: object, field: str, check: Checker) -> int:
    return _amount(value, field, check, parse_bytes, GIB, "memory")


def _amount(value: object, field: str, check: Checker, parse: Callable[[str | int | float], int], unit: int,
            what: str) -> int:
    """A quantity string (`500m`, `2Gi`) or a number of whole units (cores, GiB), more than 0."""
    if isinstance(value, str):
        amount = check.quantity(value, field, parse, what)
    else:
        amount = round(check.number(value, field, 0, above=True) * unit)
    if amount <= 0:
        check.expected(field, f"more than 0 {what}", value)
    return amount


def _cluster(value: object, check: Checker) -> tuple[MachineGroup, ...]:
    groups = [(value, "cluster")] if isinstance(value, Mapping) else [
        (g, item("cluster", i)) for i, g in enumerate(check.sequence(value, "cluster"))
    ]
    if not groups:
        check.fail("cluster", "expected at least one group of machines")
    result = []
    for group, where in groups:
        spec = check.mapping(group, where)
        check.known_keys(spec, where, GROUP_KEYS)
        count = check.integer(check.required(spec, "machines", where), child(where, "machines"), 1)
        cpu = _cpu(check.required(spec, "cpu", where), child(where, "cpu"), check)
        memory = _memory(check.required(spec, "memory", where), child(where, "memory"), check)
        result.append(MachineGroup(count, cpu, memory))
    return tuple(result)


def _schedulers(value: object, check: Checker) -> dict[str, SchedulerSpec]:
    specs = check.mapping(value, "schedulers")
    if not specs:
        check.fail("schedulers", "expected at least one scheduler")
    result = {}
    for name, raw in specs.items():
        field = child("schedulers", name)
        spec = check.mapping(raw, field)
        check.known_keys(spec, field, SCHEDULER_KEYS)
        result[name] = SchedulerSpec(
            name,
            t_job=check.number(check.required(spec, "t_job", field), child(field, "t_job"), 0),
            t_task=check.number(spec.get("t_task", 0.0), child(field, "t_task"), 0),
            picker=parse_picker(spec.get("picker", "randomized-first-fit"), child(field, "picker"), check),
            max_attempts=check.integer(spec.get("max_attempts", DEFAULT_MAX_ATTEMPTS), child(field, "max_attempts"),
                                       1),
            retry_delay=check.number(spec.get("retry_delay", 1.0), child(field, "retry_delay"), 0),
        )
    return result


def _workloads(value: object, schedulers: dict[str, SchedulerSpec], check: Checker, base_dir: Path
               ) -> dict[str, WorkloadSpec]:
    specs = check.mapping(value, "workloads")
    if not specs:
        check.fail("workloads", "expected at least one job type")
    result = {}
    for name, raw in specs.items():
        field = child("workloads", name)
        spec = check.mapping(raw, field)
        check.known_keys(spec, field, WORKLOAD_KEYS)
        scheduler = _scheduler_of(name, spec, schedulers, field, check)
        trace_id = DEFAULT_TRACE_IDS.get(name)
        if "trace_id" in spec:
            trace_id = check.integer(spec["trace_id"], child(field, "trace_id"), 0)
        ctx = SpecContext(check, base_dir, trace_id)

        def dist(key: str, field: str = field, spec: Mapping[str, object] = spec, ctx: SpecContext = ctx
                 ) -> Distribution:
            return parse_distribution(check.required(spec, key, field), child(field, key), ctx)

        interarrival = dist("interarrival")
        if interarrival.maximum() <= 0:
            check.fail(child(field, "interarrival"), "interarrival times must not all be 0 (jobs would never stop "
                                                     "arriving at one instant)")
        result[name] = WorkloadSpec(name, scheduler, interarrival, dist("tasks"), dist("runtime"), dist("cpu"),
                                    dist("memory"))
    return result


def _scheduler_of(name: str, spec: Mapping[str, object], schedulers: dict[str, SchedulerSpec], field: str,
                  check: Checker) -> str:
    if "scheduler" in spec:
        scheduler = check.string(spec["scheduler"], child(field, "scheduler"))
        if scheduler not in schedulers:
            check.fail(child(field, "scheduler"),
                       f"unknown scheduler '{scheduler}'; configured: {', '.join(schedulers)}")
        return scheduler
    if name in schedulers:
        return name
    if len(schedulers) == 1:
        return next(iter(schedulers))
    check.fail(field, f"missing key 'scheduler' (no scheduler is named '{name}'; configured: "
                      f"{', '.join(schedulers)})")


def _check_fits(machines: tuple[MachineGroup, ...], workloads: dict[str, WorkloadSpec], check: Checker) -> None:
    """Constant task sizes larger than every machine are almost surely a unit mistake (MiB for GiB...)."""
    limits = {"cpu": max(g.cpu for g in machines) / MILLICORES, "memory": max(g.memory for g in machines) / GIB}
    units = {"cpu": "cores", "memory": "GiB"}
    for name, spec in workloads.items():
        for key, distribution in (("cpu", spec.cpu), ("memory", spec.memory)):
            if isinstance(distribution, Constant) and distribution.value > limits[key]:
                check.fail(child(child("workloads", name), key),
                           f"no task fits a machine: the largest has {limits[key]:g} {units[key]}")


def _initial_state(value: object, workloads: dict[str, WorkloadSpec], check: Checker, base_dir: Path
                   ) -> InitialState:
    spec = check.mapping(value, "initial_state")
    check.known_keys(spec, "initial_state", INITIAL_KEYS)
    jobs: list[RunningTasks] = []
    if "file" in spec:
        field = child("initial_state", "file")
        path = base_dir / check.string(spec["file"], field)
        for running in read_initial_state(path, field=field, config=check.source):
            jobs.append(RunningTasks.of(running.tasks, running.cpu, running.memory_gib, running.end))
    for index, raw in enumerate(check.sequence(spec.get("jobs", []), child("initial_state", "jobs"))):
        field = item(child("initial_state", "jobs"), index)
        job = check.mapping(raw, field)
        check.known_keys(job, field, ("tasks", "cpu", "memory", "end"))
        end = job.get("end")
        jobs.append(RunningTasks.of(
            check.integer(check.required(job, "tasks", field), child(field, "tasks"), 1),
            check.number(check.required(job, "cpu", field), child(field, "cpu"), 0, above=True),
            check.number(check.required(job, "memory", field), child(field, "memory"), 0, above=True),
            None if end is None else check.number(end, child(field, "end"), 0),
        ))
    fill = None
    if "fill" in spec:
        field = child("initial_state", "fill")
        raw_fill = check.mapping(spec["fill"], field)
        check.known_keys(raw_fill, field, ("workload", "cpu"))
        workload = check.string(check.required(raw_fill, "workload", field), child(field, "workload"))
        if workload not in workloads:
            check.fail(child(field, "workload"), f"unknown workload '{workload}'; configured: {', '.join(workloads)}")
        fraction = check.number(check.required(raw_fill, "cpu", field), child(field, "cpu"), 0)
        if fraction > 1:
            check.expected(child(field, "cpu"), "a fraction of the cell's cpu in [0, 1]", raw_fill["cpu"])
        fill = Fill(workload, fraction)
    return InitialState(tuple(jobs), fill)


def _sweep(value: object, schedulers: dict[str, SchedulerSpec], check: Checker) -> SweepSpec | None:
    if value is None:
        return None
    spec = check.mapping(value, "sweep")
    check.known_keys(spec, "sweep", ("scheduler", "t_job"))
    scheduler = check.string(spec.get("scheduler", default_sweep_scheduler(schedulers)), "sweep.scheduler")
    if scheduler not in schedulers:
        check.fail("sweep.scheduler", f"unknown scheduler '{scheduler}'; configured: {', '.join(schedulers)}")
    values = check.sequence(spec.get("t_job", list(DEFAULT_SWEEP)), "sweep.t_job")
    if not values:
        check.fail("sweep.t_job", "expected at least one value")
    return SweepSpec(scheduler, tuple(check.number(v, item("sweep.t_job", i), 0) for i, v in enumerate(values)))


def default_sweep_scheduler(schedulers: Mapping[str, object]) -> str:
    """`batch` if configured (the paper's choice), else the first scheduler."""
    return "batch" if "batch" in schedulers else next(iter(schedulers))
