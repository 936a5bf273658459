"""Validate the `slurm` policy against a real Slurm 22.05 on loopback: the validation report of docs/slurm.md.

A scenario is a cluster (one node of 16 CPUs or four nodes of 4 CPUs), a scheduler (sched/backfill or
sched/builtin), a priority plugin (basic or multifactor) and a trace of 40 jobs (burst, spaced, or a slice of
the KTH-SP2 SWF trace scaled to the cluster), replayed at an acceleration K. `--record` replays scenarios into
real Slurm twice each and keeps each run's whole-second record in --data (tests/data/slurm_validation/); then
every recorded scenario is simulated (each real run in turn) and judged as the issue states its target: per
scenario, the model's mean distance to a real run against the mean distance between two runs, on every run it
recorded (first table); then per (scenario, run) pair of runs 1 and 2, the simulation of a run against the other
run's distance to it (second table).

    python benchmarks/slurm_validation.py --figure docs/slurm-validation.png     # the recorded scenarios
    python benchmarks/slurm_validation.py --record four-backfill-basic-burst@10 one-fifo-basic-swf@60
    python benchmarks/slurm_validation.py --record-requests gpus-spread@10 job-scripts@10
    python benchmarks/slurm_validation.py --runs 3 --record four-backfill-basic-burst@10   # a third real run
    python benchmarks/slurm_validation.py --measure-share slurm-validation   # EPILOG_SHARE from the kept logs
    python benchmarks/slurm_validation.py --fit-timing   # EPILOG_SHARE and CALL_SHARE from the whole-second records
    python benchmarks/slurm_validation.py --measure-calls   # one sbatch call, as the records' bursts measure it
    python benchmarks/slurm_validation.py --phase-sweep 10   # every scenario with the loop's tick at 10 phases
    python benchmarks/slurm_validation.py --timing-grid requests-gpus-typed@10   # phases x call x epilog shares
    python benchmarks/slurm_validation.py --random-phase 5   # the tick's phase drawn at every pass, 5 seeds

A scenario with a third real run (`real3.csv`) is also judged on every run it recorded (`--runs 5` records a
fourth and a fifth), and gets its third run judged as the model is (against runs 1 and 2): how often Slurm
itself meets the issue's criterion.

The request scenarios (one per kind of sbatch request, those of tests/test_slurm_sbatch_replay.py) are kept as
`requests-NAME`.
"""

from __future__ import annotations

import argparse
import math
import random
import shutil
import statistics
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from clustersim.policies.slurm.conf import parse_slurm_conf
from clustersim.slurm.replay import replay, write_replay
from clustersim.slurm.validation import (
    LOOP_PERIOD,
    ScenarioVerdict,
    Verdict,
    burst_call_shares,
    epilog_share,
    evaluate,
    fit_timing,
    judge,
    judge_all_runs,
    phase_sweep,
    recorded_runs,
    scenario_directories,
    scenario_verdict,
    submission_gaps,
    timing_grid,
    whole_second_gaps,
    whole_second_records,
)
from clustersim.workload.job import Job
from clustersim.workload.load import load_workload
from clustersim.workload.profiles import Delay
from clustersim.workload.swf import read_swf

TRACES = Path(__file__).resolve().parents[2] / "shared" / "traces"

CLUSTERS = {
    "one": "NodeName=big CPUs=16 RealMemory=16000\nPartitionName=main Nodes=big Default=YES MaxTime=INFINITE\n",
    "four": "NodeName=n[1-4] CPUs=4 RealMemory=4000\nPartitionName=main Nodes=n[1-4] Default=YES MaxTime=INFINITE\n",
}
PRIORITIES = {
    "basic": "PriorityType=priority/basic\n",
    "multifactor": "PriorityType=priority/multifactor\nPriorityWeightJobSize=1000\nPriorityFavorSmall=YES\n"
    "PriorityWeightPartition=100\nPriorityWeightAge=1000\n",
}
SCHEDULERS = {"backfill": "SchedulerType=sched/backfill\n", "fifo": "SchedulerType=sched/builtin\n"}
COMMON = "SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n"


def conf_text(cluster: str, priority: str, scheduler: str = "backfill") -> str:
    return (f"# {cluster} cluster, {SCHEDULERS[scheduler].split('=')[1].strip()}, priority/{priority}\n"
            f"{SCHEDULERS[scheduler]}{COMMON}{PRIORITIES[priority]}{CLUSTERS[cluster]}")


