"""The SimGrid platform model: jobs execute as SimGrid parallel tasks on the platform file's hosts and links.

Each job is a SimGrid actor that runs its profile as Batsim 4.2 does (task_execution.cpp): a `ptask_L07`
parallel task per computation/communication step, with the computation vector and communication matrix
Batsim builds, and a plain sleep for `delay`. SimGrid shares CPUs and links between the jobs that run at the
same time and adds link latencies, so a job's end is known only when SimGrid reaches it.

The core's event loop runs inside a SimGrid actor (`drive`). `advance` waits in simulated time for the
core's next event or for the first job end, whichever comes first: the core owns time and learns job ends
from SimGrid. `cancel` kills a job's actor, which cancels its activity.

A change of computation power state (DVFS) sets the hosts' SimGrid pstate, as Batsim does: SimGrid re-times
the activities running there.

With Batsim's delivery, the core runs as Batsim's own actors in this engine (core/batsim_actors.py): then a
start only prepares the job's actor (`start`), which `launch` creates when the EXECUTE_JOB message reaches the
server, and the actor itself stops the job at its walltime and says when it ended (`on_end`), as Batsim's
executor does.

SimGrid has one engine per process, so a process runs one SimGrid simulation (the CLI runs one).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib.machinery
import importlib.util
import math
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from fractions import Fraction
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

from clustersim._io.system import apt_install
from clustersim.core.interrupts import SignalWatch
from clustersim.core.state import RunningJob
from clustersim.errors import ClusterSimError, InputError
from clustersim.platform.model import Platform, Unit
from clustersim.workload.profiles import (
    Composed,
    DataStaging,
    Delay,
    Parallel,
    ParallelHomogeneous,
    Profile,
    StorageTransfer,
)

DEBIAN_PACKAGE = "python3-simgrid"
DEBIAN_DIR = Path("/usr/lib/python3/dist-packages")
INSTALL_HINT = (
    f"install SimGrid's Python bindings (Debian/Ubuntu: `apt-get install {DEBIAN_PACKAGE}`, SimGrid 3.32 as "
    "Batsim 4.2 uses; or `pip install simgrid`), or pass --platform-model fast to ignore communication"
)


class SimgridMissing(ClusterSimError):
    """The SimGrid platform model is needed and SimGrid's Python bindings cannot be imported."""


class SimgridUsed(ClusterSimError):
    """A second SimGrid simulation in one process: SimGrid has one engine per process."""


_used = False


def _debian_module() -> Path | None:
    """Debian's build of the bindings for the running Python version, when installed."""
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        candidate = DEBIAN_DIR / f"simgrid{suffix}"
        if suffix.startswith(".cpython") and candidate.is_file():
            return candidate
    return None


def simgrid_installed() -> bool:
    """Whether SimGrid's bindings can be found (without importing them)."""
    return importlib.util.find_spec("simgrid") is not None or _debian_module() is not None


def load_simgrid() -> ModuleType:
    """SimGrid's Python module: an installed `simgrid`, else Debian's build for this Python version.

    Debian builds its bindings for its own Python; any CPython of the same version loads them.
    """
    if sys.modules.get("simgrid") is not None:
        return sys.modules["simgrid"]
    try:
        with _quiet_stderr():  # the bindings announce their thread contexts on import
            return importlib.import_module("simgrid")
    except ImportError:
        pass
    candidate = _debian_module()
    spec = importlib.util.spec_from_file_location("simgrid", candidate) if candidate is not None else None
    if spec is None or spec.loader is None:
        raise SimgridMissing(f"the simgrid platform model needs SimGrid: {INSTALL_HINT}")
    try:
        with _quiet_stderr():
            module = importlib.util.module_from_spec(spec)  # loads the library, which runs its init
            spec.loader.exec_module(module)
    except ImportError as error:
        raise SimgridMissing(f"cannot load {candidate} ({error}); {INSTALL_HINT}") from None
    sys.modules["simgrid"] = module
    return module


def ensure_simgrid() -> None:
    """Install Debian's SimGrid bindings when they are missing (needs root and apt-get), as the tests do."""
    failure = apt_install([DEBIAN_PACKAGE], simgrid_installed)
    if failure is not None:
        raise SimgridMissing(f"SimGrid is missing; {failure}; {INSTALL_HINT}")


@contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Silence what SimGrid's C++ code writes to the process's stderr (file descriptor 2)."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as devnull:
            os.dup2(devnull.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def task_matrices(profile: ParallelHomogeneous | Parallel, nb_hosts: int) -> tuple[list[float], list[float]]:
    """The computation vector and row-major communication matrix Batsim gives SimGrid for a profile.

    An empty matrix means no communication (Batsim leaves it empty when `com` is 0, so no latency is paid).
    `parallel_homogeneous_total` arrives here already divided by the job's size (the workload reader does it).
    """
    if isinstance(profile, ParallelHomogeneous):
        flops = [profile.flops] * nb_hosts
        if profile.comm_bytes <= 0:
            return flops, []
        com = profile.comm_bytes
        return flops, [0.0 if row == col else com for row in range(nb_hosts) for col in range(nb_hosts)]
    if len(profile.flops) != nb_hosts:
        raise ClusterSimError(
            f"a 'parallel' profile of {len(profile.flops)} tasks cannot run on {nb_hosts} hosts "
            "(Batsim requires as many hosts as tasks)"
        )
    return list(profile.flops), list(profile.comm)


class Task(NamedTuple):
    """A parallel task: its computation vector and row-major matrix over its hosts, which are the job's own
    (`own_hosts`) followed by the storage hosts named in `storage`."""

    flops: list[float]
    comm: list[float]
    storage: tuple[str, ...] = ()
    own_hosts: bool = True


def io_task(profile: StorageTransfer | DataStaging, nb_hosts: int) -> Task:
    """Batsim 4.2's I/O tasks, no computation. `parallel_homogeneous_pfs`: the job's hosts and the storage host
    last; each host reads `bytes_to_read` from it (row of the storage host) and writes `bytes_to_write` to it
    (its column). `data_staging`: only the two storage hosts, `nb_bytes` from the first to the second. No bytes:
    no matrix (no latency)."""
    if isinstance(profile, DataStaging):
        comm = [0.0, profile.nb_bytes, 0.0, 0.0] if profile.nb_bytes > 0 else []
        return Task([0.0, 0.0], comm, (profile.source, profile.target), own_hosts=False)
    size = nb_hosts + 1
    storage = size - 1
    comm = []
    if profile.read_bytes > 0 or profile.write_bytes > 0:
        for row in range(size):
            for col in range(size):
                if row == col or (row != storage and col != storage):
                    comm.append(0.0)
                else:
                    comm.append(profile.write_bytes if col == storage else profile.read_bytes)
    return Task([0.0] * size, comm, (profile.storage,))


Step = float | Task
"""One step of a job: seconds of sleep (`delay`), or a parallel task."""


def job_steps(profile: Profile, nb_hosts: int) -> list[Step]:
    """A profile as the steps it runs: composed profiles flattened, their repeats unrolled."""
    if isinstance(profile, Composed):
        once = [step for part in profile.sequence for step in job_steps(part, nb_hosts)]
        return once * profile.repeat
    if isinstance(profile, Delay):
        return [float(profile.seconds)]
    if isinstance(profile, StorageTransfer | DataStaging):
        return [io_task(profile, nb_hosts)]
    return [Task(*task_matrices(profile, nb_hosts))]


class SimgridExecution:
    """Jobs execute in SimGrid (ptask_L07 model) on the hosts, links and routes of a SimGrid platform file."""

    stepped = True

    def __init__(self, platform: Platform, platform_file: str | Path, energy: bool = False):
        """`energy`: SimGrid's host energy plugin is on (`energy_plugin`), as Batsim's -E turns it on."""
        global _used
        if platform.unit is not Unit.HOST:
            raise InputError(str(platform_file), "the simgrid platform model allocates whole hosts, not cores")
        simgrid = load_simgrid()
        if _used:
            raise SimgridUsed("SimGrid runs one simulation per process: run each simgrid simulation in its own process")
        _used = True
        self._sg: Any = simgrid
        handler = signal.getsignal(signal.SIGINT)
        plugin = ["--cfg=plugin:host_energy"] if energy else []
        self._engine: Any = simgrid.Engine(["clustersim", "--cfg=host/model:ptask_L07", *plugin,
                                            "--log=root.thres:critical"])
        if handler is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, handler)  # SimGrid's own handler would exit(1), outputs unfinished
        try:
            self._engine.load_platform(str(platform_file))
        except RuntimeError as error:  # SimGrid's own parser is stricter than ours (it wants the DOCTYPE...)
            raise InputError(str(platform_file), f"SimGrid cannot load the platform: {error}") from None
        by_name = {host.name: host for host in self._engine.all_hosts}
        missing = [node.name for node in platform.nodes if node.name not in by_name]
        if missing:
            raise InputError(str(platform_file), f"SimGrid does not know the host(s) {', '.join(missing[:5])}")
        self._hosts: list[Any] = [by_name[platform.node_of(unit).name] for unit in range(platform.nb_resources)]
        compute = {node.name for node in platform.nodes}
        self._storage: dict[str, Any] = {name: by_name[name] for name in platform.storage_hosts if name in by_name}
        others = [host for host in self._engine.all_hosts if host.name not in compute]
        masters = [host for host in others if host.name not in self._storage]
        self._home: Any = masters[0] if masters else others[0] if others else self._hosts[0]
        """Where the core's actor runs: Batsim's master host (the host that neither computes nor stores)."""
        self._wake: Any = simgrid.Semaphore(0)
        self._actors: dict[str, Any] = {}
        self._ended: list[tuple[float, str]] = []
        self._error: BaseException | None = None
        self._signals = SignalWatch()
        """Ctrl-C as the core's actor sees it: actors run in SimGrid's threads, where Python runs no handler."""
        self.on_end: Callable[[str, float, bool], None] | None = None
        """Set by Batsim's actors: a job's actor calls it when the job ends (key, time, walltime reached), and
        starts wait for `launch`."""
        self._prepared: dict[str, tuple[Any, list[Any], float]] = {}
        self.on_launched: Callable[[str], None] | None = None
        """Set by Batsim's actors in energy runs: a job's actor calls it first, in its first scheduling turn (Batsim's
        executor writes the job's start rows there, jobs_execution.cpp)."""
        nodes = [self._hosts[platform.units_of(node.id).intervals[0][0]] for node in platform.nodes]
        self.energy_plugin = EnergyPlugin(nodes) if energy else None

    @property
    def engine(self) -> Any:
        """SimGrid's engine (its clock) and module, for Batsim's actors."""
        return self._engine

    @property
    def simgrid(self) -> Any:
        return self._sg

    @property
    def master(self) -> Any:
        """The host Batsim's server and the core's actor run on."""
        return self._home

    def host_of(self, node: int) -> Any:
        """The SimGrid host of a node (its first unit's: the model allocates whole hosts)."""
        return self._hosts[node]

    def drive(self, loop: Callable[[], None]) -> None:
        sg = self._sg

        def core() -> None:
            try:
                loop()
            except BaseException as error:  # carried out of SimGrid, raised again below
                self._error = error
            finally:
                for actor in list(self._actors.values()):
                    actor.kill()
                self._actors.clear()

        sg.Actor.create("clustersim", self._home, core)
        with self._signals:
            self._engine.run()
        if self._error is not None:
            raise self._error

    def check_interrupt(self) -> None:
        """Raise KeyboardInterrupt in the calling actor if Ctrl-C was pressed: the run then ends as one
        interrupted in the fast model does, with its outputs kept and marked partial."""
        self._signals.check()

    def start(self, running: RunningJob) -> None:
        key = running.job.key
        hosts = [self._hosts[unit] for unit in running.resources]
        tasks: list[float | tuple[list[Any], list[float], list[float]]] = []
        for step in job_steps(running.job.profile, len(hosts)):
            if isinstance(step, float):
                tasks.append(step)
            else:
                storage = [self._storage_host(label, running.storage_mapping) for label in step.storage]
                tasks.append(((hosts if step.own_hosts else []) + storage, step.flops, step.comm))
        if self.on_end is not None:
            walltime = running.job.walltime
            self._prepared[key] = (hosts[0], tasks, -1.0 if walltime is None else float(walltime))
            return None
        self._actors[key] = self._sg.Actor.create(f"job {key}", hosts[0], self._execute, key, tasks)
        return None

    def is_prepared(self, key: str) -> bool:
        """Whether a started job waits for `launch` (not yet launched, not cancelled)."""
        return key in self._prepared

    def launch(self, key: str) -> None:
        """Create a started job's actor now, on its first host (Batsim's executor): it runs the steps within the
        walltime and then calls `on_end`."""
        host, tasks, walltime = self._prepared.pop(key)
        self._actors[key] = self._sg.Actor.create(f"job {key}", host, self._execute_within, key, tasks, walltime)

    def _execute_within(self, key: str, tasks: list[float | tuple[list[Any], list[float], list[float]]],
                        walltime: float) -> None:
        """Batsim's executor (jobs_execution.cpp, task_execution.cpp): each step within the time left of the
        walltime (-1: none); a delay not shorter than that time sleeps it and reaches the walltime. Batsim does
        not cancel a parallel task that reaches the walltime: it goes on sharing the links until the executor
        is over, after its JOB_COMPLETED message (here: `activity` lives until this function returns). The
        network family of the reference corpus gives Batsim's execution times to 1e-6 only so."""
        sg = self._sg
        this_actor = sg.this_actor
        if self.on_launched is not None:
            self.on_launched(key)
        remaining, reached = walltime, False
        for task in tasks:
            if isinstance(task, float):
                if remaining < 0 or task < remaining:
                    this_actor.sleep_for(task)
                    if remaining > 0:
                        remaining = remaining - task
                    continue
                this_actor.sleep_for(remaining)
                reached = True
                break
            if remaining < 0:
                this_actor.parallel_execute(*task)
                continue
            before = self._engine.clock
            activity = this_actor.exec_init(*task)
            activity.start()
            try:
                activity.wait_for(remaining)
            except sg.TimeoutException:
                reached = True
                break
            remaining = remaining - (self._engine.clock - before)
        self._actors.pop(key, None)
        assert self.on_end is not None
        self.on_end(key, self._engine.clock, reached)

    def _storage_host(self, label: str, mapping: Mapping[str, str] | None) -> Any:
        """The storage host an I/O profile's label means: the one the start's storage mapping maps it to (the
        Batsim adapter checked it); without a mapping, the storage host of that name, and with a single storage
        host, that one whatever the label (as Batsim uses its only storage host when given no mapping)."""
        if mapping is not None:
            name = mapping.get(label)
            if name not in self._storage:
                raise ClusterSimError(f"the start's storage mapping {dict(mapping)} does not map the label '{label}' "
                                      f"to a storage host (the platform's: {', '.join(self._storage) or 'none'})")
            return self._storage[name]
        host = self._storage.get(label)
        if host is None and len(self._storage) == 1:
            (host,) = self._storage.values()
        if host is None:
            known = ", ".join(self._storage) or "none (hosts with the property role=storage)"
            raise ClusterSimError(f"an I/O profile names the storage host '{label}'; the platform's storage hosts: "
                                  f"{known}")
        return host

    def _execute(self, key: str, tasks: list[float | tuple[list[Any], list[float], list[float]]]) -> None:
        """A job's actor: run each step, then tell the core it ended."""
        this_actor = self._sg.this_actor
        for task in tasks:
            if isinstance(task, float):
                this_actor.sleep_for(task)
            else:
                this_actor.parallel_execute(*task)
        self._actors.pop(key, None)
        self._ended.append((self._engine.clock, key))
        self._wake.release()

    def advance(self, until: float | None) -> Sequence[tuple[float, str]]:
        """Wait until a job ends or the clock reaches `until` (None: until a job ends), and take the ends.

        The semaphore only wakes the core; `_ended` says what ended. SimGrid 3.32 can report a timed-out
        `acquire_timeout` whose token a release at that very instant handed over all the same (a job ending
        exactly at `until`), so tokens are not counted: a wake with nothing ended waits again, and the tokens
        left when the core wakes are taken without blocking."""
        self._signals.check()
        wake = self._wake
        while not self._ended:
            if until is None:
                if not self._actors:
                    break
                wake.acquire()
            else:
                delay = until - self._engine.clock
                if delay <= 0:
                    break
                wake.acquire_timeout(delay)
        while not wake.would_block:
            wake.acquire()
        ended, self._ended = self._ended, []
        return ended

    def cancel(self, key: str) -> None:
        self._prepared.pop(key, None)
        actor = self._actors.pop(key, None)
        if actor is not None:
            actor.kill()

    def change_speeds(
        self, now: float, speeds: Mapping[int, float], pstate: int, running: Mapping[str, RunningJob]
    ) -> Sequence[tuple[str, float]]:
        for unit in speeds:
            host = self._hosts[unit]
            if host.pstate != pstate:  # (setting it is a simcall: one where Batsim makes one, not two)
                host.pstate = pstate
        return ()


