"""Workloads of sbatch options: what users really ask Slurm for, one job per CSV row (docs/formats.md).

SWF carries a processor count and a time; a Slurm user writes `sbatch -N 2 --ntasks-per-node=4 --mem=2G -p
long -t 1:00:00`. A file in this format keeps those options verbatim, so the `slurm` policy simulates them and
`slurm-replay` submits exactly them to a real Slurm:

    id,submit,duration,sbatch
    1,0,40,-n 2 -t 2
    2,5,30,-N 2 --ntasks-per-node=2 --mem=500 -p long -t 1
    3,6,10,-n 1 --dependency=afterok:1

`id` is optional (row numbers then); `duration` is the seconds the job runs (it sleeps that long on a real
cluster). A job array (`--array=0-3%2`) is one row: its tasks become jobs `ID_TASK` (Slurm's notation), each
with `Job.extra["array_job"]` naming the row's id. The options are read as Slurm 22.05's sbatch reads them; an
option not listed in SUPPORTED is refused (never silently dropped), with the file, line and option named.
"""

from __future__ import annotations

import csv
import math
import re
import shlex
from dataclasses import dataclass, field

from clustersim._io.textfile import StrPath
from clustersim.errors import InputError
from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay
from clustersim.workload.stream import Workload

_UNLIMITED = ("infinite", "unlimited", "-1")
COLUMNS = ("submit", "duration", "sbatch")
"""The columns a file must have (`id` is optional)."""
SUPPORTED = {
    "-n": "ntasks", "--ntasks": "ntasks",
    "-N": "nodes", "--nodes": "nodes",
    "--ntasks-per-node": "ntasks_per_node",
    "-c": "cpus_per_task", "--cpus-per-task": "cpus_per_task", "--cpus-per-gpu": "cpus_per_gpu",
    "--exclusive": "exclusive",
    "--mem": "mem", "--mem-per-cpu": "mem_per_cpu", "--mem-per-gpu": "mem_per_gpu",
    "-p": "partition", "--partition": "partition",
    "-t": "time", "--time": "time",
    "-d": "dependency", "--dependency": "dependency",
    "-a": "array", "--array": "array",
    "-G": "gpus", "--gpus": "gpus", "--gpus-per-node": "gpus_per_node", "--gpus-per-task": "gpus_per_task",
    "--gres": "gres",
}
"""sbatch options the format accepts (short and long spellings) -> the request field they set."""
_SIZE = re.compile(r"(\d+)([KMGT]?)B?", re.IGNORECASE)
_MIB = {"K": 1 / 1024, "M": 1, "": 1, "G": 1024, "T": 1024 * 1024}


def parse_time(text: str, source: str = "slurm.conf", field: str | None = None, line: int | None = None
               ) -> float | None:
    """Slurm's time string in seconds (minutes when a single number); None for INFINITE/UNLIMITED.

    Formats: `minutes`, `minutes:seconds`, `hours:minutes:seconds`, `days-hours[:minutes[:seconds]]`.
    """
    value = text.strip().lower()
    if value in _UNLIMITED:
        return None
    days = 0
    if "-" in value:
        day_text, _, value = value.partition("-")
        days = _time_int(day_text, text, source, field, line)
        parts = [_time_int(p, text, source, field, line) for p in value.split(":")] if value else [0]
        while len(parts) < 3:
            parts.append(0)
        hours, minutes, seconds = parts[:3]
    else:
        parts = [_time_int(p, text, source, field, line) for p in value.split(":")]
        if len(parts) == 1:
            hours, minutes, seconds = 0, parts[0], 0
        elif len(parts) == 2:
            hours, minutes, seconds = 0, parts[0], parts[1]
        elif len(parts) == 3:
            hours, minutes, seconds = parts
        else:
            raise InputError(source, f"'{text}' is not a Slurm time (such as 30, 1:00:00 or 7-0)", field=field,
                             line=line)
    return float(((days * 24 + hours) * 60 + minutes) * 60 + seconds)


def _time_int(text: str, whole: str, source: str, field: str | None, line: int | None) -> int:
    if not (text.isascii() and text.isdigit()):
        raise InputError(source, f"'{whole}' is not a Slurm time (such as 30, 1:00:00 or 7-0)", field=field,
                         line=line)
    return int(text)


