"""Replay a workload into a real Slurm on loopback and record its schedule as a simulation's jobs.csv.

Each job is submitted at its submit time (`sbatch -n CPUS -t MINUTES --wrap 'sleep D'`) on the accelerated
clock; its payload sleeps `(D - overhead) / K` seconds of wall time, `overhead` being the measured launch and
completion latency (in cluster seconds), so that Slurm sees it run about D seconds. Slurm's own record of each
job (`scontrol show job -d -o`: submit, eligible, start and end times, nodes and CPU ids) becomes a JobOutcome,
written with the simulation's JobsCsvWriter; times are relative to the instant the trace's t=0 maps to.

`workload_from_replay` turns that jobs.csv back into a workload with the submit times and run times Slurm
observed, so the simulation of the same trace is fed what the real cluster actually did.
"""

from __future__ import annotations

import calendar
import csv
import json
import math
import re
import shlex
import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from clustersim.core.events import FinalState
from clustersim.core.outcome import JobOutcome, OutcomeSink
from clustersim.core.simulation import RunSummary
from clustersim.errors import InputError
from clustersim.intervals import IntervalSet
from clustersim.policies.slurm.conf import SlurmConf, expand_hostlist, format_minutes
from clustersim.records.jobs_csv import JobsCsvWriter
from clustersim.slurm.cluster import LoopbackCluster, ensure_installed
from clustersim.workload.job import Job, id_order
from clustersim.workload.profiles import Delay
from clustersim.workload.stream import Workload

FINISHED = {
    "COMPLETED": FinalState.COMPLETED_SUCCESSFULLY,
    "TIMEOUT": FinalState.COMPLETED_WALLTIME_REACHED,
    "CANCELLED": FinalState.COMPLETED_KILLED,
    "FAILED": FinalState.COMPLETED_FAILED,
    "NODE_FAIL": FinalState.COMPLETED_FAILED,
    "OUT_OF_MEMORY": FinalState.COMPLETED_FAILED,
    "PREEMPTED": FinalState.COMPLETED_KILLED,
    "DEADLINE": FinalState.COMPLETED_KILLED,
    "BOOT_FAIL": FinalState.COMPLETED_FAILED,
}
SUBMIT_OFFSET = 0.05
"""Aim each submission this far (cluster seconds) into its second, so Slurm records the intended second."""


@dataclass
class SlurmRecord:
    """What `scontrol show job -d -o` says of one job (times in epoch seconds of the cluster's clock)."""

    job_id: int
    name: str
    state: str
    submit: int | None
    eligible: int | None
    start: int | None
    end: int | None
    partition: str
    cpus: dict[str, list[int]] = field(default_factory=dict)
    """node name -> CPU ids."""
    array_job_id: int | None = None
    array_task_id: int | None = None


def parse_scontrol(text: str) -> list[SlurmRecord]:
    """Parse `scontrol show job -d -o` (one job per line; the per-node `Nodes= CPU_IDs=` groups repeat)."""
    records = []
    for line in text.splitlines():
        if not line.startswith("JobId="):
            continue
        values: dict[str, str] = {}
        cpus: dict[str, list[int]] = {}
        group_nodes: list[str] = []
        for token in line.split():
            key, eq, value = token.partition("=")
            if not eq:
                continue
            if key == "Nodes":
                group_nodes = expand_hostlist(value) if value and value != "(null)" else []
            elif key == "CPU_IDs" and group_nodes:
                ids = list(IntervalSet.parse(value.replace(",", " ")))
                for node in group_nodes:
                    cpus[node] = ids
            elif key not in values:
                values[key] = value
        records.append(SlurmRecord(
            job_id=int(values["JobId"]),
            name=values.get("JobName", ""),
            state=values.get("JobState", ""),
            submit=_epoch(values.get("SubmitTime")),
            eligible=_epoch(values.get("EligibleTime")),
            start=_epoch(values.get("StartTime")),
            end=_epoch(values.get("EndTime")),
            partition=values.get("Partition", ""),
            cpus=cpus,
            array_job_id=_integer(values.get("ArrayJobId")),
            array_task_id=_integer(values.get("ArrayTaskId")),
        ))
    return records


def _integer(text: str | None) -> int | None:
    """An id, or None (absent, or a pending array's task range such as `2-3%2`)."""
    return int(text) if text is not None and text.isascii() and text.isdigit() else None


def _epoch(text: str | None) -> int | None:
    if not text or text in ("Unknown", "None", "N/A"):
        return None
    try:
        return calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return None


