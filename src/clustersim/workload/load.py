"""Opening a workload file of any registered format, recognised by its extension when it is a format's own
(`.swf`, `.json`), else by its content (traces travel under all sorts of names: `log.txt`, `trace.gz`).
A third-party reader is a `FileFormat` registered in `WORKLOAD_READERS`
(or declared as an entry point of the `clustersim.workload_readers` group).
"""

from __future__ import annotations

from pathlib import Path

from clustersim._io.formats import FileFormat, format_options, recognise
from clustersim._io.textfile import StrPath
from clustersim.plugins import Registry
from clustersim.workload.batsim_json import read_batsim_workload
from clustersim.workload.job_scripts import read_job_scripts
from clustersim.workload.sbatch import COLUMNS, read_sbatch_csv
from clustersim.workload.stream import Workload
from clustersim.workload.swf import Processors, Walltime, read_swf

WORKLOAD_READERS: Registry[FileFormat[Workload]] = Registry("workload format", group="clustersim.workload_readers")
WORKLOAD_READERS.add("swf", FileFormat(
    "SWF traces", "(.swf, .swf.gz: ';' header lines, 18 numeric fields per job)", read_swf,
    sniff=lambda head: _first_token(head).startswith(";") or _is_number(_first_token(head)),
    suffixes=(".swf",), options={"processors": "allocated", "walltime": "requested"},
))
WORKLOAD_READERS.add("batsim-json", FileFormat(
    "Batsim JSON workloads", '(.json: an object with a "jobs" list)', read_batsim_workload,
    sniff=lambda head: head.startswith(("{", "[")), suffixes=(".json",),
))
WORKLOAD_READERS.add("sbatch-csv", FileFormat(
    "sbatch-options CSV workloads", "(a header line id,submit,duration,sbatch; one job per row)", read_sbatch_csv,
    sniff=lambda head: set(COLUMNS) <= {cell.strip().lower() for cell in head.split("\n", 1)[0].split(",")},
    suffixes=(),
))
WORKLOAD_READERS.add("job-scripts", FileFormat(
    "sbatch job scripts", "(#SBATCH lines and a '# clustersim: submit=S runtime=S' line; a directory of them)",
    read_job_scripts, sniff=lambda head: head.startswith(("#!", "#SBATCH")), suffixes=(".sbatch", ".slurm"),
))


def workload_format(path: StrPath) -> str:
    """The registered name of the file's format (`swf`, `batsim-json`...), from its content, else its name (a
    directory is a trace of job scripts)."""
    if Path(path).is_dir():
        return "job-scripts"
    return recognise(WORKLOAD_READERS.items(), path, "workload format")


def load_workload(
    path: StrPath,
    *,
    name: str = "w0",
    processors: Processors | None = None,
    walltime: Walltime | None = None,
    format: str | None = None,
) -> Workload:
    """Read a workload file of any registered format (or of `format`); `processors` and `walltime` are SWF
    options.

    Asking another format for a non-default SWF option is an error rather than silently ignored; the defaults
    themselves are accepted, so a command line can always pass them.
    """
    reader = WORKLOAD_READERS.get(format or workload_format(path))
    options = format_options(WORKLOAD_READERS.items(), reader, path, {"processors": processors, "walltime": walltime})
    return reader.read(path, name=name, **options)


def _first_token(head: str) -> str:
    first = head.split("\n", 1)[0].split()
    return first[0] if first else ""


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