@dataclass(frozen=True, slots=True)
class SbatchRequest:
    """The resources one sbatch submission asks for, as slurmctld derives them from the options."""

    ntasks: int = 1
    cpus_per_task: int = 1
    nodes: int | None = None
    """`-N`: at least this many nodes (None: as many as the tasks need)."""
    ntasks_per_node: int | None = None
    exclusive: bool = False
    mem: int | None = None
    """`--mem`, MiB per node (0: all the memory of each node)."""
    mem_per_cpu: int | None = None
    """`--mem-per-cpu`, MiB."""
    max_nodes: int | None = None
    """`-N MIN-MAX`: at most MAX nodes, as many as fit (None: exactly `nodes`)."""
    per_node_tasks: bool = False
    """`-N` without `-n`: one task (or `--ntasks-per-node`) on every node the job gets; `ntasks` is the least
    it gets (with `-N MIN-MAX`, MIN nodes' worth)."""
    gres: tuple[tuple[str, int], ...] = ()
    """Generic resources on each node of the job: `--gres=name[:type]:N,...` and `--gpus-per-node=[type:]N` (gpu),
    a typed one named `name:type`."""
    gpus: int = 0
    """`--gpus=N`: GPUs for the whole job, spread over its nodes."""
    gpus_per_task: int = 0
    """`--gpus-per-task=N`."""
    gpu_type: str = ""
    """`--gpus=TYPE:N`, `--gpus-per-task=TYPE:N`: the type of GPU they ask (empty: any)."""
    cpus_per_gpu: int = 0
    """`--cpus-per-gpu=N` (0: not given; DefCpuPerGPU may then apply)."""
    cpus_per_task_given: bool = field(default=False, compare=False)
    """`-c` given (even `-c 1`): DefCpuPerGPU then does not apply (measured). Not compared: `-c 1` asks what
    no `-c` asks."""
    tasks_unknown: bool = field(default=False, compare=False)
    """Neither `-n`, `-N` nor `--ntasks-per-node` given: one task, which Slurm does not count on when it places a
    GRES job's CPUs (measured: the lowest free ones, where `-n 1` takes the highest)."""

    @property
    def gpus_asked(self) -> int:
        """The GPUs the request names, on one node for a per-node request (0: none)."""
        per_node = sum(count for name, count in self.gres if name.partition(":")[0] == "gpu")
        return self.gpus or self.ntasks * self.gpus_per_task or per_node * (self.nodes or 1)

    @property
    def cpus(self) -> int:
        """The CPUs the job asks for (an exclusive job gets its nodes' other CPUs too); with `--cpus-per-gpu`,
        at least that many per GPU (measured on Slurm 22.05: `--gres=gpu:2 --cpus-per-gpu=3 -n 4` gets 6)."""
        return max(self.ntasks * self.cpus_per_task, self.gpus_asked * self.cpus_per_gpu)

    @property
    def plain(self) -> bool:
        """Only a number of CPUs (`-n N`): what an SWF record asks."""
        return self == SbatchRequest(self.ntasks)


@dataclass(frozen=True, slots=True)
class SbatchOptions:
    """One job's sbatch options: the request, the scheduling options, and the options as written."""

    request: SbatchRequest
    partition: str = ""
    time_limit: float | None = None
    dependency: str = ""
    array: tuple[int, ...] = ()
    """`--array`: the task ids (empty: not an array)."""
    throttle: int | None = None
    """`--array=...%N`: at most N tasks run at once."""
    arguments: tuple[str, ...] = ()
    """The options as written, `--dependency` left out (its job ids are the workload's, not Slurm's)."""


def parse_sbatch(text: str, source: str = "sbatch", line: int | None = None) -> SbatchOptions:
    """sbatch options as a user writes them (`-N 2 --mem=2G -p long`); errors name the option."""
    if ";" in text:
        raise InputError(source, f"';' in the sbatch options '{text}': give options only", line=line,
                         field="sbatch")
    try:
        words = shlex.split(text)
    except ValueError as error:
        raise InputError(source, f"the sbatch options '{text}' do not parse: {error}", line=line,
                         field="sbatch") from None
    values: dict[str, str] = {}
    kept: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        name, eq, value = word.partition("=") if word.startswith("--") else (word[:2], "", word[2:])
        key = SUPPORTED.get(name)
        if key is None or not word.startswith("-"):
            raise InputError(source, f"'{word}' is not an sbatch option the format supports; supported: "
                             f"{', '.join(sorted(set(SUPPORTED)))}", line=line, field="sbatch")
        given = [word]
        if key == "exclusive":
            if eq:
                raise InputError(source, f"'{word}': only the plain --exclusive is modelled", line=line,
                                 field="sbatch")
            value = "yes"
        elif not eq and not value:
            if i + 1 >= len(words):
                raise InputError(source, f"'{word}' needs a value", line=line, field="sbatch")
            i += 1
            value = words[i]
            given.append(value)
        if key in values:
            raise InputError(source, f"'{name}' is given twice", line=line, field="sbatch")
        values[key] = value
        if key != "dependency":
            kept.extend(given)
        i += 1
    request = _request(values, source, line)
    time_limit = None
    if "time" in values:
        time_limit = parse_time(values["time"], source, field="sbatch --time", line=line)
        if time_limit is not None and time_limit <= 0:
            raise InputError(source, f"--time={values['time']} is not a positive time", line=line, field="sbatch")
    tasks, throttle = _array(values["array"], source, line) if "array" in values else ((), None)
    return SbatchOptions(request, values.get("partition", ""), time_limit, values.get("dependency", ""), tasks,
                         throttle, tuple(kept))