@dataclass
class ReplayResult:
    """A replay's outcomes and what is needed to interpret and simulate it again."""

    outcomes: list[JobOutcome]
    speedup: float
    origin: float
    """Cluster epoch second that trace time 0 maps to."""
    ctld_start: float
    """When slurmctld started, in trace time (negative: before t=0)."""
    overhead: float
    wall_seconds: float
    submit_slip: float
    """Largest |recorded submit - trace submit|, cluster seconds."""
    unfinished: list[str] = field(default_factory=list)
    call_seconds: float | None = None
    """The median wall duration of its sbatch calls times K: how long one call took, cluster seconds."""

    def summary(self) -> dict[str, object]:
        return {
            "speedup": self.speedup, "origin_epoch": self.origin, "ctld_start": self.ctld_start,
            "overhead": self.overhead, "wall_seconds": round(self.wall_seconds, 3),
            "submit_slip": self.submit_slip, "jobs": len(self.outcomes), "unfinished": self.unfinished,
            **({} if self.call_seconds is None else {"call_seconds": round(self.call_seconds, 3)}),
        }


def job_runtime(job: Job) -> float:
    """The seconds a job sleeps; only delay jobs can be replayed (their run time does not need a speed)."""
    if isinstance(job.profile, Delay):
        return job.profile.seconds
    raise InputError(job.workload, f"job '{job.id}' is not a delay job: only delay jobs can be replayed into Slurm")


def replay(
    jobs: Sequence[Job],
    conf: SlurmConf,
    workdir: Path,
    *,
    speedup: float = 1.0,
    overhead: float | None = None,
    lead: float = 5.0,
    timeout: float = 3600.0,
    install: bool = True,
    debug: str = "info",
    precise: bool = True,
) -> ReplayResult:
    """Run the jobs on a fresh loopback cluster at `speedup` and return Slurm's record of them.

    With `precise`, times are read to the millisecond from slurmctld's log (Slurm's records keep whole seconds,
    also written in the metadata as slurm_start and slurm_end).
    """
    ensure_installed(install=install)
    ordered = sorted(jobs, key=lambda j: (j.submit_time, id_order(j.id)))
    if not ordered:
        raise InputError("workload", "no job to replay")
    started = time.time()
    workdir.mkdir(parents=True, exist_ok=True)
    with LoopbackCluster(conf, workdir, speedup, debug=debug) as cluster:
        if overhead is None:
            overhead = _calibrate(cluster)
        sample = cluster.clock()
        origin = math.ceil(sample.fake + lead) - ordered[0].submit_time
        names: dict[int, Job] = {}
        slurm_ids: dict[str, int] = {}
        tasks: dict[tuple[int, int], Job] = {}
        """(Slurm's array job id, task id) -> the task's job."""
        rejected: list[Job] = []
        calls: list[float] = []
        """Each sbatch call's wall duration."""
        for number, job in enumerate(ordered):
            array = job.extra.get("array_job")
            if array is not None and str(array) in slurm_ids:
                tasks[slurm_ids[str(array)], int(job.id.rpartition("_")[2])] = job
                continue  # submitted with the array's first task
            if array is not None and any(str(j.extra.get("array_job")) == str(array) for j in rejected):
                rejected.append(job)
                continue
            if number % 20 == 0:
                sample = cluster.clock()
            target = origin + job.submit_time + SUBMIT_OFFSET
            delay = (target - sample.fake) / speedup - (time.time() - sample.wall)
            if delay > 0:
                time.sleep(delay)
            seconds = max(0.0, job_runtime(job) - overhead) / speedup
            command = ["sbatch", "--parsable", "-J", job.id, "-o", "/dev/null", "-e", "/dev/null",
                       *sbatch_arguments(job, slurm_ids), "--wrap", f"sleep {seconds:.3f}"]
            called = time.perf_counter()
            output = cluster.run(*command, check=False).strip()
            calls.append(time.perf_counter() - called)
            if output.split(";")[0].isdigit():
                slurm_id = int(output.split(";")[0])
                if array is None:
                    names[slurm_id] = job
                    slurm_ids[job.id] = slurm_id
                else:
                    slurm_ids[str(array)] = slurm_id
                    tasks[slurm_id, int(job.id.rpartition("_")[2])] = job
            else:
                rejected.append(job)
        deadline = time.time() + timeout
        while time.time() < deadline:
            waiting = [line.split() for line in cluster.run("squeue", "-h", "-o", "%T %r").splitlines()]
            if all(len(w) == 2 and w[0] == "PENDING" and w[1] in PENDING_FOREVER for w in waiting):
                break
            time.sleep(0.2)
        records = parse_scontrol(cluster.run("scontrol", "show", "job", "-d", "-o"))
        precise_times = log_times(workdir / "log" / "slurmctld.log") if precise else None
        for record in records:
            if record.array_job_id is not None and record.array_task_id is not None:
                task = tasks.get((record.array_job_id, record.array_task_id))
                if task is not None:
                    names[record.job_id] = task
                if precise_times is not None and record.array_job_id in precise_times:
                    submitted = precise_times[record.array_job_id].get("submit")  # the array's one submission
                    if submitted is not None:
                        precise_times.setdefault(record.job_id, {}).setdefault("submit", submitted)
        primary = cluster.controller_started()
        if primary is None:
            primary = cluster.started_at.fake if cluster.started_at else sample.fake
        ctld_start = primary - origin
    outcomes, unfinished, slip = _outcomes(records, names, conf, origin, precise_times)
    outcomes += [JobOutcome(job, FinalState.REJECTED, None, None, IntervalSet(), "rejected by sbatch")
                 for job in rejected]
    return ReplayResult(outcomes, speedup, origin, ctld_start, overhead, time.time() - started, slip, unfinished,
                        statistics.median(calls) * speedup if calls else None)


