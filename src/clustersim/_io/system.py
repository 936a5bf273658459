"""The machine's programs and processes: Debian packages installed on first use, and whether a process lives.

Slurm, SimGrid's bindings and Chromium come from Debian; the code that needs one installs it the same way, so a
fresh machine (with empty package lists) and a machine without root fail alike, with the command to run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path


def apt_install(packages: Sequence[str], installed: Callable[[], bool]) -> str | None:
    """Install `packages` with apt-get unless `installed()` already holds; None on success, else why not.

    A failed install is tried again after `apt-get update`: a new machine's package lists are empty.
    """
    if installed():
        return None
    names = " ".join(packages)
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        return f"cannot run `apt-get install {names}` here (needs root and apt-get)"
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    command = [apt, "install", "-y", "--no-install-recommends", *packages]
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        subprocess.run([apt, "update"], env=env, capture_output=True, text=True, check=False)
        result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if installed():
        return None
    tail = (result.stderr or result.stdout).strip().splitlines()[-3:]
    return f"apt-get could not install {names}: {' / '.join(tail)}"


def alive(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie (a killed process not yet reaped is dead for us)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return not Path("/proc").is_dir()  # gone in between; without /proc, existence is all we can tell
    fields = stat.rsplit(b")", 1)[-1].split()
    return not fields or fields[0] != b"Z"
