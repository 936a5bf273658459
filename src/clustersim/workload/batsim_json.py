"""Reader of Batsim workload files: JSON jobs plus the profiles that say how long each job runs.

```json
{"nb_res": 4,
 "jobs": [{"id": 1, "subtime": 0, "res": 4, "profile": "p1", "walltime": 100}],
 "profiles": {"p1": {"type": "delay", "delay": 10}}}
```

Supported profile types: `delay`, `parallel_homogeneous`, `parallel_homogeneous_total` (the total is shared
evenly among the job's units), `parallel` and `composed` (also under Batsim 1's names `msg_par_hg`,
`msg_par_hg_tot`, `msg_par` and `sequence`). Only the profiles the jobs use are checked, so a file may hold
profiles of types clustersim does not simulate.

Fields clustersim does not interpret are kept in `Job.extra` so they survive a round trip. A job's profile may
carry such fields too (Batkube puts a pod's `cpu`, `memory` and `scheduler` there): they are merged into the
job's `extra`, the job's own fields winning. `user`, `group` and `queue` job fields become the job's owner.

Batsim workloads are small enough to be held in memory (Batsim holds them too), and the jobs must be sorted by
submit time anyway, so this reader parses the whole file; jobs come out sorted by (subtime, id).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NoReturn

from clustersim._io.documents import load_document
from clustersim._io.fields import Checker, child, describe, item, listing
from clustersim._io.textfile import StrPath
from clustersim.workload.job import Job, id_order
from clustersim.workload.profiles import (
    Composed,
    DataStaging,
    Delay,
    Parallel,
    ParallelHomogeneous,
    Profile,
    StorageTransfer,
    communicates,
    local_work,
    only_delays,
)
from clustersim.workload.stream import Workload

# The keys each profile type interprets; other keys are extra data.
PROFILE_KEYS: dict[str, tuple[str, ...]] = {
    "delay": ("delay",),
    "parallel_homogeneous": ("cpu", "com"),
    "parallel_homogeneous_total": ("cpu", "com"),
    "parallel": ("cpu", "com"),
    "composed": ("seq", "repeat"),
    "parallel_homogeneous_pfs": ("bytes_to_read", "bytes_to_write", "storage"),
    "data_staging": ("nb_bytes", "from", "to"),
}
PROFILE_ALIASES = {
    "msg_par_hg": "parallel_homogeneous",
    "msg_par_hg_tot": "parallel_homogeneous_total",
    "msg_par": "parallel",
    "sequence": "composed",
}
JOB_KEYS = ("id", "subtime", "res", "profile", "walltime")
_INTERPRETED_JOB_KEYS = frozenset(JOB_KEYS)


def read_batsim_workload(path: StrPath, name: str = "w0") -> Workload:
    """Read a Batsim workload file (plain or gzipped JSON); `nb_res` comes from the file."""
    source = str(path)
    return parse_batsim_workload(load_document(path, allow_nan=False), source=source, name=name)


def parse_batsim_workload(document: object, *, source: str = "<memory>", name: str = "w0") -> Workload:
    """Build a workload from a decoded Batsim workload document (a JSON object with `jobs` and `profiles`)."""
    check = Checker(source)
    if not isinstance(document, Mapping):
        check.fail("", f"expected a JSON object with 'jobs' and 'profiles', got {describe(document)}")
    top = check.mapping(document, "")
    nb_res = check.integer(top["nb_res"], "nb_res", 1) if "nb_res" in top else None
    entries = check.sequence(check.required(top, "jobs", ""), "jobs")
    profiles = _Profiles(check.mapping(top.get("profiles", {}), "profiles"), check)
    jobs = [_job(entry, index, name, profiles, check) for index, entry in enumerate(entries)]
    seen: set[str] = set()
    for index, job in enumerate(jobs):
        if job.key in seen:
            check.fail(child(item("jobs", index), "id"), f"duplicate job id '{job.key}'")
        seen.add(job.key)
    jobs.sort(key=lambda j: (j.submit_time, id_order(j.id), j.workload))
    header = {k: str(v) for k, v in top.items() if k not in ("jobs", "profiles", "nb_res") and _scalar(v)}
    used = {id(job.profile): job.profile for job in jobs}.values()
    return Workload(
        name=name, jobs=iter(jobs), source=source, nb_res=nb_res, header=header,
        communicates=any(communicates(profile) for profile in used),
        delays_only=all(only_delays(profile) for profile in used),
        local_only=all(local_work(profile) for profile in used),
    )


def _job(entry: object, index: int, workload: str, profiles: _Profiles, check: Checker) -> Job:
    """One job; plainly valid values skip the checker, which is only called to accept or explain the rest."""
    field = f"jobs[{index}]"
    job = entry if type(entry) is dict else check.mapping(entry, field)
    raw_id = job.get("id")
    if type(raw_id) is int or (type(raw_id) is str and raw_id and "!" not in raw_id):
        job_id = str(raw_id)
    else:
        workload, job_id = _job_id(check.required(job, "id", field), f"{field}.id", workload, check)
    raw_submit = job.get("subtime")
    if isinstance(raw_submit, float | int) and not isinstance(raw_submit, bool) and 0 <= raw_submit < 1e300:
        submit = float(raw_submit)
    else:
        submit = check.number(check.required(job, "subtime", field), f"{field}.subtime", 0)
    res = job.get("res")
    if type(res) is not int or res < 1:
        res = check.integer(check.required(job, "res", field), f"{field}.res", 1)
    profile_name = job.get("profile")
    if type(profile_name) is not str or not profile_name:
        profile_name = check.string(check.required(job, "profile", field), f"{field}.profile")
    profile, profile_extra = profiles.for_job(profile_name, f"{field}.profile", res)
    requested = job.get("walltime", -1)
    walltime: float | None
    if requested is None or (type(requested) in (int, float) and requested == -1):
        walltime = None
    elif isinstance(requested, float | int) and not isinstance(requested, bool) and 0 < requested < 1e300:
        walltime = float(requested)
    else:
        walltime = check.number(requested, f"{field}.walltime", 0, above=True)
    owner = {"user": "", "group": "", "queue": ""}
    extra: dict[str, object] = dict(profile_extra) if profile_extra else {}
    for key, value in job.items():  # in file order, so that outputs are deterministic
        if key in _INTERPRETED_JOB_KEYS:
            continue
        name = _owner(value) if key in owner else None
        if name is None:
            extra[key] = value
        else:
            owner[key] = name
    return Job(
        job_id,
        submit,
        res,
        profile,
        walltime,
        workload,
        profile_name,
        owner["user"],
        owner["group"],
        owner["queue"],
        extra,
    )


def _job_id(value: object, field: str, workload: str, check: Checker) -> tuple[str, str]:
    """(workload, id) of a job id: `5`, `"5"`, or Batsim's `"w1!5"` that names the workload too."""
    if isinstance(value, int) and not isinstance(value, bool):
        return workload, str(value)
    if not isinstance(value, str) or not value:
        check.expected(field, "a job id (an integer or a non-empty string such as '5' or 'w0!5')", value)
    if "!" not in value:
        return workload, value
    prefix, _, job_id = value.partition("!")
    if not prefix or not job_id or "!" in job_id:
        check.expected(field, "a job id of the form 'workload!id' with exactly one '!'", value)
    return prefix, job_id