PENDING_FOREVER = frozenset({"PartitionNodeLimit", "PartitionTimeLimit", "DependencyNeverSatisfied"})
"""squeue reasons of jobs that will never start: the replay does not wait for them (they are `unfinished`)."""


def sbatch_arguments(job: Job, slurm_ids: Mapping[str, int]) -> list[str]:
    """The options that ask Slurm for what the job asks: an sbatch-options job's own options verbatim, else
    `-n`, `-t` and `-p` (as named: Slurm rejects a partition it does not have); and `--dependency` with the
    Slurm ids of the jobs it names."""
    options = job.extra.get("sbatch")
    if isinstance(options, str):
        arguments = shlex.split(options)
    else:
        arguments = ["-n", str(job.nb_res), "-t", format_minutes(job.walltime)]
        if job.queue:
            arguments += ["-p", job.queue]
    dependency = slurm_dependency(job, slurm_ids)
    if dependency:
        arguments.append(f"--dependency={dependency}")
    return arguments


def slurm_dependency(job: Job, slurm_ids: Mapping[str, int]) -> str:
    """The job's `--dependency` with the Slurm ids of the jobs it names (`Job.extra["dependency"]`, and an SWF
    preceding job as `afterany`). A job id not submitted (yet) becomes 0, which sbatch rejects as Slurm rejects
    a dependency on a job it does not know; a preceding job not submitted is left out (the model's rule)."""
    parts = []
    text = str(job.extra.get("dependency", "") or "")
    for item in filter(None, (part.strip() for part in text.split(","))):
        kind, _, ids = item.partition(":")
        parts.append(":".join([kind, *(str(slurm_ids.get(i, 0)) for i in ids.split(":"))]))
    preceding = job.extra.get("preceding_job")
    if preceding is not None and str(preceding) in slurm_ids:
        parts.append(f"afterany:{slurm_ids[str(preceding)]}")
    return ",".join(parts)


def _calibrate(cluster: LoopbackCluster, count: int = 8) -> float:
    """Mean run time of `sleep 0` jobs: the launch and completion latency, in cluster seconds.

    Read with millisecond precision from slurmctld's log (allocation to completion); Slurm's own records, in
    whole seconds, are the fallback.
    """
    cpus = sum(node.cpus for node in cluster.conf.nodes)
    ids = []
    for _ in range(min(count, cpus)):
        out = cluster.run("sbatch", "--parsable", "-J", "calibration", "-n", "1", "-t", "1", "-o", "/dev/null",
                          "-e", "/dev/null", "--wrap", "sleep 0").strip()
        ids.append(int(out.split(";")[0]))
    deadline = time.time() + 120
    while time.time() < deadline and cluster.run("squeue", "-h", "-o", "%i").strip():
        time.sleep(0.1)
    spans = list(log_run_times(cluster.workdir / "log" / "slurmctld.log", ids).values())
    if not spans:
        records = [r for r in parse_scontrol(cluster.run("scontrol", "show", "job", "-d", "-o")) if r.job_id in ids]
        spans = [float(r.end - r.start) for r in records if r.end is not None and r.start is not None]
    return sum(spans) / len(spans) if spans else 0.0


_LOG_EVENTS = (
    ("submit", re.compile(r"^\[([0-9T:.-]+)\] _slurm_rpc_submit_batch_job: JobId=(\d+) ")),
    ("start", re.compile(r"^\[([0-9T:.-]+)\] (?:sched: Allocate|sched/backfill: _start_job: Started) "
                         r"JobId=(?:\d+_\d+\()?(\d+)\)? ")),
    ("end", re.compile(r"^\[([0-9T:.-]+)\] _job_complete: JobId=(?:\d+_\d+\()?(\d+)\)? WEXITSTATUS")),
)


