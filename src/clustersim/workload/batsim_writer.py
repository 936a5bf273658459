"""Writing a workload as a Batsim workload file, streaming: `clustersim convert trace.swf out.json`.

Jobs are written one per line as they are read, so converting a trace never holds its jobs; only the distinct
profiles are kept, to be written after the jobs. Profiles keep the job's `profile_name` when it is
unambiguous (the SWF reader names delays after their duration, `delay600`, so a trace gets one profile per
distinct run time, as Batsim's own converter does); a name reused for a different profile gets a `_2` suffix.

The file is written to a temporary file next to the target and moved into place at the end, so a failed
conversion never leaves a truncated workload behind. A `.gz` target is gzip-compressed.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

from clustersim.errors import InputError
from clustersim.workload.job import Job
from clustersim.workload.profiles import (
    Composed,
    DataStaging,
    Delay,
    Parallel,
    ParallelHomogeneous,
    Profile,
    StorageTransfer,
)
from clustersim.workload.stream import Workload
from clustersim.workload.swf import delay_name

_RESERVED = ("id", "subtime", "res", "profile", "walltime", "user", "group", "queue")


def write_batsim_workload(workload: Workload, path: str | os.PathLike[str], nb_res: int | None = None) -> int:
    """Consume `workload.jobs` into a Batsim workload file at `path`; returns the number of jobs written.

    `nb_res` defaults to the workload's own (SWF MaxProcs), else to the largest job.
    """
    target = Path(path)
    declared = nb_res if nb_res is not None else workload.nb_res
    # A hidden name next to the target, created with the user's usual permissions ("x": never clobbered).
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with _open_output(temporary, compress=target.name.endswith(".gz")) as out:
            count = _write(out, workload, declared)
        os.replace(temporary, target)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise InputError(str(target), f"cannot write the workload: {error.strerror or error}") from None
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return count


def _open_output(path: Path, compress: bool) -> TextIO:
    if compress:
        return gzip.open(path, "xt", encoding="utf-8")
    return open(path, "x", encoding="utf-8")


def _write(out: TextIO, workload: Workload, nb_res: int | None) -> int:
    profiles = _ProfileTable()
    out.write("{\n")
    if nb_res is not None:
        out.write(f'  "nb_res": {nb_res},\n')
    out.write(f'  "description": {json.dumps(f"converted by clustersim from {workload.source}")},\n')
    out.write('  "jobs": [')
    count = 0
    largest = 0
    for job in workload.jobs:
        out.write(",\n    " if count else "\n    ")
        job_id = job.id if job.workload == workload.name else f"{job.workload}!{job.id}"
        out.write(json.dumps(job_entry(job, job_id, profiles.name_of(job)), default=str))
        count += 1
        largest = max(largest, job.nb_res)
    out.write("\n  ],\n" if count else "],\n")
    out.write('  "profiles": {')
    for index, (name, entry) in enumerate(profiles.entries()):
        out.write(",\n    " if index else "\n    ")
        out.write(f"{json.dumps(name)}: {json.dumps(entry)}")
    out.write("\n  }" if profiles else "}")
    if nb_res is None:
        out.write(f',\n  "nb_res": {max(largest, 1)}')
    out.write("\n}\n")
    return count


def job_entry(job: Job, job_id: str, profile: str) -> dict[str, object]:
    """A job as a Batsim workload file has it; Batsim's JOB_SUBMITTED message carries the same object."""
    entry: dict[str, object] = {
        "id": job_id,
        "subtime": json_number(job.submit_time),
        "res": job.nb_res,
        "profile": profile,
        "walltime": -1 if job.walltime is None else json_number(job.walltime),
    }
    for key, owner in (("user", job.user), ("group", job.group), ("queue", job.queue)):
        if owner:
            entry[key] = owner
    for key, value in job.extra.items():
        if key not in _RESERVED:
            entry[key] = value
    return entry


def profile_entry(profile: Profile, part_name: Callable[[Profile], str]) -> dict[str, object]:
    """A profile as a Batsim workload file has it; a composed profile names its parts with `part_name`."""
    if isinstance(profile, Delay):
        return {"type": "delay", "delay": json_number(float(profile.seconds))}
    if isinstance(profile, ParallelHomogeneous):
        return {"type": "parallel_homogeneous", "cpu": json_number(profile.flops),
                "com": json_number(profile.comm_bytes)}
    if isinstance(profile, Parallel):
        tasks = len(profile.flops)
        comm = profile.comm or (0.0,) * (tasks * tasks)
        return {"type": "parallel", "cpu": [json_number(f) for f in profile.flops],
                "com": [json_number(float(b)) for b in comm]}
    if isinstance(profile, StorageTransfer):
        return {"type": "parallel_homogeneous_pfs", "bytes_to_read": json_number(profile.read_bytes),
                "bytes_to_write": json_number(profile.write_bytes), "storage": profile.storage}
    if isinstance(profile, DataStaging):
        return {"type": "data_staging", "nb_bytes": json_number(profile.nb_bytes), "from": profile.source,
                "to": profile.target}
    return {"type": "composed", "repeat": profile.repeat, "seq": [part_name(part) for part in profile.sequence]}


def json_number(value: float) -> int | float:
    """Integral values as JSON integers (`600`, not `600.0`), as hand-written workloads have them."""
    if isinstance(value, int):
        return value
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


class _ProfileTable:
    """The distinct profiles met so far, each under one name, in the order they were first used."""

    def __init__(self) -> None:
        self._by_name: dict[str, Profile] = {}
        self._by_profile: dict[Profile, str] = {}

    def __bool__(self) -> bool:
        return bool(self._by_name)

    def name_of(self, job: Job) -> str:
        return self._register(job.profile, job.profile_name)

    def _register(self, profile: Profile, wanted: str) -> str:
        wanted = wanted or default_profile_name(profile)
        holder = self._by_name.get(wanted)
        if holder == profile:
            return wanted
        if holder is not None:
            known = self._by_profile.get(profile)
            if known is not None:
                return known
            suffix = 2
            while f"{wanted}_{suffix}" in self._by_name:
                suffix += 1
            wanted = f"{wanted}_{suffix}"
        if isinstance(profile, Composed):
            for part in profile.sequence:
                self._register(part, "")
        self._by_name[wanted] = profile
        self._by_profile.setdefault(profile, wanted)
        return wanted

    def entries(self) -> Iterator[tuple[str, dict[str, object]]]:
        for name, profile in self._by_name.items():
            yield name, profile_entry(profile, self._by_profile.__getitem__)


def default_profile_name(profile: Profile) -> str:
    """The name clustersim's converters give a profile that has none (`delay<seconds>` for delays)."""
    if isinstance(profile, Delay):
        return delay_name(float(profile.seconds))
    if isinstance(profile, ParallelHomogeneous):
        return "parallel_homogeneous"
    if isinstance(profile, Parallel):
        return "parallel"
    if isinstance(profile, StorageTransfer):
        return "parallel_homogeneous_pfs"
    if isinstance(profile, DataStaging):
        return "data_staging"
    return "composed"
