"""Workload transformations for campaigns, as streaming generators over jobs in submit order.

Each transformation takes an iterator of jobs and yields (possibly new) jobs, one at a time, so a trace of any
size is transformed in constant memory and the result stays in submit order:

- `scale_load`: multiply the offered load by dividing every interarrival time by a factor;
- `time_window`: keep the jobs submitted within [start, end), optionally shifted so the window starts at 0
  (as evalys extracts periods of a trace);
- `set_walltimes`: walltime accuracy models (requested, exact, multiplied, uniform);
- `cap_size`: cap every job's resource count at N, or drop the bigger jobs.

Jobs are never mutated: a changed job is a new `Job` (readers may share objects between workloads).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Literal

from clustersim.errors import InputError
from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay, needs_speed
from clustersim.workload.stream import SkipReport

WalltimeModel = Literal["requested", "exact", "multiplied", "uniform"]
WALLTIME_MODELS: tuple[WalltimeModel, ...] = ("requested", "exact", "multiplied", "uniform")
SizeCapMode = Literal["cap", "drop"]
SIZE_CAP_MODES: tuple[SizeCapMode, ...] = ("cap", "drop")

NOTE_CAPPED = "size cap: resource request reduced to the cap"
SKIP_TOO_BIG = "size cap: job larger than the cap dropped"


def scale_load(jobs: Iterable[Job], factor: float) -> Iterator[Job]:
    """Offered load times `factor`: every interarrival time divided by it, the first submission kept.

    `factor` 2 submits the same jobs twice as fast (double the load), 0.5 half as fast. Dividing the gaps
    rather than the times keeps a trace that starts late (SWF traces rarely start at 0) starting where it did.
    """
    if not (math.isfinite(factor) and factor > 0):
        raise ValueError(f"load scale factor must be a finite number > 0, got {factor!r}")
    iterator = iter(jobs)
    first = next(iterator, None)
    if first is None:
        return
    yield first
    if factor == 1.0:
        yield from iterator
        return
    origin = first.submit_time
    for job in iterator:
        yield replace(job, submit_time=origin + (job.submit_time - origin) / factor)


def time_window(
    jobs: Iterable[Job], start: float = 0.0, end: float | None = None, *, shift: bool = True
) -> Iterator[Job]:
    """The jobs submitted within [start, end) (end None: no end), shifted by -start when `shift`.

    The trace is in submit order, so reading stops at the first job at or after `end`: extracting an hour from
    the beginning of a year-long trace reads only that hour.
    """
    if end is not None and end <= start:
        raise ValueError(f"time window end ({end!r}) must be after its start ({start!r})")
    for job in jobs:
        submit = job.submit_time
        if submit < start:
            continue
        if end is not None and submit >= end:
            return
        yield replace(job, submit_time=submit - start) if shift and start != 0 else job


def job_runtime(job: Job, speed: float | None) -> float:
    """How long `job` runs on units of `speed` flop/s; a pure delay needs no speed."""
    profile = job.profile
    if isinstance(profile, Delay):
        return profile.seconds
    if not needs_speed(profile):
        return profile.runtime(job.nb_res, 1.0)
    if speed is None:
        raise InputError(
            job.workload,
            f"job '{job.id}': its run time depends on the speed of the hosts it gets (profile "
            f"'{job.profile_name}'), so an exact or multiplied walltime needs a platform of identical speed",
        )
    return profile.runtime(job.nb_res, speed)


def set_walltimes(
    jobs: Iterable[Job],
    model: WalltimeModel,
    factor: float = 1.0,
    *,
    speed: float | None = None,
    rng: random.Random | None = None,
) -> Iterator[Job]:
    """Replace walltimes by a model of user estimates.

    - `requested`: as the workload says (jobs pass through untouched);
    - `exact`: the run time itself (perfect estimates, as SWF's `--walltime exact`);
    - `multiplied`: run time x `factor` (below 1, jobs are killed at their walltime);
    - `uniform`: run time x a factor drawn uniformly in [1, `factor`] from `rng` (seeded by the run's seed),
      a simple model of over-estimating users.

    `speed` (the platform's flop/s per unit) is needed only for profiles whose run time depends on it.
    """
    if model not in WALLTIME_MODELS:
        raise ValueError(f"unknown walltime model {model!r}; valid: {', '.join(WALLTIME_MODELS)}")
    if model == "requested":
        yield from jobs
        return
    if not (math.isfinite(factor) and factor > 0):
        raise ValueError(f"walltime factor must be a finite number > 0, got {factor!r}")
    if model == "uniform":
        if factor < 1:
            raise ValueError(f"the uniform walltime model draws in [1, factor]: factor must be >= 1, got {factor!r}")
        if rng is None:
            raise ValueError("the uniform walltime model needs a seeded random generator")
    for job in jobs:
        runtime = job_runtime(job, speed)
        if model == "exact":
            walltime = runtime
        elif model == "multiplied":
            walltime = runtime * factor
        else:
            assert rng is not None
            walltime = runtime * rng.uniform(1.0, factor)
        yield replace(job, walltime=walltime)


def cap_size(
    jobs: Iterable[Job], limit: int, mode: SizeCapMode = "cap", skips: SkipReport | None = None
) -> Iterator[Job]:
    """Jobs asking for more than `limit` resources are capped at `limit` (`cap`) or left out (`drop`).

    Capping keeps every job (and so the job count comparable across caps) but changes big jobs; dropping keeps
    jobs intact but changes the mix. Either way `skips`, when given, counts the jobs concerned.
    """
    if limit < 1:
        raise ValueError(f"size cap must be at least 1 resource, got {limit!r}")
    if mode not in SIZE_CAP_MODES:
        raise ValueError(f"unknown size cap mode {mode!r}; valid: {', '.join(SIZE_CAP_MODES)}")
    for job in jobs:
        if job.nb_res <= limit:
            yield job
        elif mode == "cap":
            if skips is not None:
                skips.note(NOTE_CAPPED)
            yield replace(job, nb_res=limit)
        elif skips is not None:
            skips.skip(SKIP_TOO_BIG)