def log_times(log: Path) -> dict[int, dict[str, float]]:
    """Submit, start and end times (cluster epoch seconds, millisecond precision) of every job, from slurmctld's
    log at level info: Slurm's own records keep whole seconds only."""
    times: dict[int, dict[str, float]] = {}
    try:
        with open(log, encoding="utf-8", errors="replace") as f:
            for line in f:
                for event, pattern in _LOG_EVENTS:
                    match = pattern.match(line)
                    if match is not None:
                        times.setdefault(int(match.group(2)), {}).setdefault(event, _log_time(match.group(1)))
                        break
    except OSError:
        return {}
    return times


def log_run_times(log: Path, job_ids: Sequence[int]) -> dict[int, float]:
    """Run times (cluster seconds, millisecond precision) of jobs, from slurmctld's log."""
    times = log_times(log)
    return {job: times[job]["end"] - times[job]["start"] for job in job_ids
            if job in times and "start" in times[job] and "end" in times[job]}


def _log_time(stamp: str) -> float:
    whole, _, fraction = stamp.partition(".")
    return calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S")) + float(f"0.{fraction or 0}")


def _outcomes(
    records: list[SlurmRecord], names: dict[int, Job], conf: SlurmConf, origin: float,
    precise: dict[int, dict[str, float]] | None = None,
) -> tuple[list[JobOutcome], list[str], float]:
    """Slurm's records as outcomes; with `precise` (log times), sub-second times where they agree with them."""
    offsets: dict[str, int] = {}
    total = 0
    for node in conf.nodes:
        offsets[node.name] = total
        total += node.cpus
    outcomes = []
    unfinished = []
    slip = 0.0
    for record in records:
        job = names.get(record.job_id)
        if job is None:
            continue
        state = FINISHED.get(record.state.split()[0])
        if state is None or record.start is None or record.end is None or record.submit is None:
            unfinished.append(job.id)
            continue
        submit, start, end = float(record.submit), float(record.start), float(record.end)
        source = "scontrol"
        exact = (precise or {}).get(record.job_id, {})
        if all(key in exact for key in ("submit", "start", "end")) and all(
            abs(math.floor(exact[key]) - whole) <= 1 for key, whole in (("submit", submit), ("start", start),
                                                                         ("end", end))
        ):
            submit, start, end = exact["submit"], exact["start"], exact["end"]
            source = "log"
        submit, start, end = (round(t - origin, 3) for t in (submit, start, end))
        slip = max(slip, abs(math.floor(submit) - job.submit_time))
        observed = replace(job, submit_time=submit, profile=Delay(end - start))
        units = IntervalSet.from_ids(offsets[node] + cpu for node, ids in record.cpus.items() for cpu in ids)
        eligible = "" if record.eligible is None else f"{record.eligible - origin:g}"
        metadata = (f"slurm_id={record.job_id};partition={record.partition};eligible={eligible};"
                    f"trace_submit={job.submit_time:g};times={source};"
                    f"slurm_start={record.start - origin:g};slurm_end={record.end - origin:g}")
        if job.queue:
            metadata += f";requested_partitions={job.queue}"
        for key in ("dependency", "preceding_job", "sbatch", "array_job"):
            if job.extra.get(key):
                metadata += f";{key}={job.extra[key]}"
        outcomes.append(JobOutcome(observed, state, start, end, units, metadata))
    outcomes.sort(key=lambda o: id_order(o.job.id))
    return outcomes, unfinished, slip


def write_replay(result: ReplayResult, output: Path) -> None:
    """jobs.csv (the simulation's format) and replay.json (speed-up, clock origin, slurmctld start...)."""
    output.mkdir(parents=True, exist_ok=True)
    writer = JobsCsvWriter(output / "jobs.csv")
    try:
        for outcome in result.outcomes:
            writer.record(outcome)
    finally:
        writer.close()
    (output / "replay.json").write_text(json.dumps(result.summary(), indent=2) + "\n", encoding="utf-8")


