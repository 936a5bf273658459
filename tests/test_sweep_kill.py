"""`kill -9` of `clustersim sweep` leaves no pool worker behind: each exits once the campaign's process is gone."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the workers through /proc (Linux)")


def _descendants(root: int) -> set[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_bytes().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _running(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_bytes().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def test_kill_9_of_sweep_leaves_no_worker(tmp_path: Path) -> None:
    jobs = [{"id": i, "subtime": i, "res": 1 + i % 8, "walltime": 500, "profile": "p"} for i in range(40_000)]
    (tmp_path / "w.json").write_text(json.dumps(
        {"nb_res": 64, "jobs": jobs, "profiles": {"p": {"type": "delay", "delay": 300}}}))
    (tmp_path / "exp.yaml").write_text("base: {workload: w.json, platform: 64, policy: easy}\naxes:\n"
                                       "  seed: [0, 1, 2, 3]\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[1] / "src"),
                                                          os.environ.get("PYTHONPATH", "")])}
    sweep = subprocess.Popen([sys.executable, "-m", "clustersim.cli", "sweep", "exp.yaml", "-o", "out", "-q",
                              "--workers", "2"], cwd=tmp_path, env=env, stderr=subprocess.PIPE)
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 60
        while len(workers) < 2 and time.monotonic() < deadline and sweep.poll() is None:
            time.sleep(0.2)
            workers = {pid for pid in _descendants(sweep.pid) if _running(pid)}
        assert len(workers) >= 2, "the sweep's workers never started"
        time.sleep(1.0)
        assert sweep.poll() is None, "the sweep ended before it could be killed: make its runs longer"
        sweep.send_signal(signal.SIGKILL)
        sweep.wait(10)
        deadline = time.monotonic() + 15
        while any(_running(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(_running(pid) for pid in workers), "pool workers outlived the killed sweep"
    finally:
        for pid in workers:
            if _running(pid):
                os.kill(pid, signal.SIGKILL)
        if sweep.poll() is None:
            sweep.kill()
            sweep.wait(10)
