"""Headless Chromium for looking at the viewer's pages (tests, screenshots, load-time measurements).

Debian's `chromium` is driven through Playwright with `executable_path`, so Playwright never downloads a browser
of its own; `ensure_chromium` apt-installs Chromium on first use, as the Slurm tests install Slurm.
"""

from __future__ import annotations

import os
import shutil
import subprocess

CHROMIUM = "/usr/bin/chromium"

ARGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run")
"""Offline, quiet, no GPU: the page must draw on a plain canvas and fetch nothing."""


class ChromiumUnavailable(RuntimeError):
    """Chromium is missing and cannot be installed here."""


def ensure_chromium() -> str:
    """The Chromium executable, apt-installing Debian's package first if it is missing (needs root)."""
    if os.path.exists(CHROMIUM):
        return CHROMIUM
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        raise ChromiumUnavailable(f"{CHROMIUM} is missing and apt-get cannot run here: apt-get install chromium")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    command = [apt, "install", "-y", "--no-install-recommends", "chromium"]
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        subprocess.run([apt, "update"], env=env, capture_output=True, text=True, check=False)
        result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if not os.path.exists(CHROMIUM):
        tail = (result.stderr or result.stdout).strip().splitlines()[-3:]
        raise ChromiumUnavailable(f"apt-get could not install chromium: {' / '.join(tail)}")
    return CHROMIUM
