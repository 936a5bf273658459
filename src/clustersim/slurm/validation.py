"""Validation on whole-second records: two real runs of a scenario, the model's simulation of each, and the
issue's criterion (the simulation of a run no farther from that run than the other real run is).

A scenario directory holds what a user of a real Slurm has: `slurm.conf`, and for each real run N `realN.csv`
(the replay's jobs.csv with every time in whole seconds, as `sacct`/`scontrol` give them) and `replayN.json`
(the replay's clock acceleration, clock origin, slurmctld's start and measured per-job overhead).
"""

from __future__ import annotations

import bisect
import csv
import json
import math
import re
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from clustersim.errors import InputError
from clustersim.policies.slurm.conf import parse_slurm_conf
from clustersim.policies.slurm.policy import DEFAULT_LOOP_PERIOD, EPILOG_DELAY, SCHED_LATENCY, SUBMIT_LATENCY
from clustersim.slurm.compare import Deviation, Row, deviation, farther_than, read_schedule
from clustersim.slurm.replay import simulate_replay

EPILOG_SHARE = 0.06
"""The epilog delay of an accelerated replay, as a share of its measured per-job overhead: fitted with CALL_SHARE
on every recorded run at K <= 120 (least squares over K of the model's mean whole-second gap from a job's end to
the next start, `whole_second_gaps`, against the real runs' one, and of the submissions' waits, `fit_timing`;
0.055 to 0.065 fit about as well; 0.055 on the gaps alone with every submission of a second from its start,
0.045 with the former `SCHED_LATENCY` of 0.7 s; docs/slurm.md). The share read in slurmctld's logs
(`epilog_share`: 0.015 to 0.13 depending on the runs taken, 0.07 to 0.37 per K) made each step of a chain of jobs
0.1 to 0.5 s longer than the records show, and the error added up along chains."""
CALL_SHARE = 0.35
"""How long one of an accelerated replay's sbatch calls takes, as a share of its measured per-job overhead (both
are the machine's latencies stretched K times): where a whole-second record's submissions are placed in their
second (`spread_submissions`). Fitted with EPILOG_SHARE (`fit_timing`; 0.25, 0.3 and 0.4 leave a sum of squares
of 0.25 against 0.20): the model's mean whole-second wait of the jobs a submission's pass served
(`submission_gaps`) is then within 0.22 s of the real runs' one at every K <= 120 but 30 (1.37 s against 1.06 s),
where with every submission of a second at its start it was 0.3 to 0.9 s short at every K >= 10. It is the call
as the records' bursts measure it (`burst_call_shares`: 0.32 of the overhead on average over the 36 burst runs at
K = 10 to 120, median 0.24); replays now keep their median call (`call_seconds` in replay.json), which no recorded
run has yet."""
LOOP_PERIOD = 2 * SUBMIT_LATENCY
"""The background loop's period on an accelerated clock, in its seconds (1.02 s: 1.02 to 1.04 s at K=10 to 60 in
the kept slurmctld logs, 1.003 s at K=1); its tick falls at a uniform phase of it after a submission or an end, so
the model's latencies are its mean. A replay at K >= SHARE_MIN_SPEEDUP is simulated with it as the policy's
`loop_period` (the `batch_sched_delay` hold is counted in its ticks)."""
SHARE_MAX_SPEEDUP = 120.0
"""The accelerations the share is fitted on: above, a replay's own stalls dominate its gaps (docs/slurm.md)."""
SHARE_MIN_SPEEDUP = 10.0
"""Below this acceleration the end-to-pass latency's K-scaled part is lost in the loop's tick (0 to 1 s)."""
_LOG_LINE = re.compile(r"^\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?)\] (.*)")


