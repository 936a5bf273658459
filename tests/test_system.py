"""Installing Debian packages on first use, and telling whether a process lives: one helper for every caller."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from clustersim._io import system
from clustersim._io.system import alive, apt_install


def test_nothing_is_installed_when_the_programs_are_there(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(system.shutil, "which", lambda name: pytest.fail(f"looked for {name}"))
    assert apt_install(["chromium"], lambda: True) is None


def test_without_apt_get_the_answer_names_the_command_to_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(system.shutil, "which", lambda name: None)
    assert apt_install(["slurmctld", "slurmd"], lambda: False) == (
        "cannot run `apt-get install slurmctld slurmd` here (needs root and apt-get)"
    )


def test_a_failed_install_is_tried_again_after_refreshing_the_package_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    commands: list[list[str]] = []

    def run(command: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        commands.append(command[1:3])
        failed = command[1] == "install" and len(commands) == 1
        return subprocess.CompletedProcess(command, 100 if failed else 0, "", "E: Unable to locate package x")

    monkeypatch.setattr(system.shutil, "which", lambda name: "/usr/bin/apt-get")
    monkeypatch.setattr(system.os, "geteuid", lambda: 0)
    monkeypatch.setattr(system.subprocess, "run", run)
    assert apt_install(["x"], lambda: len(commands) == 3) is None
    assert commands == [["install", "-y"], ["update"], ["install", "-y"]]
    assert apt_install(["x"], lambda: False) == "apt-get could not install x: E: Unable to locate package x"


def test_a_process_is_alive_until_it_is_reaped_or_a_zombie() -> None:
    assert alive(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    while child.poll() is None:  # poll reaps it
        pass
    assert not alive(child.pid)
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    os.waitid(os.P_PID, zombie.pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped: a zombie
    assert not alive(zombie.pid)
    zombie.wait()