def _simgrid_library() -> ctypes.CDLL:
    """SimGrid's C library, the one its Python bindings loaded (its C API reaches the energy plugin)."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            for line in maps:
                path = line.split()[-1]
                if "libsimgrid" in Path(path).name:
                    return ctypes.CDLL(path)
    except OSError:
        pass
    name = ctypes.util.find_library("simgrid")
    if name is None:
        raise SimgridMissing("SimGrid's C library (libsimgrid) cannot be found: the energy plugin needs it")
    return ctypes.CDLL(name)


_SCALE = 1074
"""Every double is a whole multiple of 2**-1074: `_LongDouble` values are kept as integers of that unit."""


def _scaled(value: float) -> int:
    numerator, denominator = value.as_integer_ratio()
    return numerator * ((1 << _SCALE) // denominator)


def _extended(units: int) -> int:
    """A sum or difference of doubles rounded as C's `long double` on x86-64 rounds it: a 64-bit significand, to
    nearest, ties to even."""
    magnitude = abs(units)
    drop = magnitude.bit_length() - 64
    if drop <= 0:
        return units
    kept, rest = magnitude >> drop, magnitude & ((1 << drop) - 1)
    half = 1 << (drop - 1)
    if rest > half or (rest == half and kept & 1):
        kept += 1
    return (kept << drop) if units >= 0 else -(kept << drop)


def _double(units: int) -> float:
    """A `long double` (in units of 2**-1074) converted to double, as C's cast does (to nearest)."""
    drop = max(abs(units).bit_length() - 64, 0)
    return math.ldexp(float(units >> drop if units >= 0 else -((-units) >> drop)), drop - _SCALE)