MAX_ARRAY_TASKS = 100_000


def _array(text: str, source: str, line: int | None) -> tuple[tuple[int, ...], int | None]:
    """`--array=0-15:4,20%2` -> the task ids (0 4 8 12 20) and the throttle (2), as sbatch reads them."""
    spec, percent, limit = text.partition("%")
    throttle = None
    if percent:
        if not (limit.isascii() and limit.isdigit()) or int(limit) <= 0:
            raise InputError(source, f"--array={text}: '%{limit}' is not a positive task limit", line=line,
                             field="sbatch")
        throttle = int(limit)
    tasks: set[int] = set()
    for part in spec.split(","):
        span, colon, step = part.partition(":")
        first, dash, last = span.partition("-")
        numbers = [first, last] if dash else [first]
        if colon:
            numbers.append(step)
        if not all(n.isascii() and n.isdigit() and len(n) <= 9 for n in numbers) or (colon and int(step) == 0):
            raise InputError(source, f"--array={text} is not a task list such as 0-15, 1,3,5, 0-15:4 or 0-7%2",
                             line=line, field="sbatch")
        stop = int(last) if dash else int(first)
        if stop < int(first) or len(tasks) + (stop - int(first)) // int(step or 1) >= MAX_ARRAY_TASKS:
            raise InputError(source, f"--array={text}: empty range or more than {MAX_ARRAY_TASKS} tasks", line=line,
                             field="sbatch")
        tasks.update(range(int(first), stop + 1, int(step or 1)))
    return tuple(sorted(tasks)), throttle


def _request(values: dict[str, str], source: str, line: int | None) -> SbatchRequest:
    def count(key: str, option: str, text: str | None = None) -> int | None:
        text = values.get(key) if text is None else text
        if text is None:
            return None
        if not (text.isascii() and text.isdigit()) or int(text) <= 0 or int(text) > 1_000_000:
            raise InputError(source, f"{option}={text} is not a positive count", line=line, field="sbatch")
        return int(text)

    ntasks = count("ntasks", "--ntasks")
    nodes, max_nodes = None, None
    if "nodes" in values:
        low, dash, high = values["nodes"].partition("-")
        nodes = count("nodes", "--nodes", low)
        max_nodes = count("nodes", "--nodes", high) if dash else None
        if nodes is not None and max_nodes is not None and max_nodes < nodes:
            raise InputError(source, f"--nodes={values['nodes']}: the maximum is below the minimum", line=line,
                             field="sbatch")
        if max_nodes == nodes:
            max_nodes = None
    per_node = count("ntasks_per_node", "--ntasks-per-node")
    cpus_per_task = count("cpus_per_task", "--cpus-per-task") or 1
    cpus_per_gpu = count("cpus_per_gpu", "--cpus-per-gpu") or 0
    if cpus_per_gpu and "cpus_per_task" in values:
        raise InputError(source, "--cpus-per-gpu and --cpus-per-task are mutually exclusive (sbatch refuses both)",
                         line=line, field="sbatch")
    per_node_tasks = ntasks is None and nodes is not None
    if ntasks is None:
        ntasks = (nodes or 1) * (per_node or 1)
    if nodes is not None and per_node is not None and ntasks != nodes * per_node and max_nodes is None:
        raise InputError(source, f"--ntasks={ntasks} with --nodes={nodes} and --ntasks-per-node={per_node} "
                         "is not modelled (give two of them)", line=line, field="sbatch")
    if nodes is not None and ntasks < nodes:
        raise InputError(source, f"--ntasks={ntasks} is fewer than --nodes={nodes}", line=line, field="sbatch")
    gres, gpus, gpus_per_task, gpu_type = _gres(values, source, line)
    mem = _mebibytes(values, "mem", source, line)
    mem_per_cpu = _mebibytes(values, "mem_per_cpu", source, line)
    if mem is not None and mem_per_cpu is not None:
        raise InputError(source, "--mem and --mem-per-cpu are mutually exclusive (sbatch refuses both)", line=line,
                         field="sbatch")
    if "mem_per_gpu" in values:
        mem = _mem_per_gpu(values, gres, source, line)
    return SbatchRequest(ntasks, cpus_per_task, nodes, per_node, "exclusive" in values, mem, mem_per_cpu,
                         max_nodes, per_node_tasks, gres, gpus, gpus_per_task, gpu_type, cpus_per_gpu,
                         "cpus_per_task" in values, not values.keys() & {"ntasks", "nodes", "ntasks_per_node"})


