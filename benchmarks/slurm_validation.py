"""Validate the `slurm` policy against a real Slurm 22.05 on loopback: the numbers of docs/slurm.md.

For each scenario (a cluster: one node of 16 CPUs or four nodes of 4 CPUs; a priority plugin: basic or
multifactor; a trace: burst, spaced, or a slice of the KTH-SP2 SWF trace scaled to the cluster) it replays the
trace into real Slurm (twice with --runs 2, for the run-to-run spread), simulates the jobs Slurm observed with
the `slurm` policy from the same slurm.conf, and compares. Outputs go to --output/<scenario>/.

    python benchmarks/slurm_validation.py --output /tmp/slurm-validation            # every scenario, K=10
    python benchmarks/slurm_validation.py --scenarios four-basic-burst --speedups 1 5 10 20 50
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from clustersim.policies.slurm.conf import parse_slurm_conf
from clustersim.slurm.compare import compare_files, plot, report, write_json
from clustersim.slurm.replay import log_times, replay, simulate_replay, write_replay
from clustersim.workload.job import Job
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
COMMON = "SchedulerType=sched/backfill\nSelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n"


def conf_text(cluster: str, priority: str) -> str:
    return f"# {cluster} cluster, priority/{priority}\n{COMMON}{PRIORITIES[priority]}{CLUSTERS[cluster]}"


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


def scenarios() -> Iterator[tuple[str, str, str, str]]:
    for cluster in CLUSTERS:
        for priority in PRIORITIES:
            for trace in ("burst", "spaced", "swf"):
                yield f"{cluster}-{priority}-{trace}", cluster, priority, trace


def trace_jobs(trace: str, cpus: int) -> list[Job]:
    return {"burst": burst, "spaced": spaced, "swf": swf_slice}[trace](cpus)


def run(
    name: str, cluster: str, priority: str, trace: str, speedup: float, runs: int, output: Path
) -> dict[str, object]:
    """Replay the scenario `runs` times into real Slurm, then simulate and compare (`evaluate`)."""
    directory = output / name / f"x{speedup:g}"
    directory.mkdir(parents=True, exist_ok=True)
    text = conf_text(cluster, priority)
    (directory / "slurm.conf").write_text(text)
    conf = parse_slurm_conf(text, source=str(directory / "slurm.conf"))
    jobs = trace_jobs(trace, sum(n.cpus for n in conf.nodes))
    for number in range(1, runs + 1):
        result = replay(jobs, conf, directory / f"cluster{number}", speedup=speedup)
        write_replay(result, directory / f"real{number}")
    return evaluate(directory, name, speedup)


def evaluate(directory: Path, name: str, speedup: float) -> dict[str, object]:
    """Simulate the first real run's jobs (as Slurm observed them) and compare with both real runs."""
    conf = parse_slurm_conf((directory / "slurm.conf").read_text(), source=str(directory / "slurm.conf"))
    first = json.loads((directory / "real1" / "replay.json").read_text())
    started = time.perf_counter()
    simulate_replay(directory / "real1" / "jobs.csv", conf, first["ctld_start"], directory / "simulated",
                    clock_origin=first["origin_epoch"])
    sim_seconds = time.perf_counter() - started
    baseline = directory / "real2" / "jobs.csv" if (directory / "real2").exists() else None
    deviations = compare_files(directory / "real1" / "jobs.csv", directory / "simulated" / "jobs.csv", baseline)
    write_json(deviations, directory / "comparison.json")
    plot(directory / "real1" / "jobs.csv", directory / "simulated" / "jobs.csv", directory / "starts.png", name)
    text = report(deviations)
    (directory / "comparison.md").write_text(text + "\n")
    span = deviations["simulated vs real"].reference.makespan
    summary = {
        "scenario": name, "speedup": speedup, "jobs": deviations["simulated vs real"].jobs,
        "real_wall_s": round(first["wall_seconds"], 1), "trace_span_s": span, "simulation_wall_s": sim_seconds,
        "simulation_speedup": span / sim_seconds if sim_seconds else math.inf,
        **{k: v.as_dict() for k, v in deviations.items()},
    }
    (directory / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"## {name} at x{speedup:g}\n\n{text}\n", flush=True)
    return summary


def refine_times(real_dir: Path, log: Path) -> int:
    """Rewrite a replay's jobs.csv written in whole seconds with the millisecond times of slurmctld's log (what
    `replay(precise=True)` now records directly); returns the number of jobs refined."""
    import csv

    times = log_times(log)
    path = real_dir / "jobs.csv"
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        fields = list(reader.fieldnames or [])
        rows = list(reader)
    origin = json.loads((real_dir / "replay.json").read_text())["origin_epoch"]
    refined = 0
    for row in rows:
        meta = dict(item.partition("=")[::2] for item in row["metadata"].split(";") if "=" in item)
        exact = times.get(int(meta.get("slurm_id", -1)), {})
        if "times" in meta or not all(k in exact for k in ("submit", "start", "end")):
            continue
        submit, start, end = (round(exact[k] - origin, 3) for k in ("submit", "start", "end"))
        if any(abs(math.floor(v) - float(row[c])) > 1 for v, c in
               ((submit, "submission_time"), (start, "starting_time"), (end, "finish_time"))):
            continue
        row.update(submission_time=repr(submit), starting_time=repr(start), finish_time=repr(end),
                   execution_time=repr(end - start), waiting_time=repr(start - submit),
                   turnaround_time=repr(end - submit), stretch=repr((end - submit) / (end - start)),
                   metadata=row["metadata"] + f";times=log;slurm_start={row['starting_time']};"
                   f"slurm_end={row['finish_time']}")
        refined += 1
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return refined


