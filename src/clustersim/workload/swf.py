"""Streaming reader of the Standard Workload Format (SWF) of the Parallel Workloads Archive.

An SWF trace is one job per line, 18 whitespace-separated numeric fields, after `;` header lines such as
`; MaxProcs: 240`. Real traces hold hundreds of thousands of jobs, so the reader reads the header eagerly and
then yields jobs lazily in file order: memory never grows with the trace.

What the reader does with the things that trip simulators (counted in `Workload.skips`):

- run time <= 0 (-1 unknown, or 0): record skipped;
- no usable processor count (the chosen field is -1 and so is the other one): record skipped;
- the chosen processor field is -1 but the other one is usable: the other one is used (a note);
- requested time -1 (or 0): walltime None, i.e. unlimited (a note);
- run time above the requested time: kept, the job will be killed at its walltime (a note).

A record's preceding job number (field 17, when > 0) and think time (field 18) go to `Job.extra` as
`preceding_job` and `think_time` (the `slurm` policy makes the preceding job an `afterany` dependency).

A record submitted before the previous one, or a malformed line, is an `InputError` naming the line.
"""

from __future__ import annotations

import argparse
import math
import zlib
from collections.abc import Iterator
from types import MappingProxyType
from typing import Final, Literal, NoReturn

from clustersim._io.textfile import StrPath, open_text
from clustersim.errors import InputError, UnknownNameError
from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay
from clustersim.workload.stream import SkipReport, Workload

Processors = Literal["allocated", "requested"]
Walltime = Literal["requested", "exact"]

NB_FIELDS: Final = 18
_NO_EXTRA: Final[MappingProxyType[str, object]] = MappingProxyType({})
_SHARED: Final = 4096
"""Distinct run times (and requested times) whose objects the reader shares before it starts afresh."""
# Characters a line of numeric fields may hold; anything else left after deleting them is malformed.
_NUMERIC_CHARS: Final = str.maketrans("", "", "0123456789.+-eE \t\r\n\f\v")
_FIELD_NAMES: Final = (
    "job number",
    "submit time",
    "wait time",
    "run time",
    "allocated processors",
    "average cpu time",
    "used memory",
    "requested processors",
    "requested time",
    "requested memory",
    "status",
    "user id",
    "group id",
    "executable number",
    "queue number",
    "partition number",
    "preceding job number",
    "think time",
)

SKIP_RUNTIME: Final = "run time <= 0 (-1 unknown, or 0)"
SKIP_PROCESSORS: Final = "no processor count (allocated and requested processors both <= 0)"
NOTE_ALLOCATED_MISSING: Final = "allocated processors unknown (-1): used the requested processors"
NOTE_REQUESTED_MISSING: Final = "requested processors unknown (-1): used the allocated processors"
NOTE_NO_WALLTIME: Final = "requested time unknown (-1 or 0): walltime unlimited"
NOTE_OVERRUN: Final = "run time exceeds the requested time: will be killed at their walltime"


def read_swf(
    path: StrPath,
    *,
    processors: Processors = "allocated",
    walltime: Walltime = "requested",
    name: str = "w0",
) -> Workload:
    """Read the header of an SWF trace (plain or gzipped) and return its jobs as a lazy stream.

    `processors` picks the field a job's size comes from: what it was given (`allocated`, field 5, as Batsim's
    converters do) or what it asked for (`requested`, field 8). `walltime="exact"` sets every walltime to the
    run time itself, i.e. perfect user estimates. `nb_res` is the header's MaxProcs, when it has one.
    """
    if processors not in ("allocated", "requested"):
        raise UnknownNameError("SWF processor field", str(processors), ["allocated", "requested"])
    if walltime not in ("requested", "exact"):
        raise UnknownNameError("SWF walltime mode", str(walltime), ["exact", "requested"])
    source = str(path)
    header = read_swf_header(path)
    skips = SkipReport()
    jobs = _stream(path, source, name, processors == "allocated", walltime == "exact", skips)
    return Workload(
        name=name,
        jobs=jobs,
        source=source,
        nb_res=_positive_int(header.get("MaxProcs")),
        header=header,
        skips=skips,
    )


