"""Workloads of sbatch job scripts: what Slurm users submit, read into the same requests as the sbatch CSV.

A trace is a directory of job scripts (every `*.sh`, `*.sbatch` and `*.slurm` file, in name order), or one
script. Each script gives its options on `#SBATCH` lines, as sbatch reads them (at the top of the script,
before its first command; a ` #` after the options starts a comment), and what a trace needs and a script
has not, when it is submitted and how long it runs, on a `# clustersim:` comment line anywhere in it:

    #!/bin/bash
    #SBATCH -N 2 --ntasks-per-node=4
    #SBATCH --time=1:00:00 -p long     # one hour at most
    # clustersim: submit=120 runtime=3000
    srun ./solver

`submit` and `runtime` are seconds (the time from the trace's start, and the time the job runs); `id=NAME`
names the job (default: the file name without its suffix), the name other scripts' `--dependency` use.
`-J`/`--job-name`, `-o`/`--output`, `-e`/`--error`, `--mail-type` and `--mail-user` change nothing Slurm
schedules: they are read and left out (`slurm-replay` names and silences every job itself); any other option
is read as the sbatch CSV reads it (clustersim.workload.sbatch), and one it does not support is an error
naming the file and line.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from clustersim._io.textfile import StrPath
from clustersim.errors import InputError
from clustersim.workload.job import Job
from clustersim.workload.sbatch import parse_sbatch, sbatch_jobs, seconds
from clustersim.workload.stream import Workload

SUFFIXES = (".sh", ".sbatch", ".slurm")
"""The files of a directory that are job scripts."""
DIRECTIVE = "#SBATCH"
METADATA = "# clustersim:"
IGNORED = frozenset({"-J", "--job-name", "-o", "--output", "-e", "--error", "--mail-type", "--mail-user"})
"""Options that do not change what Slurm schedules (each takes a value): read, and left out."""
KEYS = ("submit", "runtime", "id")


@dataclass(frozen=True)
class JobScript:
    """One script: its job id, submit time and run time, and its `#SBATCH` options with their line numbers."""

    job_id: str
    submit: float
    runtime: float
    options: list[tuple[int, list[str]]]


def read_job_script(path: Path) -> JobScript:
    """Read one script (errors name the file and the line)."""
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(source, f"cannot read the job script: {error}") from None
    options: list[tuple[int, list[str]]] = []
    meta: dict[str, str] = {}
    meta_line = 0
    in_header = True
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith(METADATA):
            if meta_line:
                raise InputError(source, f"a second '{METADATA}' line (the first is line {meta_line})", line=number)
            meta_line = number
            meta = _metadata(stripped[len(METADATA):], source, number)
        elif in_header and stripped.startswith(DIRECTIVE):
            options.append((number, _words(stripped[len(DIRECTIVE):], source, number)))
        elif stripped and not stripped.startswith("#"):
            in_header = False  # sbatch reads no #SBATCH line after the first command
    if not meta_line:
        raise InputError(source, f"no '{METADATA} submit=SECONDS runtime=SECONDS' line: a trace needs both")
    missing = [key for key in ("submit", "runtime") if key not in meta]
    if missing:
        raise InputError(source, f"'{METADATA}' gives no {' and no '.join(missing)} (seconds)", line=meta_line)
    job_id = meta.get("id", path.stem)
    return JobScript(job_id, seconds(meta["submit"], source, meta_line, "submit"),
                     seconds(meta["runtime"], source, meta_line, "runtime"), options)


def _metadata(text: str, source: str, line: int) -> dict[str, str]:
    values: dict[str, str] = {}
    for word in text.split():
        key, eq, value = word.partition("=")
        if not eq or key not in KEYS or not value or key in values:
            raise InputError(source, f"'{word}' is not one of submit=SECONDS, runtime=SECONDS, id=NAME (each once)",
                             line=line)
        values[key] = value
    return values


def _words(text: str, source: str, line: int) -> list[str]:
    """The options of one `#SBATCH` line, its comment and the options that change nothing removed."""
    try:
        lexer = shlex.shlex(text, posix=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        words = list(lexer)
    except ValueError as error:
        raise InputError(source, f"the #SBATCH options do not parse: {error}", line=line) from None
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        name, eq, _ = word.partition("=") if word.startswith("--") else (word[:2], "", word[2:])
        if name in IGNORED:
            skip = not eq and len(word) == len(name)
            continue
        kept.append(word)
    return kept


def script_files(path: Path) -> list[Path]:
    """The job scripts of a trace: the directory's script files in name order, or the one file."""
    if not path.is_dir():
        return [path]
    files = sorted(p for p in path.iterdir() if p.suffix in SUFFIXES and p.is_file() and not p.name.startswith("."))
    if not files:
        raise InputError(str(path), f"no job script ({', '.join('*' + s for s in SUFFIXES)}) in the directory")
    return files


def read_job_scripts(path: StrPath, name: str = "w0") -> Workload:
    """Read a directory of job scripts, or one script (see the module docstring)."""
    jobs: list[Job] = []
    seen: dict[str, Path] = {}
    for file in script_files(Path(path)):
        script = read_job_script(file)
        if script.job_id in seen:
            raise InputError(str(file), f"job id '{script.job_id}' is also {seen[script.job_id]}'s", field="id")
        seen[script.job_id] = file
        # Each line's options are checked on their own (an error names its line), then all of them together.
        for number, words in script.options:
            parse_sbatch(shlex.join(words), str(file), number)
        first = script.options[0][0] if script.options else None
        options = parse_sbatch(shlex.join(w for _, words in script.options for w in words), str(file), first)
        jobs.extend(sbatch_jobs(script.job_id, script.submit, script.runtime, options, name))
    return Workload.from_jobs(jobs, name=name)