def _scalar(value: object) -> bool:
    return isinstance(value, str | int | float | bool)


def _owner(value: object) -> str | None:
    """A user/group/queue name; values of other types are left in `extra`."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


class _Profiles:
    """Builds the profiles jobs refer to, once each, checking them and refusing composed cycles."""

    def __init__(self, definitions: Mapping[str, object], check: Checker):
        self._definitions = definitions
        self._check = check
        self._shared: dict[str, Profile] = {}  # most profiles: one object whatever the job's size
        self._sized: dict[tuple[str, int], Profile] = {}  # those depending on it (`*_total`), per size
        self._extras: dict[str, Mapping[str, object]] = {}

    def for_job(self, name: str, field: str, res: int) -> tuple[Profile, Mapping[str, object]]:
        """The profile named `name` for a job of `res` units, and the profile's uninterpreted fields."""
        built = self._shared.get(name) or self._sized.get((name, res))
        if built is not None:
            return built, self._extras[name]
        if name not in self._definitions:
            defined = listing(self._definitions) or "none"
            self._check.fail(field, f"unknown profile '{name}'; defined profiles: {defined}")
        try:
            profile = self._build(name, res, [])
        except RecursionError:
            self._check.fail(field, f"profile '{name}' nests composed profiles too deeply")
        return profile, self._extras[name]

    def _build(self, name: str, res: int, stack: list[str]) -> Profile:
        built = self._shared.get(name) or self._sized.get((name, res))
        if built is not None:
            return built
        field = child("profiles", name)
        spec = self._check.mapping(self._definitions[name], field)
        kind = self._type(spec, field)
        check = self._check
        profile: Profile
        if kind == "delay":
            profile = Delay(check.number(check.required(spec, "delay", field), child(field, "delay"), 0))
        elif kind in ("parallel_homogeneous", "parallel_homogeneous_total"):
            flops = check.number(check.required(spec, "cpu", field), child(field, "cpu"), 0)
            comm = check.number(spec.get("com", 0), child(field, "com"), 0)
            if kind == "parallel_homogeneous_total":
                flops, comm = flops / res, comm / res
            profile = ParallelHomogeneous(flops, comm)
        elif kind == "parallel":
            profile = self._parallel(spec, field)
        elif kind == "parallel_homogeneous_pfs":
            profile = StorageTransfer(
                check.number(spec.get("bytes_to_read", 0), child(field, "bytes_to_read"), 0),
                check.number(spec.get("bytes_to_write", 0), child(field, "bytes_to_write"), 0),
                check.string(spec.get("storage", "pfs"), child(field, "storage")),
            )
        elif kind == "data_staging":
            profile = DataStaging(
                check.number(check.required(spec, "nb_bytes", field), child(field, "nb_bytes"), 0),
                check.string(check.required(spec, "from", field), child(field, "from")),
                check.string(check.required(spec, "to", field), child(field, "to")),
            )
        else:
            profile = self._composed(name, spec, field, res, stack)
        if kind == "parallel_homogeneous_total" or (
            isinstance(profile, Composed) and any(self._shared.get(p) is None for p in _part_names(spec))
        ):
            self._sized[(name, res)] = profile
        else:
            self._shared[name] = profile
        if name not in self._extras:
            interpreted = PROFILE_KEYS[kind]
            self._extras[name] = {k: v for k, v in spec.items() if k != "type" and k not in interpreted}
        return profile

    def _type(self, spec: Mapping[str, object], field: str) -> str:
        kind = spec.get("type")
        if not isinstance(kind, str):
            self._check.expected(child(field, "type"), f"a profile type ({listing(PROFILE_KEYS)})", kind)
        kind = PROFILE_ALIASES.get(kind, kind)
        if kind not in PROFILE_KEYS:
            self._unsupported(child(field, "type"), kind)
        return kind

    def _unsupported(self, field: str, kind: str) -> NoReturn:
        self._check.fail(field, f"unsupported profile type '{kind}'; supported: {listing(PROFILE_KEYS)}")

    def _parallel(self, spec: Mapping[str, object], field: str) -> Parallel:
        check = self._check
        cpu_field = child(field, "cpu")
        cpu = check.sequence(check.required(spec, "cpu", field), cpu_field)
        if not cpu:
            check.fail(cpu_field, "expected a non-empty list of flop amounts, one per task")
        flops = tuple(check.number(v, item(cpu_field, i), 0) for i, v in enumerate(cpu))
        comm: tuple[float, ...] = ()
        if "com" in spec:
            com_field = child(field, "com")
            com = check.sequence(spec["com"], com_field)
            if len(com) != len(cpu) ** 2:
                check.fail(
                    com_field,
                    f"expected {len(cpu) ** 2} byte amounts ({len(cpu)}x{len(cpu)}), got {len(com)}",
                )
            comm = tuple(check.number(v, item(com_field, i), 0) for i, v in enumerate(com))
        return Parallel(flops, comm if any(comm) else ())

    def _composed(
        self, name: str, spec: Mapping[str, object], field: str, res: int, stack: list[str]
    ) -> Composed:
        check = self._check
        seq_field = child(field, "seq")
        if name in stack:
            cycle = " -> ".join([*stack[stack.index(name) :], name])
            check.fail(seq_field, f"composed profiles form a cycle: {cycle}")
        seq = check.sequence(check.required(spec, "seq", field), seq_field)
        if not seq:
            check.fail(seq_field, "expected a non-empty list of profile names")
        repeat = check.integer(spec.get("repeat", 1), child(field, "repeat"), 1)
        stack.append(name)
        parts: list[Profile] = []
        for index, part in enumerate(seq):
            part_field = item(seq_field, index)
            part_name = check.string(part, part_field)
            if part_name not in self._definitions:
                check.fail(
                    part_field,
                    f"unknown profile '{part_name}'; defined profiles: {listing(self._definitions)}",
                )
            parts.append(self._build(part_name, res, stack))
        stack.pop()
        return Composed(tuple(parts), repeat)


def _part_names(spec: Mapping[str, object]) -> list[str]:
    """The names of a (checked) composed profile's parts."""
    seq = spec["seq"]
    return [part for part in seq if isinstance(part, str)] if isinstance(seq, list) else []
