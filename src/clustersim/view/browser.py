"""Headless Chromium for looking at the viewer's pages (tests, screenshots, load-time measurements).

Debian's `chromium` is driven through Playwright with `executable_path`, so Playwright never downloads a browser
of its own; `ensure_chromium` apt-installs Chromium on first use, as the Slurm tests install Slurm.
"""

from __future__ import annotations

import os

from clustersim._io.system import apt_install

CHROMIUM = "/usr/bin/chromium"

ARGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run")
"""Offline, quiet, no GPU: the page must draw on a plain canvas and fetch nothing."""


class ChromiumUnavailable(RuntimeError):
    """Chromium is missing and cannot be installed here."""


def ensure_chromium() -> str:
    """The Chromium executable, apt-installing Debian's package first if it is missing (needs root)."""
    failure = apt_install(["chromium"], lambda: os.path.exists(CHROMIUM))
    if failure is not None:
        raise ChromiumUnavailable(f"{CHROMIUM} is missing; {failure}")
    return CHROMIUM