def _limit(runtime: float, rng: random.Random) -> float:
    """A user's overestimate, in whole minutes as Slurm keeps it."""
    return 60.0 * math.ceil(runtime * rng.uniform(1.2, 3.0) / 60)


def burst(cpus: int, count: int = 40, seed: int = 1) -> list[Job]:
    rng = random.Random(seed)
    sizes = [s for s in (1, 2, 3, 4, 6, 8, 12) if s <= cpus]
    jobs = []
    for i in range(count):
        runtime = float(rng.randint(20, 150))
        jobs.append(Job(str(i + 1), 0.0, rng.choice(sizes), Delay(runtime), walltime=_limit(runtime, rng)))
    return jobs


def spaced(cpus: int, count: int = 40, gap: float = 10.0, seed: int = 2) -> list[Job]:
    return [replace(job, submit_time=i * gap) for i, job in enumerate(burst(cpus, count, seed))]


def swf_slice(cpus: int, count: int = 40, trace: str = "KTH-SP2-1996-2.1-cln.swf.gz", skip: int = 5000,
              shrink: float = 40.0) -> list[Job]:
    """`count` consecutive jobs of a real trace, time divided by `shrink`, sizes scaled to `cpus`."""
    workload = read_swf(TRACES / trace)
    max_procs = int(workload.header.get("MaxProcs", "100").split()[0])
    jobs: list[Job] = []
    origin = None
    for job in workload.jobs:
        if skip:
            skip -= 1
            continue
        if origin is None:
            origin = job.submit_time
        assert isinstance(job.profile, Delay)
        runtime = max(5.0, round(job.profile.seconds / shrink))
        walltime = job.walltime if job.walltime is not None else job.profile.seconds * 2
        limit = 60.0 * max(1, math.ceil(max(walltime / shrink, runtime) / 60))
        size = max(1, min(cpus, round(job.nb_res * cpus / max_procs)))
        jobs.append(Job(str(len(jobs) + 1), round((job.submit_time - origin) / shrink), size, Delay(runtime),
                        walltime=limit))
        if len(jobs) == count:
            break
    return jobs


def scenarios() -> Iterator[tuple[str, str, str, str, str]]:
    for cluster in CLUSTERS:
        for scheduler in SCHEDULERS:
            for priority in PRIORITIES:
                for trace in ("burst", "spaced", "swf"):
                    yield f"{cluster}-{scheduler}-{priority}-{trace}", cluster, scheduler, priority, trace


def trace_jobs(trace: str, cpus: int) -> list[Job]:
    return {"burst": burst, "spaced": spaced, "swf": swf_slice}[trace](cpus)


DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "slurm_validation"


REQUESTS = Path(__file__).resolve().parents[1] / "tests" / "data" / "slurm_requests"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
REQUEST_SCENARIOS = {
    **{d.name: (d / "slurm.conf", d / "jobs.csv") for d in sorted(REQUESTS.iterdir())},
    "memory": (EXAMPLES / "requests.conf", EXAMPLES / "requests.csv"),
    "job-scripts": (EXAMPLES / "gres.conf", EXAMPLES / "job-scripts"),
}
"""The request scenarios of tests/test_slurm_sbatch_replay.py (name -> slurm.conf, workload), recorded as
`requests-NAME`."""


def record(name: str, text: str, jobs: list[Job], speedup: float, runs: int, output: Path, data: Path) -> None:
    """Replay the jobs on the slurm.conf `text` `runs` times into real Slurm (clusters and logs in output/), and
    keep each run's whole-second record (what scontrol and sacct give) with its replay.json in data/<name>/x<K>/."""
    directory = output / name / f"x{speedup:g}"
    kept = data / name / f"x{speedup:g}"
    kept.mkdir(parents=True, exist_ok=True)
    (kept / "slurm.conf").write_text(text)
    conf = parse_slurm_conf(text, source=str(kept / "slurm.conf"))
    for number in range(1, runs + 1):
        if (kept / f"real{number}.csv").exists():
            continue
        result = replay(jobs, conf, directory / f"cluster{number}", speedup=speedup)
        write_replay(result, directory / f"real{number}")
        whole_second_records(directory / f"real{number}" / "jobs.csv", kept / f"real{number}.csv")
        shutil.copy(directory / f"real{number}" / "replay.json", kept / f"replay{number}.json")
        print(f"{name} x{speedup:g} run {number}: {result.wall_seconds:.0f} s", flush=True)


