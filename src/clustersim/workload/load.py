"""Opening a workload file of any supported format, recognised by its content first and its name second.

Content wins because traces travel under all sorts of names (`log.txt`, `trace.gz`); the extension only
breaks ties, such as an empty file.
"""

from __future__ import annotations

from pathlib import Path

from clustersim._io.textfile import StrPath, read_head
from clustersim.errors import InputError
from clustersim.workload.batsim_json import read_batsim_workload
from clustersim.workload.stream import Workload
from clustersim.workload.swf import Processors, Walltime, read_swf

SUPPORTED = (
    "SWF traces (.swf, .swf.gz: ';' header lines, 18 numeric fields per job) "
    'and Batsim JSON workloads (.json: an object with a "jobs" list)'
)


def workload_format(path: StrPath) -> str:
    """`swf` or `batsim-json`, from the file's content (gzip or not), else from its extension."""
    head = read_head(path).lstrip("\ufeff \t\r\n")
    if head.startswith(("{", "[")):
        return "batsim-json"
    first = head.split("\n", 1)[0].split()
    if first and (first[0].startswith(";") or _is_number(first[0])):
        return "swf"
    suffixes = [s.lower() for s in Path(path).suffixes[-2:]]
    if suffixes and suffixes[-1] == ".gz":
        suffixes.pop()
    if suffixes and suffixes[-1] == ".swf":
        return "swf"
    if suffixes and suffixes[-1] == ".json":
        return "batsim-json"
    raise InputError(str(path), f"unrecognised workload format; supported: {SUPPORTED}")


def load_workload(
    path: StrPath,
    *,
    name: str = "w0",
    processors: Processors | None = None,
    walltime: Walltime | None = None,
) -> Workload:
    """Read a workload file of any supported format; `processors` and `walltime` are SWF options.

    Asking a JSON workload for a non-default SWF option is an error rather than silently ignored; the defaults
    themselves are accepted, so a command line can always pass them.
    """
    if workload_format(path) == "swf":
        return read_swf(
            path, name=name, processors=processors or "allocated", walltime=walltime or "requested"
        )
    for option, value, default in (
        ("processors", processors, "allocated"),
        ("walltime", walltime, "requested"),
    ):
        if value not in (None, default):
            raise InputError(
                str(path), f"the '{option}' option applies to SWF traces only, not Batsim JSON workloads"
            )
    return read_batsim_workload(path, name=name)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