def workload_from_replay(jobs_csv: Path | str, name: str = "w0", call_seconds: float = 0.0) -> Workload:
    """The jobs of a replay's jobs.csv with the submit and run times Slurm observed (rejected jobs left out); in a
    whole-second record, the submissions of a second placed where the replay's sbatch calls, `call_seconds` each
    (cluster seconds), landed in it (`spread_submissions`)."""
    source = str(jobs_csv)
    jobs = []
    submissions: list[tuple[str, int]] = []
    """Per job: what one sbatch call submitted (the job, or its array) and its Slurm job id (submission order)."""
    whole_seconds = True
    with open(jobs_csv, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["final_state"] == FinalState.REJECTED.value:
                continue
            meta = {key: value for key, _, value in (item.partition("=") for item in
                                                     row.get("metadata", "").split(";") if "=" in item)}
            try:
                walltime = float(row["requested_time"])
                jobs.append(Job(
                    row["job_id"], float(row["submission_time"]), int(row["requested_number_of_resources"]),
                    Delay(float(row["execution_time"])), walltime=None if walltime < 0 else walltime,
                    workload=name, profile_name=row["profile"],
                    queue=meta.get("requested_partitions", meta.get("partition", "")),
                    extra={key: meta[key] for key in ("dependency", "preceding_job", "sbatch", "array_job")
                           if meta.get(key)},
                ))
                submissions.append((meta.get("array_job") or row["job_id"], int(meta.get("slurm_id") or 0)))
            except (KeyError, ValueError) as error:
                raise InputError(source, f"not a jobs.csv written by slurm-replay: {error}") from None
            whole_seconds = whole_seconds and meta.get("times") == "whole-seconds"
    if whole_seconds:
        jobs = spread_submissions(jobs, submissions, call_seconds)
    # A simulation starts at t=0: a first submission Slurm recorded in the second before the replay's origin (the
    # replay aims 0.05 s into the second, and a loaded machine can be that early) is simulated at 0.
    return Workload.from_jobs([replace(j, submit_time=max(0.0, j.submit_time)) for j in jobs], name=name)


def spread_submissions(jobs: Sequence[Job], submissions: Sequence[tuple[str, int]],
                       call_seconds: float = 0.0) -> list[Job]:
    """Whole-second records put every job submitted in a second at its start; the replay makes its sbatch calls one
    after another from SUBMIT_OFFSET into the trace's second on, and a call's job is submitted when the call
    lands, so the n calls recorded in a second came one after another over it, a call's duration apart
    (`call_seconds`, at most (1 - SUBMIT_OFFSET) / (n + 1): n of them land in the second): the first one call after
    SUBMIT_OFFSET, at most half-way into the second (a call longer than that lands anywhere in its second, the
    middle on average), the k-th (k = 0..n-1, in Slurm job id order) k calls after it. An array's tasks are one
    submission. `submissions` gives, per job, (what its sbatch call submitted, its job id)."""
    first_id: dict[tuple[float, str], int] = {}
    for job, (unit, slurm_id) in zip(jobs, submissions, strict=True):
        key = (job.submit_time, unit)
        first_id[key] = min(first_id.get(key, slurm_id), slurm_id)
    by_second: dict[float, list[tuple[int, str]]] = {}
    for (second, unit), slurm_id in first_id.items():
        by_second.setdefault(second, []).append((slurm_id, unit))
    offset: dict[tuple[float, str], float] = {}
    for second, units in by_second.items():
        call = min(call_seconds, (1 - SUBMIT_OFFSET) / (len(units) + 1))
        first = min(SUBMIT_OFFSET + call, 0.5)
        for k, (_, unit) in enumerate(sorted(units)):
            offset[second, unit] = first + k * call
    return [replace(job, submit_time=job.submit_time + offset[(job.submit_time, unit)])
            for job, (unit, _) in zip(jobs, submissions, strict=True)]


def simulate_replay(
    jobs_csv: Path | str,
    conf: SlurmConf,
    ctld_start: float,
    output_dir: Path | str | None = None,
    *,
    clock_origin: float = 0.0,
    call_seconds: float = 0.0,
    sinks: Sequence[OutcomeSink] = (),
    **options: object,
) -> RunSummary:
    """Simulate a replay's jobs (as Slurm observed them) with the `slurm` policy on the slurm.conf's cluster.

    `ctld_start` and `clock_origin` come from the replay (replay.json): when slurmctld started, and the epoch
    second t=0 stands for, so the model's periodic activities and roundings fall where Slurm's did;
    `call_seconds`, how long one of its sbatch calls took, places a whole-second record's submissions.
    """
    from clustersim.policies.registry import create_policy
    from clustersim.policies.slurm.conf import platform_from_conf
    from clustersim.runner import simulate

    policy = create_policy("slurm", conf=conf, ctld_start=ctld_start, clock_origin=clock_origin, **options)
    result = simulate(platform_from_conf(conf), workload_from_replay(jobs_csv, call_seconds=call_seconds), policy,
                      output_dir, extra_sinks=list(sinks))
    return result.summary