def record_trace(name: str, cluster: str, scheduler: str, priority: str, trace: str, speedup: float, runs: int,
                 output: Path, data: Path) -> None:
    """Record one of the generated scenarios (a cluster, a scheduler, a priority plugin and a trace)."""
    text = conf_text(cluster, priority, scheduler)
    cpus = sum(n.cpus for n in parse_slurm_conf(text).nodes)
    record(name, text, trace_jobs(trace, cpus), speedup, runs, output, data)


def record_requests(name: str, speedup: float, runs: int, output: Path, data: Path) -> None:
    """Record a request scenario (sbatch options or job scripts) as `requests-NAME`."""
    conf, workload = REQUEST_SCENARIOS[name]
    record(f"requests-{name}", conf.read_text(encoding="utf-8"), list(load_workload(workload).jobs), speedup, runs,
           output, data)


def evaluate_all(data: Path, output: Path) -> list[tuple[str, float, Verdict, float]]:
    """Simulate each real run of every recorded scenario and judge it: (name, K, verdict, simulation seconds)."""
    results = []
    for directory in scenario_directories(data):
        name, speedup = directory.parent.name, float(directory.name[1:])
        for reference in (1, 2):
            started = time.perf_counter()
            verdict = evaluate(directory, output / name / directory.name / f"simulated{reference}", name, reference)
            results.append((name, speedup, verdict, time.perf_counter() - started))
    return results


def every_scenario(data: Path, output: Path) -> list[tuple[str, float, ScenarioVerdict]]:
    """The issue's verdict on every recorded scenario with all its real runs (`judge_all_runs`: each run
    simulated, the mean distance to its simulation against the mean distance between two runs)."""
    return sorted((d.parent.name, float(d.name[1:]), judge_all_runs(d, output / d.parent.name / d.name,
                                                                      d.parent.name))
                  for d in scenario_directories(data))


def third_runs(data: Path) -> list[tuple[str, float, Verdict, float]]:
    """Each scenario's third real run (if recorded) judged against each of its first two as a simulation is."""
    results = []
    for directory in scenario_directories(data):
        if (directory / "real3.csv").exists():
            for reference in (1, 2):
                verdict = judge(directory, directory / "real3.csv", directory.parent.name, reference)
                results.append((directory.parent.name, float(directory.name[1:]), verdict, 0.0))
    return results


def every_run(results: list[tuple[str, float, Verdict, float]], data: Path, output: Path) -> str:
    """The scenarios with a third real run judged with every run recorded (the model's mean distance to each of
    them against the mean distance between two of them), next to their verdict on runs 1 and 2 alone and, where
    more were recorded, on runs 1 to 3."""
    two = {(name, k): v for name, k, v in by_scenario(results)}
    lines = ["| scenario | K | runs | runs 1 and 2 | runs 1 to 3 | every run: mean abs (s) model / runs | max (s) "
             "| flips | makespan (s) | target met |", "|---|---|---|---|---|---|---|---|---|---|"]
    met = met_two = met_three = count = 0
    for directory in scenario_directories(data):
        runs = recorded_runs(directory)
        if len(runs) < 3:
            continue
        name, speedup = directory.parent.name, float(directory.name[1:])
        verdict = judge_all_runs(directory, output / name / directory.name / "every-run", name)
        three = verdict if len(runs) == 3 else judge_all_runs(
            directory, output / name / directory.name / "runs1to3", name, runs=runs[:3])
        cells = " | ".join(f"{m:.{p}f} / {r:.{p}f}" for m, r, p in
                           zip(verdict.model, verdict.spread, (2, 1, 1, 1), strict=True))
        lines.append(f"| {name} | {speedup:g} | {len(runs)} | {'yes' if two[name, speedup].met else 'no'} "
                     f"| {'yes' if three.met else 'no'} | {cells} | {'yes' if verdict.met else 'no'} |")
        count += 1
        met += verdict.met
        met_three += three.met
        met_two += two[name, speedup].met
    lines.append(f"\nWith every recorded run: {met} of {count} scenarios meet the target; with runs 1 to 3, "
                 f"{met_three} of the same {count}; with runs 1 and 2 alone, {met_two}.")
    return "\n".join(lines)