def _quotient(dividend: int, divisor: int) -> float:
    """(double)(a / b) for two `long double`s: the quotient rounded to a 64-bit significand, then to a double."""
    n, d = abs(dividend), abs(divisor)
    if n == 0:
        return 0.0
    shift = 64 - (n.bit_length() - d.bit_length())
    while True:
        q, r = divmod(n << shift, d) if shift >= 0 else divmod(n, d << -shift)
        if q.bit_length() == 64:
            break
        shift += 1 if q.bit_length() < 64 else -1
    if 2 * r > d << max(-shift, 0) or (2 * r == d << max(-shift, 0) and q & 1):
        q += 1
    value = float(Fraction(q, 1 << shift) if shift >= 0 else Fraction(q << -shift))
    return -value if (dividend < 0) != (divisor < 0) else value


class EnergyPlugin:
    """SimGrid's host energy plugin, read as Batsim 4.2 reads it for consumed_energy.csv (export.cpp,
    machines.cpp): each machine's consumed energy (`sg_host_get_consumed_energy`, a simcall whenever the host's
    energy was last brought up to date before the current clock value, so reading takes as many scheduling
    turns as Batsim's), summed in C's `long double`, and the machines' minimum power in their current power states
    (`sg_host_get_wattmin_at`). `epower` divides the energy since the previous row by the time since it, both in
    `long double` as Batsim does; NA (None) when no time passed."""

    def __init__(self, hosts: Sequence[Any]):
        lib = _simgrid_library()
        lib.sg_host_by_name.restype = ctypes.c_void_p
        lib.sg_host_by_name.argtypes = [ctypes.c_char_p]
        lib.sg_host_get_consumed_energy.restype = ctypes.c_double
        lib.sg_host_get_consumed_energy.argtypes = [ctypes.c_void_p]
        lib.sg_host_get_wattmin_at.restype = ctypes.c_double
        lib.sg_host_get_wattmin_at.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
        self._consumed = lib.sg_host_get_consumed_energy
        self._wattmin_at = lib.sg_host_get_wattmin_at
        self._hosts = [(host, lib.sg_host_by_name(str(host.name).encode())) for host in hosts]
        self._last_date = 0
        self._last_energy = 0
        """The previous row's time and energy, `long double`s in units of 2**-1074."""

    def total(self) -> float:
        """The platform's energy since t=0 as Batsim answers an energy QUERY (the machines' energies summed)."""
        return _double(self.machines(range(len(self._hosts))))

    def machines(self, nodes: Sequence[int]) -> int:
        """Some machines' energy, read and summed as Batsim does (a `long double` in units of 2**-1074)."""
        energy = 0
        for node in nodes:
            energy = _extended(energy + _scaled(self._consumed(self._hosts[node][1])))
        return energy

    def reading(self, date: float) -> tuple[float, float | None, float]:
        """A consumed_energy.csv row's (energy, epower or None for NA, wattmin) at SimGrid's clock `date`, read from
        the calling actor (Batsim's EnergyConsumptionTracer::add_entry)."""
        energy = 0
        for _, handle in self._hosts:
            energy = _extended(energy + _scaled(self._consumed(handle)))
        wattmin = 0
        for host, handle in self._hosts:
            wattmin = _extended(wattmin + _scaled(self._wattmin_at(handle, host.pstate)))
        now = _scaled(date)
        elapsed = _extended(now - self._last_date)
        epower = _quotient(_extended(energy - self._last_energy), elapsed) if elapsed > 0 else None
        self._last_date, self._last_energy = now, energy
        return _double(energy), epower, _double(wattmin)