def figure(output: Path, path: Path) -> None:
    """Real vs simulated start times of every scenario, one panel each (the docs' figure)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from clustersim.slurm.compare import read_schedule

    directories = sorted(p.parents[1] for p in output.glob("*/x*/simulated/jobs.csv"))
    columns = 3
    rows = max(1, math.ceil(len(directories) / columns))
    fig, axes = plt.subplots(rows, columns, figsize=(4 * columns, 3.6 * rows), squeeze=False)
    for ax in axes.flat[len(directories):]:
        ax.axis("off")
    for ax, directory in zip(axes.flat, directories, strict=False):
        real = read_schedule(directory / "real1" / "jobs.csv")
        sim = read_schedule(directory / "simulated" / "jobs.csv")
        other = read_schedule(directory / "real2" / "jobs.csv") if (directory / "real2").exists() else {}
        common = sorted(set(real) & set(sim))
        top = max([real[j].start for j in common] + [sim[j].start for j in common] + [1.0])
        ax.plot([0, top], [0, top], color="grey", linewidth=0.7)
        if other:
            both = sorted(set(real) & set(other))
            ax.scatter([real[j].start for j in both], [other[j].start for j in both], s=14, marker="x",
                       color="tab:orange", label="real run 2")
        ax.scatter([real[j].start for j in common], [sim[j].start for j in common], s=9, color="tab:blue",
                   label="simulated")
        ax.set_title(directory.parent.name, fontsize=9)
        ax.set_xlabel("real run 1 start (s)", fontsize=8)
        ax.set_ylabel("start (s)", fontsize=8)
        ax.tick_params(labelsize=7)
    axes.flat[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def table(output: Path) -> str:
    """The docs' deviation table from the summaries of a validation directory (`--table`)."""
    lines = [
        "| scenario | jobs | real wall (s) | sim within 2 s | real 2 within 2 s | sim flips | real 2 flips "
        "| sim max (s) | real 2 max (s) | makespan sim / real 2 | mean wait sim / real 2 | bounded sld sim / real 2 "
        "| utilisation sim / real 2 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for path in sorted(output.glob("*/x*/summary.json")):
        data = json.loads(path.read_text())
        sim, real = data["simulated vs real"], data.get("real run 2 vs real", {})

        def pct(d: dict[str, object], key: str) -> str:
            rel = d.get("relative", {})
            return f"{100 * rel[key]:+.2f}%" if isinstance(rel, dict) and key in rel else "-"

        lines.append(
            f"| {data['scenario']} x{data['speedup']:g} | {data['jobs']} | {data['real_wall_s']} "
            f"| {100 * sim['within_2s']:.0f}% | {100 * real.get('within_2s', 0):.0f}% "
            f"| {sim['order_flips']}/{sim['ordered_pairs']} | {real.get('order_flips', '-')} "
            f"| {sim['start_difference_max_abs']:.1f} | {real.get('start_difference_max_abs', 0):.1f} | "
            + " | ".join(f"{pct(sim, k)} / {pct(real, k)}" for k in
                         ("makespan", "mean_wait", "mean_bounded_slowdown", "utilisation")) + " |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", type=Path, default=Path("slurm-validation"))
    parser.add_argument("--scenarios", nargs="*", help="names such as four-basic-burst (default: all)")
    parser.add_argument("--speedups", nargs="*", type=float, default=[10.0])
    parser.add_argument("--runs", type=int, default=2, help="real runs per scenario (2 gives the spread)")
    parser.add_argument("--table", action="store_true", help="only print the table of an existing --output")
    parser.add_argument("--figure", type=Path, help="draw real vs simulated starts of every scenario (PNG)")
    parser.add_argument("--resimulate", action="store_true",
                        help="simulate and compare again the real runs already in --output (no Slurm needed)")
    args = parser.parse_args()
    if args.resimulate:
        for path in sorted(args.output.glob("*/x*/real1/replay.json")):
            directory = path.parents[1]
            for number in (1, 2):
                if (directory / f"real{number}").exists():
                    refine_times(directory / f"real{number}", directory / f"cluster{number}" / "log" / "slurmctld.log")
            evaluate(directory, directory.parent.name, float(directory.name[1:]))
    if args.figure is not None:
        figure(args.output, args.figure)
    if args.table or args.resimulate or args.figure is not None:
        print(table(args.output))
        return 0
    chosen = [s for s in scenarios() if not args.scenarios or s[0] in args.scenarios]
    if not chosen:
        print(f"no such scenario; valid: {', '.join(s[0] for s in scenarios())}", file=sys.stderr)
        return 2
    for name, cluster, priority, trace in chosen:
        for speedup in args.speedups:
            run(name, cluster, priority, trace, speedup, args.runs, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