def measured_share(outputs: list[Path]) -> str:
    """EPILOG_SHARE measured on the slurmctld logs kept by --record (output/NAME/xK/clusterN, realN)."""
    runs = [(log, log.parents[2] / f"real{log.parents[1].name[len('cluster'):]}" / "replay.json")
            for output in outputs for log in sorted(output.glob("*/x*/cluster*/log/slurmctld.log"))]
    share, per_run = epilog_share((log, replay) for log, replay in runs if replay.exists())
    lines = ["| K | runs | end-to-pass latency: mean, median over the runs (s) | overhead, median (s) |",
             "|---|---|---|---|"]
    for speedup in sorted({k for k, _, _ in per_run}):
        group = [(lat, ov) for k, lat, ov in per_run if k == speedup]
        lines.append(f"| {speedup:g} | {len(group)} | {statistics.median(g[0] for g in group):.2f} "
                     f"| {statistics.median(g[1] for g in group):.2f} |")
    lines.append(f"\nepilog share (median over {len(per_run)} runs of (mean latency - sched_latency) / overhead): "
                 f"{share:.3f}")
    return "\n".join(lines)


SHARES = (0.045, 0.05, 0.055, 0.06, 0.065)
CALL_SHARES = (0.1, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5)
"""The candidates `--fit-timing` tries (EPILOG_SHARE, CALL_SHARE)."""


def fitted_timing(data: Path, output: Path) -> str:
    """EPILOG_SHARE and CALL_SHARE fitted on the whole-second records (`fit_timing`): per candidate pair, the mean
    gap from a job's end to the start it made room for and the mean wait of the jobs a submission's pass served,
    real / model, per K, and the sum of squared differences."""
    best, results = fit_timing(data, output / "fit-timing", SHARES, CALL_SHARES)
    speedups = sorted(results[0][3])
    lines = ["| epilog share | call share | " + " | ".join(f"K={k:g}: gap, wait: real / model (s)" for k in speedups)
             + " | sum of squares |", "|---|---|" + "---|" * (len(speedups) + 1)]
    for share, call_share, squares, gaps, waits in results:
        lines.append(f"| {share:g} | {call_share:g} | " + " | ".join(
            f"{gaps[k][0]:.2f} / {gaps[k][1]:.2f}, {waits[k][0]:.2f} / {waits[k][1]:.2f}" if k in waits else
            f"{gaps[k][0]:.2f} / {gaps[k][1]:.2f}" for k in speedups) + f" | {squares:.4f} |")
    lines.append(f"\nleast squares: epilog share {best[0]:g}, call share {best[1]:g}")
    return "\n".join(lines)


def measured_calls(data: Path) -> str:
    """One sbatch call over the run's per-job overhead, measured on every recorded burst run (`burst_call_shares`):
    per K and over all, the mean and the median (what CALL_SHARE is checked against)."""
    calls = burst_call_shares(data)
    if not calls:
        return "no recorded burst run"
    lines = ["| K | runs | call (s): mean, median | call / overhead: mean, median | wall time of a call (ms): mean, "
             "min, max |", "|---|---|---|---|---|"]
    groups: dict[float, list[tuple[str, int, float, float]]] = {}
    for call in calls:
        groups.setdefault(float(call[0].rpartition("/x")[2]), []).append(call)
    for speedup, group in [*sorted(groups.items()), (0.0, calls)]:
        seconds = [c[2] for c in group]
        shares = [c[3] for c in group]
        walls = [1000 * c[2] / float(c[0].rpartition("/x")[2]) for c in group]
        lines.append(f"| {f'{speedup:g}' if speedup else 'all'} | {len(group)} "
                     f"| {statistics.fmean(seconds):.3f}, {statistics.median(seconds):.3f} "
                     f"| {statistics.fmean(shares):.3f}, {statistics.median(shares):.3f} "
                     f"| {statistics.fmean(walls):.1f}, {min(walls):.1f}, {max(walls):.1f} |")
    return "\n".join(lines)