_GRES_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def _gres(values: dict[str, str], source: str,
          line: int | None) -> tuple[tuple[tuple[str, int], ...], int, int, str]:
    """Per-node GRES (`--gres=name[:type][:N],...`, `--gpus-per-node=[type:]N`; a typed one as `name:type`), GPUs
    per job (`--gpus`) and per task (`--gpus-per-task`), and the type these two ask."""
    per_node: dict[str, int] = {}
    if "gres" in values:
        for item in values["gres"].split(","):
            fields = item.split(":")
            number = fields[-1] if len(fields) > 1 and fields[-1].isdigit() else "1"
            named = fields[:-1] if len(fields) > 1 and fields[-1].isdigit() else fields
            if not all(_GRES_NAME.fullmatch(part) for part in named) or len(named) > 2 \
                    or ":".join(named) in per_node or not 0 < int(number) <= 1_000_000:
                raise InputError(source, f"--gres={values['gres']} is not a GRES list such as gpu:2, "
                                 "gpu:a100:2 or gpu:1,bandwidth:10", line=line, field="sbatch")
            per_node[":".join(named)] = int(number)
    bases = [name.partition(":")[0] for name in per_node]
    shared = sorted(set(bases) & {"mps", "shard"})
    if shared:
        raise InputError(source, f"--gres={values['gres']}: gres/{shared[0]} (a share of a GPU) is not modelled "
                         "(docs/slurm.md, GRES)", line=line, field="sbatch")
    if any(len(name.split(":")) == 1 for name in per_node if bases.count(name.partition(":")[0]) > 1):
        raise InputError(source, f"--gres={values['gres']} asks a GRES both with and without a type (not modelled)",
                         line=line, field="sbatch")
    gpu_options = {key: _gpu_count(values[key], key, source, line)
                   for key in ("gpus_per_node", "gpus", "gpus_per_task") if key in values}
    if len(gpu_options) + ("gpu" in bases) > 1:
        given = [f"--{key.replace('_', '-')}" for key in gpu_options] + (["--gres=gpu"] if "gpu" in bases else [])
        raise InputError(source, f"{' with '.join(given)} is not modelled (give one way of asking for GPUs)",
                         line=line, field="sbatch")
    if "gpus_per_node" in gpu_options:
        kind, count = gpu_options.pop("gpus_per_node")
        per_node[f"gpu:{kind}" if kind else "gpu"] = count
    kind = next((kind for kind, _ in gpu_options.values()), "")
    return (tuple(per_node.items()), gpu_options.get("gpus", ("", 0))[1], gpu_options.get("gpus_per_task", ("", 0))[1],
            kind)


def _gpu_count(text: str, key: str, source: str, line: int | None) -> tuple[str, int]:
    """`[TYPE:]N` of the --gpus options: the type (empty: any) and the count."""
    fields = text.split(":")
    count = fields[-1]
    if len(fields) > 2 or not (count.isascii() and count.isdigit()) or not 0 < int(count) <= 1024 \
            or (len(fields) == 2 and not _GRES_NAME.fullmatch(fields[0])):
        raise InputError(source, f"--{key.replace('_', '-')}={text} is not a GPU count such as 2 or a100:2",
                         line=line, field="sbatch")
    return (fields[0] if len(fields) == 2 else ""), int(count)