def whole_second_records(jobs_csv: Path, output: Path) -> None:
    """Rewrite a replay's jobs.csv with Slurm's whole-second times (what `scontrol`/`sacct` show): the start and
    end it recorded (`slurm_start`, `slurm_end`), and the submit second (`eligible` when the job had no
    dependency and is not an array's task, else the floored submit time: a throttled task becomes eligible when
    it may start, long after the array's submission)."""
    with open(jobs_csv, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        fields = list(reader.fieldnames or [])
        rows = list(reader)
    for row in rows:
        if not row["starting_time"] or float(row["starting_time"]) < 0:
            continue
        meta = dict(item.partition("=")[::2] for item in row["metadata"].split(";") if "=" in item)
        if meta.get("eligible") and not any(meta.get(key) for key in ("dependency", "preceding_job", "array_job")):
            submit = float(meta["eligible"])
        else:
            submit = float(math.floor(float(row["submission_time"]) + 1e-6))
        start = float(meta.get("slurm_start") or math.floor(float(row["starting_time"]) + 1e-6))
        end = float(meta.get("slurm_end") or math.floor(float(row["finish_time"]) + 1e-6))
        turnaround = end - submit
        row.update(submission_time=f"{submit:g}", starting_time=f"{start:g}", finish_time=f"{end:g}",
                   execution_time=f"{end - start:g}", waiting_time=f"{start - submit:g}",
                   turnaround_time=f"{turnaround:g}",
                   stretch=f"{turnaround / (end - start):g}" if end > start else "-1",
                   metadata=";".join(f"{k}={v}" for k, v in meta.items() if k != "times") + ";times=whole-seconds")
    output.parent.mkdir(parents=True, exist_ok=True)
    with open(output, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def replay_options(replay_json: Path, share: float = EPILOG_SHARE, call_share: float = CALL_SHARE
                   ) -> dict[str, float]:
    """The options that place a replay's simulation on its clock: slurmctld's start, the clock origin, the epilog
    delay at its acceleration (`share` of the per-job overhead it measured, at least the unaccelerated default),
    how long one of its sbatch calls took (`call_share` of that overhead) and the background loop's period
    (LOOP_PERIOD at K >= SHARE_MIN_SPEEDUP, the unaccelerated default below)."""
    info = json.loads(replay_json.read_text(encoding="utf-8"))
    try:
        return {"ctld_start": float(info["ctld_start"]), "clock_origin": float(info["origin_epoch"]),
                "epilog_delay": round(EPILOG_DELAY + share * float(info["overhead"]), 3),
                "call_seconds": round(call_share * float(info["overhead"]), 3),
                "loop_period": LOOP_PERIOD if float(info["speedup"]) >= SHARE_MIN_SPEEDUP else DEFAULT_LOOP_PERIOD}
    except (KeyError, TypeError, ValueError) as error:
        raise InputError(str(replay_json), f"not a replay.json written by slurm-replay: {error}") from None


def burst_call_shares(root: Path, min_speedup: float = SHARE_MIN_SPEEDUP, max_speedup: float = SHARE_MAX_SPEEDUP
                      ) -> list[tuple[str, int, float, float]]:
    """One sbatch call's duration, measured on the recorded runs of a burst (every job's trace submit time the
    same: the replay makes its calls back to back): (the last submission's second + 0.5, its middle on average,
    minus the first's) / (jobs - 1), cluster seconds. Per run at min_speedup <= K <= max_speedup: (scenario
    directory, run, the call, the call over the run's measured per-job overhead)."""
    calls: list[tuple[str, int, float, float]] = []
    for directory in scenario_directories(root):
        if not min_speedup <= float(directory.name[1:]) <= max_speedup:
            continue
        for path in sorted(directory.glob("real*.csv")):
            run = int(path.stem[len("real"):])
            with open(path, newline="", encoding="utf-8") as f:
                rows = [row for row in csv.DictReader(f) if row["starting_time"]]
            aimed = {dict(item.partition("=")[::2] for item in row["metadata"].split(";")).get("trace_submit")
                     for row in rows}
            if len(rows) < 2 or len(aimed) != 1:
                continue
            submits = sorted(float(row["submission_time"]) for row in rows)
            call = (submits[-1] + 0.5 - submits[0]) / (len(submits) - 1)
            info = json.loads((directory / f"replay{run}.json").read_text(encoding="utf-8"))
            calls.append((f"{directory.parent.name}/{directory.name}", run, call, call / float(info["overhead"])))
    return calls


def end_to_pass_latencies(slurmctld_log: Path) -> list[float]:
    """Seconds from a job's end (`_job_complete: ... WEXITSTATUS`) to the main scheduler's next start (`sched:
    Allocate`) in a slurmctld log, for the ends that no submission followed before that start (a submission asks
    for a pass itself): what the model splits into the epilog delay and the wait for the background loop's tick.
    With several ends before a start, the last one counts."""
    latencies: list[float] = []
    last_end: datetime | None = None
    with open(slurmctld_log, encoding="utf-8", errors="replace") as f:
        for line in f:
            match = _LOG_LINE.match(line)
            if match is None:
                continue
            text = match.group(2)
            if "_job_complete" in text and "WEXITSTATUS" in text:
                last_end = datetime.fromisoformat(match.group(1))
            elif "_slurm_rpc_submit_batch_job" in text:
                last_end = None
            elif text.startswith("sched: Allocate") and last_end is not None:
                latencies.append((datetime.fromisoformat(match.group(1)) - last_end).total_seconds())
                last_end = None
    return latencies


def epilog_share(runs: Iterable[tuple[Path, Path]]) -> tuple[float, list[tuple[float, float, float]]]:
    """The epilog delay's share of the per-job overhead, measured on replays' (slurmctld log, replay.json): per
    run at K >= SHARE_MIN_SPEEDUP, (mean end-to-pass latency - SCHED_LATENCY, the unaccelerated mean) / overhead;
    the median over the runs (a stalled run does not move it), and each run's (K, mean latency, overhead)."""
    per_run: list[tuple[float, float, float]] = []
    shares: list[float] = []
    for log, replay_json in runs:
        info = json.loads(replay_json.read_text(encoding="utf-8"))
        latencies = end_to_pass_latencies(log)
        if float(info["speedup"]) < SHARE_MIN_SPEEDUP or len(latencies) < 3:
            continue
        latency = statistics.fmean(latencies)
        per_run.append((float(info["speedup"]), latency, float(info["overhead"])))
        shares.append((latency - SCHED_LATENCY) / float(info["overhead"]))
    if not shares:
        raise InputError("slurm logs", f"no replay at K >= {SHARE_MIN_SPEEDUP:g} with 3 job ends followed by a pass")
    return statistics.median(shares), per_run


@dataclass(frozen=True)
class Verdict:
    """A scenario seen from one of its real runs: the simulation of that run against it, the other real run
    against it, and the distances by which the simulation is farther (none: the target is met)."""

    name: str
    reference: int
    """The real run simulated and compared with (1 or 2); the other one gives the spread."""
    simulated: Deviation
    spread: Deviation
    farther: list[str]

    @property
    def met(self) -> bool:
        return not self.farther


def evaluate(directory: Path, output: Path, name: str = "", reference: int = 1) -> Verdict:
    """Simulate a scenario's real run `reference` (1 or 2; whole seconds in, whole seconds out) and judge it
    against the other run's distance to that run."""
    return judge(directory, simulate_run(directory, reference, output), name, reference)


def simulate_run(directory: Path, run: int, output: Path, share: float = EPILOG_SHARE,
                 call_share: float = CALL_SHARE, latencies: Mapping[str, float] | None = None) -> Path:
    """Simulate a scenario's real run `run` from its whole-second record into output/ (the epilog delay `share`
    of its overhead, an sbatch call `call_share` of it; `latencies`, the policy's pass latencies if not its
    defaults: `phase_latencies`); its jobs.csv."""
    conf = parse_slurm_conf((directory / "slurm.conf").read_text(encoding="utf-8"),
                            source=str(directory / "slurm.conf"))
    options = replay_options(directory / f"replay{run}.json", share, call_share)
    simulate_replay(directory / f"real{run}.csv", conf, options["ctld_start"], output,
                    clock_origin=options["clock_origin"], call_seconds=options["call_seconds"],
                    sinks=(), epilog_delay=options["epilog_delay"], loop_period=options["loop_period"],
                    **(latencies or {}))
    return output / "jobs.csv"


def judge(directory: Path, candidate: Path, name: str = "", reference: int = 1) -> Verdict:
    """A candidate schedule (a simulation, or a third real run) against a scenario's real run `reference`, with the
    other real run's distance to it as the spread."""
    conf = parse_slurm_conf((directory / "slurm.conf").read_text(encoding="utf-8"),
                            source=str(directory / "slurm.conf"))
    cpus = sum(node.cpus for node in conf.nodes)
    real = read_schedule(directory / f"real{reference}.csv", whole_seconds=True)
    judged = deviation(real, read_schedule(candidate, whole_seconds=True), cpus)
    spread = deviation(real, read_schedule(directory / f"real{3 - reference}.csv", whole_seconds=True), cpus)
    return Verdict(name or directory.name, reference, judged, spread, farther_than(judged, spread))


DISTANCES = ("mean abs start difference", "max abs start difference", "start-order flips", "abs makespan difference")
"""The issue's four distances between two schedules of the same jobs, in `distances`' order."""


def distances(dev: Deviation) -> tuple[float, float, float, float]:
    """A deviation's four distances (seconds, seconds, pairs, seconds): each is 0 for identical schedules."""
    return dev.mean_abs, dev.max_abs, float(dev.order_flips), abs(dev.makespan_difference)


@dataclass(frozen=True)
class ScenarioVerdict:
    """The issue's target on one scenario: per distance, the model's distance to a real run (the mean over the
    scenario's real runs of the distance from each run's simulation to that run) no larger than the distance
    between two of its real runs (the mean over every ordered pair: the flips may differ where one run has ties).

    The mean over runs is the reading that does not depend on how many runs were recorded: requiring every run
    (or any run) to pass grows stricter (or looser) with each run added."""

    name: str
    model: tuple[float, float, float, float]
    spread: tuple[float, float, float, float]
    runs: int = 2
    """The real runs it was judged on."""

    @property
    def farther(self) -> list[str]:
        return [f"{label} {model:.2f} > {spread:.2f}" for label, model, spread in
                zip(DISTANCES, self.model, self.spread, strict=True) if model > spread + 1e-9]

    @property
    def met(self) -> bool:
        return not self.farther


def scenario_verdict(name: str, simulated: list[Deviation], spread: list[Deviation]) -> ScenarioVerdict:
    """The issue's verdict on a scenario: `simulated` holds each real run's simulation against that run,
    `spread` each real run against each other one (both directions)."""
    if not simulated or not spread:
        raise ValueError(f"{name}: a scenario verdict needs a simulation and two real runs")

    def mean(deviations: list[Deviation]) -> tuple[float, float, float, float]:
        a, b, c, d = (statistics.fmean(column) for column in zip(*map(distances, deviations), strict=True))
        return a, b, c, d

    return ScenarioVerdict(name, mean(simulated), mean(spread), len(simulated))


def recorded_runs(directory: Path) -> list[int]:
    """The numbers of a scenario's recorded real runs (`realN.csv` with its `replayN.json`), in order."""
    return sorted(int(p.stem[len("real"):]) for p in directory.glob("real*.csv")
                  if (directory / f"replay{p.stem[len('real'):]}.json").exists())


def judge_all_runs(directory: Path, output: Path, name: str = "", latencies: Mapping[str, float] | None = None,
                   share: float = EPILOG_SHARE, call_share: float = CALL_SHARE,
                   runs: Iterable[int] | None = None) -> ScenarioVerdict:
    """The issue's verdict on a scenario with every real run it recorded (or only `runs`, at least two of them):
    each run simulated (into output/simulatedN; with `latencies`, `share` and `call_share`, see `simulate_run`) and
    against its simulation, each pair of runs in both directions."""
    recorded = recorded_runs(directory)
    chosen = recorded if runs is None else sorted(set(runs))
    if not set(chosen) <= set(recorded):
        raise InputError(str(directory), f"runs {sorted(set(chosen) - set(recorded))} were not recorded")
    conf = parse_slurm_conf((directory / "slurm.conf").read_text(encoding="utf-8"),
                            source=str(directory / "slurm.conf"))
    cpus = sum(node.cpus for node in conf.nodes)
    real = {run: read_schedule(directory / f"real{run}.csv", whole_seconds=True) for run in chosen}
    simulated = [deviation(real[run], read_schedule(simulate_run(directory, run, output / f"simulated{run}", share,
                                                                 call_share, latencies),
                                                    whole_seconds=True), cpus) for run in chosen]
    spread = [deviation(real[a], real[b], cpus) for a in chosen for b in chosen if a != b]
    return scenario_verdict(name or directory.parent.name, simulated, spread)


def scenario_directories(root: Path) -> list[Path]:
    """Every recorded scenario (a directory with slurm.conf and two real runs) under root, sorted."""
    return sorted(p.parent for p in root.glob("**/real2.csv") if (p.parent / "real1.csv").exists())


GAP_WINDOW = 3.0
"""A start this long or less after the last recorded end counts as that end's (batch_sched_delay, 3 s)."""


def whole_second_gaps(schedule: dict[str, Row]) -> list[float]:
    """The gaps of a whole-second schedule from a job's end to the start it made room for: for each job that
    waited, its start minus the last end at or before it, when at most GAP_WINDOW and no job was submitted in
    between (a submission asks for a pass itself). What the chains of jobs add up, step by step."""
    ends = sorted(row.finish for row in schedule.values())
    submits = sorted(row.submit for row in schedule.values())
    gaps: list[float] = []
    for row in schedule.values():
        if row.start <= row.submit:
            continue
        last_end = ends[bisect.bisect_right(ends, row.start) - 1] if ends[0] <= row.start else None
        if last_end is None or row.start - last_end > GAP_WINDOW:
            continue
        if bisect.bisect_right(submits, row.start) > bisect.bisect_right(submits, last_end):
            continue
        gaps.append(row.start - last_end)
    return gaps


def submission_gaps(schedule: dict[str, Row]) -> list[float]:
    """The waits of a whole-second schedule's jobs served by their submission's pass: for each job, its start
    minus its submission, when at most GAP_WINDOW and no job ended from the second before its submission to its
    start (an end asks for a pass itself)."""
    ends = sorted(row.finish for row in schedule.values())
    gaps: list[float] = []
    for row in schedule.values():
        wait = row.start - row.submit
        if wait > GAP_WINDOW or bisect.bisect_right(ends, row.start) > bisect.bisect_left(ends, row.submit - 1):
            continue
        gaps.append(wait)
    return gaps


TimingFit = tuple[float, float, float, dict[float, tuple[float, float]], dict[float, tuple[float, float]]]
"""A candidate (epilog share, call share), its sum of squares, and per K the real and the model's mean whole-second
gap from an end to the start it made room for (`whole_second_gaps`) and mean wait of the jobs a submission's pass
served (`submission_gaps`)."""


def fit_timing(root: Path, output: Path, shares: Iterable[float], call_shares: Iterable[float] = (CALL_SHARE,)
               ) -> tuple[tuple[float, float], list[TimingFit]]:
    """EPILOG_SHARE and CALL_SHARE from the records: for each candidate pair, every recorded run of the trace
    scenarios at K <= SHARE_MAX_SPEEDUP simulated with it, and the sum over K of the squared differences between
    the real and the simulated means of both whole-second statistics (the chains' gaps, the submissions' waits);
    the pair of the least sum, and each pair's fit."""
    runs = [(directory, int(path.stem[len("real"):])) for directory in scenario_directories(root)
            if not directory.parent.name.startswith("requests-") and float(directory.name[1:]) <= SHARE_MAX_SPEEDUP
            for path in sorted(directory.glob("real*.csv"))]
    real_gaps: dict[float, list[float]] = {}
    real_waits: dict[float, list[float]] = {}
    for directory, run in runs:
        recorded = read_schedule(directory / f"real{run}.csv", whole_seconds=True)
        real_gaps.setdefault(float(directory.name[1:]), []).extend(whole_second_gaps(recorded))
        real_waits.setdefault(float(directory.name[1:]), []).extend(submission_gaps(recorded))
    calls = list(call_shares)
    results = []
    for share in shares:
        for call_share in calls:
            gaps: dict[float, list[float]] = {}
            waits: dict[float, list[float]] = {}
            for directory, run in runs:
                simulated = read_schedule(simulate_run(
                    directory, run, output / f"{share:g}-{call_share:g}" / directory.parent.name / directory.name
                    / f"simulated{run}", share, call_share), whole_seconds=True)
                gaps.setdefault(float(directory.name[1:]), []).extend(whole_second_gaps(simulated))
                waits.setdefault(float(directory.name[1:]), []).extend(submission_gaps(simulated))
            gap_means = _means(real_gaps, gaps)
            wait_means = _means(real_waits, waits)
            squares = sum((r - m) ** 2 for r, m in [*gap_means.values(), *wait_means.values()])
            results.append((share, call_share, squares, gap_means, wait_means))
    if not results:
        raise InputError(str(root), "no share to try")
    best = min(results, key=lambda result: result[2])
    return (best[0], best[1]), results


def _means(real: dict[float, list[float]], model: dict[float, list[float]]) -> dict[float, tuple[float, float]]:
    """Per K with values on both sides, the real and the model's mean."""
    return {k: (statistics.fmean(real[k]), statistics.fmean(model[k]))
            for k in sorted(real) if real[k] and model.get(k)}




def phase_latencies(phase: float) -> dict[str, float]:
    """The pass latencies of a loop whose tick comes `phase` (0 to 1) of its period after every submission and
    every end: `submit_latency` phase x LOOP_PERIOD, `sched_latency` the measured 0.12 s more. Phase 0.5 gives
    the model's defaults (SUBMIT_LATENCY, SCHED_LATENCY), the median and mean of a uniform phase."""
    if not 0 <= phase <= 1:
        raise ValueError(f"a phase is a share of the loop's period, 0 to 1: {phase}")
    tick = phase * LOOP_PERIOD
    return {"submit_latency": round(tick, 4), "sched_latency": round(SCHED_LATENCY - SUBMIT_LATENCY + tick, 4)}


def phase_sweep(directory: Path, output: Path, phases: Iterable[float], name: str = ""
                ) -> list[tuple[float, ScenarioVerdict]]:
    """A scenario judged as `judge_all_runs` does with the loop's tick at each of `phases` (`phase_latencies`),
    the same phase for every pass of every run (into output/phaseP/): where the tick can fall, which fixed
    phase, if any, meets the target, and a random phase's expected distances (the mean over a uniform grid)."""
    return [(phase, judge_all_runs(directory, output / f"phase{phase:g}", name, phase_latencies(phase)))
            for phase in phases]


def timing_grid(directory: Path, output: Path, phases: Iterable[float], call_shares: Iterable[float],
                shares: Iterable[float], name: str = "") -> list[tuple[float, float, float, ScenarioVerdict]]:
    """A scenario judged as `judge_all_runs` does at every (loop phase, call share, epilog share) of the grid (into
    output/P-C-E/): whether any timing of the model's kind meets the target on it, (phase, call share, epilog
    share, verdict) each."""
    calls, epilogs = list(call_shares), list(shares)
    return [(phase, call, share, judge_all_runs(directory, output / f"{phase:g}-{call:g}-{share:g}", name,
                                                phase_latencies(phase), share, call))
            for phase in phases for call in calls for share in epilogs]