def swept_phases(data: Path, output: Path, count: int) -> str:
    """Every scenario judged with the loop's tick at `count` phases spread evenly over its period (`phase_sweep`):
    per scenario, the phases at which it meets the target, and a random phase's expected distances (their mean
    over the phases) against the median phase's (the model's) and the runs' spread; then the count per phase."""
    phases = [(i + 0.5) / count for i in range(count)]
    lines = [f"Phases: {', '.join(f'{p:g}' for p in phases)} of the loop's period after each submission and end.\n",
             "| scenario | K | phases meeting the target | random phase, expected: mean / max / flips / makespan "
             "| median phase (model) | runs | expected distances met | median phase met |",
             "|---|---|---|---|---|---|---|---|"]
    per_phase = [0] * count
    expected_met = model_met = 0
    fraction = 0.0
    for directory in scenario_directories(data):
        name, speedup = directory.parent.name, float(directory.name[1:])
        swept = phase_sweep(directory, output / name / directory.name, phases, name)
        middle = judge_all_runs(directory, output / name / directory.name / "median", name)
        for index, (_, verdict) in enumerate(swept):
            per_phase[index] += verdict.met
        expected = tuple(statistics.fmean(v.model[i] for _, v in swept) for i in range(4))
        spread = middle.spread
        expected_ok = all(e <= r + 1e-9 for e, r in zip(expected, spread, strict=True))
        expected_met += expected_ok
        model_met += middle.met
        met = [phase for phase, verdict in swept if verdict.met]
        fraction += len(met) / count
        lines.append(
            f"| {name} | {speedup:g} | {len(met)} of {count}"
            f"{': ' + ', '.join(f'{p:g}' for p in met) if 0 < len(met) < count else ''} "
            f"| {' / '.join(f'{e:.2f}' for e in expected)} | {' / '.join(f'{m:.2f}' for m in middle.model)} "
            f"| {' / '.join(f'{r:.2f}' for r in spread)} | {'yes' if expected_ok else 'no'} "
            f"| {'yes' if middle.met else 'no'} |")
    total = len(scenario_directories(data))
    lines.append(f"\nScenarios meeting the target per phase: "
                 f"{', '.join(f'{p:g}: {n}' for p, n in zip(phases, per_phase, strict=True))} (of {total}).")
    lines.append(f"A phase drawn uniformly, once per run: {fraction:.1f} of {total} scenarios meet the target on "
                 f"average; its expected distances meet it on {expected_met}; the median phase (the model) on "
                 f"{model_met}.")
    return "\n".join(lines)


def random_phases(data: Path, output: Path, seeds: int) -> str:
    """Every scenario judged with the loop's tick at a phase drawn anew, uniformly over its period, for every pass
    the model asks for while none is pending (a submission's latency the tick, an end's 0.12 s more, as
    `phase_latencies`), seeded per seed and scenario: a model of the phase as a distribution. It replaces the
    model's `_ask_for_pass` for the run, so it needs the pure (not compiled) path."""
    from clustersim.policies.slurm.policy import SUBMIT_LATENCY, SlurmModel

    original = SlurmModel._ask_for_pass
    rng = random.Random()

    def drawn(model: SlurmModel, now: float, latency: float) -> None:
        if model._request is None:
            latency = latency - SUBMIT_LATENCY + rng.random() * LOOP_PERIOD
        original(model, now, latency)

    lines = ["| seed | scenarios meeting the target | missed |", "|---|---|---|"]
    counts = []
    try:
        SlurmModel._ask_for_pass = drawn  # type: ignore[method-assign]
    except (AttributeError, TypeError):
        return "the phase can only be drawn on the pure path (PYTHONPATH=src)"
    try:
        for seed in range(seeds):
            missed = []
            directories = scenario_directories(data)
            for directory in directories:
                name = f"{directory.parent.name} {directory.name}"
                rng.seed(f"{seed}:{name}")
                verdict = judge_all_runs(directory, output / f"seed{seed}" / directory.parent.name / directory.name,
                                         directory.parent.name)
                if not verdict.met:
                    missed.append(name)
            counts.append(len(directories) - len(missed))
            lines.append(f"| {seed} | {counts[-1]} of {len(directories)} | {', '.join(missed)} |")
    finally:
        SlurmModel._ask_for_pass = original  # type: ignore[method-assign]
    lines.append(f"\nMean over {seeds} seeds: {statistics.fmean(counts):.1f} scenarios.")
    return "\n".join(lines)


GRID_CALL_SHARES = (0.1, 0.2, 0.3, 0.35, 0.4, 0.5)
GRID_EPILOG_SHARES = (0.03, 0.06, 0.1)