def read_swf_header(path: StrPath) -> dict[str, str]:
    """The `; Key: value` lines at the top of an SWF file; a repeated key keeps all values, one per line."""
    header: dict[str, str] = {}
    try:
        with open_text(path) as lines:
            for line in lines:
                text = line.strip()
                if not text:
                    continue
                if text[0] != ";":
                    break
                key, colon, value = text[1:].partition(":")
                key = key.strip()
                if not colon or not key or len(key.split()) != 1:
                    continue
                value = value.strip()
                header[key] = f"{header[key]}\n{value}" if key in header else value
    except (OSError, EOFError, zlib.error) as error:
        raise InputError(str(path), f"cannot read the file: {error}") from None
    return header


def _positive_int(text: str | None) -> int | None:
    try:
        value = int(text) if text is not None else 0
    except ValueError:
        return None
    return value if value > 0 else None


def _stream(
    path: StrPath, source: str, workload: str, use_allocated: bool, exact: bool, skips: SkipReport
) -> Iterator[Job]:
    """Yield the jobs of the file in order; opened on first use and closed when exhausted or discarded."""
    try:
        with open_text(path) as lines:
            yield from _parse(lines, source, workload, use_allocated, exact, skips)
    except (OSError, EOFError, zlib.error) as error:
        raise InputError(source, f"cannot read the file (corrupt or truncated?): {error}") from None


def _parse(
    lines: Iterator[str], source: str, workload: str, use_allocated: bool, exact: bool, skips: SkipReport
) -> Iterator[Job]:
    numeric_chars = _NUMERIC_CHARS
    owners: dict[tuple[str, str, str], tuple[str, str, str]] = {}  # (user, group, queue): few distinct values
    # A queued job is held until it starts (RICC queues 50,000): jobs of one run time share their profile and its
    # name, jobs of one requested time their walltime, jobs submitted together their submit time (see
    # docs/benchmarks.md, "What a queued job costs"). Keyed by the field's text, so each value is the one it was.
    delays: dict[str, tuple[str, Delay]] = {}
    walltimes: dict[str, float | None] = {}  # (boxed as they are stored: compiled, a float would be unboxed)
    submit_text = ""
    previous_submit = -math.inf
    previous_line = 0
    lineno = 0
    for line in lines:
        lineno += 1
        fields = line.split()
        if not fields or fields[0][0] == ";":
            continue
        if len(fields) != NB_FIELDS or line.translate(numeric_chars):
            _reject(fields, source, lineno)
        try:
            submit = float(fields[1])
            run = float(fields[3])
            requested_time = float(fields[8])
        except ValueError:
            _reject(fields, source, lineno)
        try:
            allocated = int(fields[4])
            requested = int(fields[7])
        except ValueError:
            allocated, requested = _counts(fields, source, lineno)
        if not math.isfinite(submit + run + requested_time):
            raise InputError(source, "submit, run and requested times must be finite numbers", line=lineno)
        if submit < previous_submit:
            raise InputError(
                source,
                f"submit time {fields[1]} is before the previous record's ({previous_submit:g}, line "
                f"{previous_line}): SWF records must be in non-decreasing submit order",
                line=lineno,
            )
        if submit < 0:
            raise InputError(
                source, f"submit time {fields[1]} is negative (expected seconds >= 0)", line=lineno
            )
        if fields[1] == submit_text:
            submit = previous_submit
        else:
            submit_text = fields[1]
        previous_submit = submit
        previous_line = lineno

        if run <= 0:
            skips.skip(SKIP_RUNTIME)
            continue
        if use_allocated:
            nb_res = allocated
            if nb_res <= 0 < requested:
                nb_res = requested
                skips.note(NOTE_ALLOCATED_MISSING)
        else:
            nb_res = requested
            if nb_res <= 0 < allocated:
                nb_res = allocated
                skips.note(NOTE_REQUESTED_MISSING)
        if nb_res <= 0:
            skips.skip(SKIP_PROCESSORS)
            continue

        run_text = fields[3]
        delay = delays.get(run_text)
        if delay is None:
            if len(delays) >= _SHARED:
                delays.clear()
            name = "delay" + run_text if run_text.isdigit() and run_text[0] != "0" else delay_name(run)
            delay = delays[run_text] = (name, Delay(run))
        profile_name, profile = delay
        if exact:
            wall: float | None = profile.seconds
        elif requested_time > 0:
            wall = walltimes.get(fields[8])
            if wall is None:
                if len(walltimes) >= _SHARED:
                    walltimes.clear()
                wall = requested_time
                walltimes[fields[8]] = wall
            if run > requested_time:
                skips.note(NOTE_OVERRUN)
        else:
            wall = None
            skips.note(NOTE_NO_WALLTIME)

        job_id = fields[0]
        if not (job_id.isascii() and job_id.isdigit()) or (job_id[0] == "0" and len(job_id) > 1):
            job_id = _whole(fields[0], "job number", source, lineno)
        owner_key = (fields[11], fields[12], fields[14])
        owner = owners.get(owner_key)
        if owner is None:
            owner = owners[owner_key] = _owner(owner_key, source, lineno)
        user, group, queue = owner
        extra = _NO_EXTRA
        preceding = fields[16]
        if preceding[0] != "-" and preceding != "0":
            try:
                think_time = float(fields[17])
            except ValueError:  # such as a lone '-' (found by fuzzing)
                _reject(fields, source, lineno)
            extra = MappingProxyType({
                "preceding_job": _whole(preceding, "preceding job number", source, lineno),
                "think_time": think_time,
            })
        yield Job(
            job_id, submit, nb_res, profile, wall, workload, profile_name, user, group, queue, extra
        )