def _mem_per_gpu(values: dict[str, str], gres: tuple[tuple[str, int], ...], source: str, line: int | None) -> int:
    """`--mem-per-gpu` with GPUs per node: each node's memory is that many times its GPUs (measured on Slurm
    22.05: `--gres=gpu:2 --mem-per-gpu=400` holds 800 MiB of its node)."""
    if "mem" in values or "mem_per_cpu" in values:
        raise InputError(source, "--mem, --mem-per-cpu and --mem-per-gpu are mutually exclusive (sbatch refuses "
                         "them together)", line=line, field="sbatch")
    gpus = sum(count for name, count in gres if name.partition(":")[0] == "gpu")
    per_gpu = _mebibytes(values, "mem_per_gpu", source, line)
    if not gpus or not per_gpu:
        raise InputError(source, f"--mem-per-gpu={values['mem_per_gpu']} is modelled with GPUs per node "
                         "(--gres=gpu:N, --gpus-per-node=N) and a positive size only", line=line, field="sbatch")
    return gpus * per_gpu


def _mebibytes(values: dict[str, str], key: str, source: str, line: int | None) -> int | None:
    """A memory size as sbatch reads it: MiB by default, K/M/G/T suffixes (rounded up to whole MiB)."""
    text = values.get(key)
    if text is None:
        return None
    match = _SIZE.fullmatch(text)
    if match is None or len(match.group(1)) > 12:
        raise InputError(source, f"--{key.replace('_', '-')}={text} is not a size such as 500, 500M or 2G",
                         line=line, field="sbatch")
    return math.ceil(int(match.group(1)) * _MIB[match.group(2).upper()])


def read_sbatch_csv(path: StrPath, name: str = "w0") -> Workload:
    """Read a CSV of sbatch options per job (see the module docstring)."""
    source = str(path)
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise InputError(source, f"cannot read the file as CSV: {error}") from None
    if not rows:
        raise InputError(source, "empty file: expected a header line id,submit,duration,sbatch")
    header = [cell.strip().lower() for cell in rows[0]]
    missing = [column for column in COLUMNS if column not in header]
    if missing:
        raise InputError(source, f"the header has no column {', '.join(missing)}: expected id,submit,duration,sbatch",
                         line=1)
    where = {column: header.index(column) for column in (*COLUMNS, "id") if column in header}
    jobs: list[Job] = []
    seen: set[str] = set()
    for number, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise InputError(source, f"{len(row)} fields, expected {len(header)} as in the header", line=number)
        job_id = row[where["id"]].strip() if "id" in where else str(number - 1)
        if not job_id or job_id in seen:
            raise InputError(source, f"job id '{job_id}' is empty or given twice", line=number, field="id")
        seen.add(job_id)
        submit = seconds(row[where["submit"]], source, number, "submit")
        duration = seconds(row[where["duration"]], source, number, "duration")
        jobs.extend(sbatch_jobs(job_id, submit, duration, parse_sbatch(row[where["sbatch"]], source, number), name))
    if not jobs:
        raise InputError(source, "no job: expected one row per job after the header")
    return Workload.from_jobs(jobs, name=name)


def sbatch_jobs(job_id: str, submit: float, duration: float, options: SbatchOptions, name: str) -> list[Job]:
    """The jobs one submission makes: one, or one per task of an array (`ID_TASK`)."""
    extra: dict[str, object] = {"sbatch": shlex.join(options.arguments)}
    if options.dependency:
        extra["dependency"] = options.dependency
    jobs = []
    for task in options.array or (None,):
        task_id = job_id if task is None else f"{job_id}_{task}"
        task_extra = extra if task is None else {**extra, "array_job": job_id}
        jobs.append(Job(task_id, submit, options.request.cpus, Delay(duration), walltime=options.time_limit,
                        workload=name, profile_name=f"delay{duration:g}", queue=options.partition, extra=task_extra))
    return jobs


def seconds(text: str, source: str, line: int, field: str) -> float:
    """A number of seconds from 0 to 1e12 (a submit time, a duration)."""
    try:
        value = float(text)
    except ValueError:
        raise InputError(source, f"'{text}' is not a number of seconds", line=line, field=field) from None
    if not math.isfinite(value) or value < 0 or value > 1e12:
        raise InputError(source, f"'{text}' is not a number of seconds from 0 to 1e12", line=line, field=field)
    return value


def sbatch_options(job: Job) -> SbatchOptions | None:
    """The sbatch options a job of this format carries (None for a job of another format)."""
    text = job.extra.get("sbatch")
    if not isinstance(text, str):
        return None
    return parse_sbatch(text, job.key)