def gridded_timings(data: Path, output: Path, items: list[str]) -> str:
    """Each named scenario (NAME@K) judged at every timing of a grid: ten phases of the loop, the call shares
    GRID_CALL_SHARES and the epilog shares GRID_EPILOG_SHARES (`timing_grid`); the timings that meet the target."""
    phases = [(i + 0.5) / 10 for i in range(10)]
    lines = ["| scenario | K | timings meeting the target | which (phase, call share, epilog share) |",
             "|---|---|---|---|"]
    for item in items:
        name, _, speedup = item.partition("@")
        directory = data / name / f"x{float(speedup):g}"
        grid = timing_grid(directory, output / name / directory.name / "grid", phases, GRID_CALL_SHARES,
                           GRID_EPILOG_SHARES, name)
        met = [f"({p:g}, {c:g}, {e:g})" for p, c, e, verdict in grid if verdict.met]
        lines.append(f"| {name} | {float(speedup):g} | {len(met)} of {len(grid)} | {', '.join(met) or '-'} |")
    return "\n".join(lines)


def figure(results: list[tuple[str, float, Verdict, float]], data: Path, output: Path, path: Path) -> None:
    """Real vs simulated start times of every scenario, one panel each (the docs' figure)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from clustersim.slurm.compare import read_schedule

    columns = 5
    rows = max(1, math.ceil(len(results) / columns))
    fig, axes = plt.subplots(rows, columns, figsize=(3.2 * columns, 3.0 * rows), squeeze=False)
    for ax in axes.flat[len(results):]:
        ax.axis("off")
    for ax, (name, speedup, verdict, _) in zip(axes.flat, results, strict=False):
        kept = data / name / f"x{speedup:g}"
        ref = verdict.reference
        real = read_schedule(kept / f"real{ref}.csv", whole_seconds=True)
        sim = read_schedule(output / name / f"x{speedup:g}" / f"simulated{ref}" / "jobs.csv", whole_seconds=True)
        other = read_schedule(kept / f"real{3 - ref}.csv", whole_seconds=True)
        common = sorted(set(real) & set(sim) & set(other))
        top = max([real[j].start for j in common] + [sim[j].start for j in common] + [1.0])
        ax.plot([0, top], [0, top], color="grey", linewidth=0.7)
        ax.scatter([real[j].start for j in common], [other[j].start for j in common], s=14, marker="x",
                   color="tab:orange", label="other real run")
        ax.scatter([real[j].start for j in common], [sim[j].start for j in common], s=9, color="tab:blue",
                   label="simulated")
        ax.set_title(f"{name} x{speedup:g} run {ref}{'' if verdict.met else ' (missed)'}", fontsize=7)
        ax.tick_params(labelsize=6)
    axes.flat[0].legend(fontsize=6)
    fig.supxlabel("start in the real run simulated (s)", fontsize=8)
    fig.supylabel("start (s)", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def table(results: list[tuple[str, float, Verdict, float]]) -> str:
    """The docs' table: each distance of the simulation of a real run to that run, next to the other run's."""
    lines = [
        "| scenario | K | run | mean abs start diff (s): sim / other run | max (s): sim / other | flips: sim / other "
        "| makespan diff (s): sim / other | target met | farther on |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, speedup, verdict, _ in results:
        sim, real = verdict.simulated, verdict.spread
        lines.append(
            f"| {name} | {speedup:g} | {verdict.reference} | {sim.mean_abs:.2f} / {real.mean_abs:.2f} "
            f"| {sim.max_abs:.0f} / {real.max_abs:.0f} | {sim.order_flips} / {real.order_flips} "
            f"| {sim.makespan_difference:+.0f} / {real.makespan_difference:+.0f} | {'yes' if verdict.met else 'no'} | "
            f"{'; '.join(verdict.farther) or '-'} |"
        )
    met = sum(v.met for _, _, v, _ in results)
    share = 100 * met / max(1, len(results))
    lines.append(f"\n{met} of {len(results)} (scenario, real run) pairs meet the target ({share:.0f}%).")
    return "\n".join(lines)


def by_scenario(results: list[tuple[str, float, Verdict, float]]) -> list[tuple[str, float, ScenarioVerdict]]:
    """The issue's verdict per scenario (name, K): its runs' verdicts combined (`scenario_verdict`)."""
    keys = sorted({(name, k) for name, k, _, _ in results})
    runs = {key: [v for n, s, v, _ in results if (n, s) == key] for key in keys}
    return [(name, k, scenario_verdict(name, [v.simulated for v in runs[name, k]], [v.spread for v in runs[name, k]]))
            for name, k in keys]


def scenario_table(verdicts: list[tuple[str, float, ScenarioVerdict]], candidate: str = "model") -> str:
    """The docs' per-scenario table: each distance of the candidate (the model, or a third real run) to a real run,
    the mean over the runs, next to the mean distance between two real runs."""
    lines = [
        f"| scenario | K | runs | mean abs start diff (s): {candidate} / runs | max (s): {candidate} / runs "
        f"| flips: {candidate} / runs | abs makespan diff (s): {candidate} / runs | target met |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, speedup, verdict in verdicts:
        cells = " | ".join(f"{m:.{p}f} / {r:.{p}f}" for m, r, p in
                           zip(verdict.model, verdict.spread, (2, 1, 1, 1), strict=True))
        missed = [short for short, model, spread in zip(("mean", "max", "flips", "makespan"), verdict.model,
                                                         verdict.spread, strict=True) if model > spread + 1e-9]
        lines.append(f"| {name} | {speedup:g} | {verdict.runs} | {cells} "
                     f"| {'no: ' + ', '.join(missed) if missed else 'yes'} |")
    met = sum(v.met for _, _, v in verdicts)
    trace = [v for name, _, v in verdicts if not name.startswith("requests-")]
    lines.append(f"\n{met} of {len(verdicts)} scenarios meet the target ({100 * met / max(1, len(verdicts)):.0f}%); "
                 f"trace scenarios {sum(v.met for v in trace)} of {len(trace)}, request scenarios "
                 f"{met - sum(v.met for v in trace)} of {len(verdicts) - len(trace)}.")
    return "\n".join(lines)


def by_acceleration(results: list[tuple[str, float, Verdict, float]],
                    verdicts: list[tuple[str, float, ScenarioVerdict]], data: Path) -> str:
    """The docs' "which accelerations stay faithful" table, from the same records: per K, what acceleration does
    to the replay (its measured per-job overhead, its largest submit slip, both in cluster seconds, medians over
    the real runs), how far two real runs are from each other, and how far the simulation is."""
    import json

    lines = [
        "| K | scenarios | overhead (s) | submit slip (s) | two real runs: mean abs start diff, median (max) "
        "| simulation: median (max) | target met: scenarios, pairs |",
        "|---|---|---|---|---|---|---|",
    ]
    for speedup in sorted({k for _, k, _, _ in results}):
        group = [(name, v) for name, k, v, _ in results if k == speedup]
        names = sorted({name for name, _ in group})
        infos = [json.loads((data / name / f"x{speedup:g}" / f"replay{n}.json").read_text()) for name in names
                 for n in (1, 2)]
        spreads = [v.spread.mean_abs for name, v in group if v.reference == 1]
        simulated = [v.simulated.mean_abs for _, v in group]
        met = sum(v.met for _, v in group)
        scenarios = [v for _, k, v in verdicts if k == speedup]
        lines.append(
            f"| {speedup:g} | {len(names)} | {statistics.median(i['overhead'] for i in infos):.2f} "
            f"| {statistics.median(i['submit_slip'] for i in infos):.1f} "
            f"| {statistics.median(spreads):.2f} ({max(spreads):.2f}) "
            f"| {statistics.median(simulated):.2f} ({max(simulated):.2f}) "
            f"| {sum(v.met for v in scenarios)} of {len(scenarios)}, {met} of {len(group)} |"
        )
    return "\n".join(lines)


def gap_table(results: list[tuple[str, float, Verdict, float]], data: Path, output: Path) -> str:
    """The chains' step, per K: the whole-second gap from a job's end to the start it made room for
    (`whole_second_gaps`), in the real runs and in their simulations (trace scenarios; EPILOG_SHARE is the share
    that makes the two means agree)."""
    from clustersim.slurm.compare import read_schedule

    lines = ["| K | gaps: real, model | mean gap (s): real / model | gaps of 0 s: real / model "
             "| submission to start: jobs, real / model | mean (s): real / model |", "|---|---|---|---|---|---|"]
    for speedup in sorted({k for name, k, _, _ in results if not name.startswith("requests-")}):
        real: list[float] = []
        model: list[float] = []
        real_waits: list[float] = []
        model_waits: list[float] = []
        for name, k, verdict, _ in results:
            if k != speedup or name.startswith("requests-"):
                continue
            run = f"x{speedup:g}"
            recorded = read_schedule(data / name / run / f"real{verdict.reference}.csv", True)
            simulated = read_schedule(output / name / run / f"simulated{verdict.reference}" / "jobs.csv", True)
            real += whole_second_gaps(recorded)
            model += whole_second_gaps(simulated)
            real_waits += submission_gaps(recorded)
            model_waits += submission_gaps(simulated)
        if real and model and real_waits and model_waits:
            lines.append(f"| {speedup:g} | {len(real)}, {len(model)} "
                         f"| {statistics.fmean(real):.2f} / {statistics.fmean(model):.2f} "
                         f"| {real.count(0) / len(real):.0%} / {model.count(0) / len(model):.0%} "
                         f"| {len(real_waits)} / {len(model_waits)} "
                         f"| {statistics.fmean(real_waits):.2f} / {statistics.fmean(model_waits):.2f} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA, help="the recorded whole-second runs")
    parser.add_argument("--output", type=Path, default=Path("slurm-validation"), help="clusters, simulations")
    parser.add_argument("--record", nargs="*", metavar="SCENARIO@K",
                        help="replay these (e.g. four-backfill-basic-burst@10) into real Slurm first")
    parser.add_argument("--record-requests", nargs="*", metavar="NAME@K",
                        help=f"replay these request scenarios ({', '.join(REQUEST_SCENARIOS)}) first")
    parser.add_argument("--runs", type=int, default=2, help="real runs per scenario (2 gives the spread)")
    parser.add_argument("--figure", type=Path, help="draw real vs simulated starts of every scenario (PNG)")
    parser.add_argument("--measure-share", nargs="+", type=Path, metavar="OUTPUT",
                        help="only measure the epilog share on the logs kept in these --output directories")
    parser.add_argument("--fit-timing", action="store_true",
                        help="only fit the epilog and call shares on the whole-second records (least squares of "
                        "the chains' gaps and the submissions' waits)")
    parser.add_argument("--phase-sweep", type=int, metavar="N",
                        help="only judge every scenario with the background loop's tick at N phases of its period")
    parser.add_argument("--random-phase", type=int, metavar="SEEDS",
                        help="only judge every scenario with the loop's tick drawn at every pass (pure path)")
    parser.add_argument("--measure-calls", action="store_true",
                        help="only measure one sbatch call on the recorded bursts (calls back to back)")
    parser.add_argument("--timing-grid", nargs="+", metavar="SCENARIO@K",
                        help="only judge these scenarios at every timing of a grid (loop phase, call and epilog "
                        "shares)")
    args = parser.parse_args()
    if args.timing_grid:
        print(gridded_timings(args.data, args.output, args.timing_grid))
        return 0
    if args.measure_calls:
        print(measured_calls(args.data))
        return 0
    if args.random_phase:
        print(random_phases(args.data, args.output, args.random_phase))
        return 0
    if args.phase_sweep:
        print(swept_phases(args.data, args.output, args.phase_sweep))
        return 0
    if args.measure_share:
        print(measured_share(args.measure_share))
        return 0
    if args.fit_timing:
        print(fitted_timing(args.data, args.output))
        return 0
    known = {s[0]: s for s in scenarios()}
    for item in args.record or []:
        name, _, speedup = item.partition("@")
        if name not in known or not speedup:
            print(f"not SCENARIO@K: {item}; scenarios: {', '.join(known)}", file=sys.stderr)
            return 2
        record_trace(*known[name], float(speedup), args.runs, args.output, args.data)
    for item in args.record_requests or []:
        name, _, speedup = item.partition("@")
        if name not in REQUEST_SCENARIOS or not speedup:
            print(f"not NAME@K: {item}; request scenarios: {', '.join(REQUEST_SCENARIOS)}", file=sys.stderr)
            return 2
        record_requests(name, float(speedup), args.runs, args.output, args.data)
    results = evaluate_all(args.data, args.output)
    verdicts = every_scenario(args.data, args.output)
    print(scenario_table(verdicts))
    print()
    print(table(results))
    print()
    print(by_acceleration(results, verdicts, args.data))
    print()
    print(gap_table(results, args.data, args.output))
    third = third_runs(args.data)
    if third:
        print("\nThe scenarios with three real runs or more, judged on every run:\n")
        print(every_run(results, args.data, args.output))
        print("\nA third real run judged as the model is:\n")
        print(scenario_table(by_scenario(third), "third run"))
        print()
        print(table(third))
    if args.figure is not None:
        figure(results, args.data, args.output, args.figure)
    return 0


if __name__ == "__main__":
    sys.exit(main())