def delay_name(seconds: float) -> str:
    """The profile name of a delay of `seconds`: `delay600`, `delay552.21` (one per distinct duration)."""
    return f"delay{int(seconds)}" if seconds.is_integer() else f"delay{seconds!r}"


def _count(text: str) -> int:
    """A processor count; integral decimals such as `32.0` are accepted."""
    try:
        return int(text)
    except ValueError:
        value = float(text)
        if not value.is_integer():
            raise ValueError(text) from None
        return int(value)


def _counts(fields: list[str], source: str, lineno: int) -> tuple[int, int]:
    """The allocated and requested processor counts, when one is not a plain integer."""
    try:
        return _count(fields[4]), _count(fields[7])
    except ValueError:
        _reject(fields, source, lineno)


def _owner(texts: tuple[str, str, str], source: str, lineno: int) -> tuple[str, str, str]:
    user, group, queue = texts
    return (
        _name(user, "user id", source, lineno),
        _name(group, "group id", source, lineno),
        _name(queue, "queue number", source, lineno),
    )


def _whole(text: str, what: str, source: str, lineno: int) -> str:
    try:
        return str(_count(text))
    except (ValueError, OverflowError):
        raise InputError(source, f"{what} '{text}' is not a whole number", line=lineno) from None


def _name(text: str, what: str, source: str, lineno: int) -> str:
    """User, group and queue numbers as names; -1 (unknown) becomes the empty name."""
    name = _whole(text, what, source, lineno)
    return "" if name.startswith("-") else name


def _reject(fields: list[str], source: str, lineno: int) -> NoReturn:
    """Raise the error that says what is wrong with a malformed record line."""
    expected = f"expected {NB_FIELDS} whitespace-separated numeric fields"
    if len(fields) != NB_FIELDS:
        raise InputError(source, f"{expected}, got {len(fields)}", line=lineno)
    for index, text in enumerate(fields):
        if not _is_number(text):
            raise InputError(
                source,
                f"{expected}; field {index + 1} ({_FIELD_NAMES[index]}) is '{_shorten(text)}', not a number",
                line=lineno,
            )
    for index in (4, 7):
        try:
            _count(fields[index])
        except ValueError:
            raise InputError(
                source,
                f"field {index + 1} ({_FIELD_NAMES[index]}) is '{fields[index]}', not a whole number",
                line=lineno,
            ) from None
    raise InputError(source, expected, line=lineno)


def _is_number(text: str) -> bool:
    if text.translate(_NUMERIC_CHARS):
        return False
    try:
        float(text)
    except ValueError:
        return False
    return True


def _shorten(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def add_swf_options(parser: argparse.ArgumentParser, cores_per_node: bool = True) -> None:
    """How an SWF trace is read: the same options, with the same help, for every command that reads one."""
    parser.add_argument(
        "--processors", choices=("allocated", "requested"), default="allocated",
        help="SWF: which processor count a job requests (default: allocated)",
    )
    parser.add_argument(
        "--walltime", choices=("requested", "exact"), default="requested",
        help="SWF: walltime is the requested time, or the exact run time (perfect estimates)",
    )
    if cores_per_node:
        parser.add_argument(
            "--cores-per-node", action="store_true",
            help="SWF without --platform: MaxNodes nodes of MaxProcs/MaxNodes cores instead of MaxProcs hosts",
        )
