"""One plugin mechanism: a registry refuses duplicates, lists valid names on a miss, and loads third-party
plugins from `package.module:Name` and from installed entry points."""

from __future__ import annotations

from pathlib import Path

import pytest

import clustersim
from clustersim import DuplicateNameError, PluginError, Registry, UnknownNameError


def test_a_name_registered_twice_is_refused_naming_the_first_owner() -> None:
    shapes: Registry[type] = Registry("shape")
    shapes.add("square", int)
    with pytest.raises(DuplicateNameError, match="shape 'square' is already registered \\(by int\\)"):
        shapes.add("square", float)


def test_an_unknown_name_lists_the_valid_ones() -> None:
    shapes: Registry[type] = Registry("shape")
    shapes.add("square", int)
    shapes.add("circle", float)
    with pytest.raises(UnknownNameError, match="unknown shape 'triangle'; valid: circle, square"):
        shapes.get("triangle")


def test_a_dotted_path_loads_without_registration() -> None:
    shapes: Registry[object] = Registry("shape")
    assert shapes.get("clustersim:IntervalSet") is clustersim.IntervalSet
    with pytest.raises(PluginError, match=r"cannot import module 'no\.such'"):
        shapes.get("no.such:Thing")


def test_built_in_policy_names_cannot_be_taken_again() -> None:
    assert "easy" in clustersim.policy_names()
    with pytest.raises(DuplicateNameError, match="policy 'easy' is already registered"):
        clustersim.register_policy("easy")(type("Mine", (), {}))


def test_an_installed_entry_point_is_a_policy_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A distribution on sys.path declaring `[clustersim.policies] lifo = ...` (as `pip install` would)."""
    (tmp_path / "lifo_plugin.py").write_text(
        "from clustersim import StartJob\n\n"
        "class Lifo:\n"
        "    def __init__(self, tag: str = ''):\n        self.tag = tag\n"
        "    def begin(self, view): pass\n"
        "    def end(self, view): pass\n"
        "    def decide(self, now, events, view):\n"
        "        for job in reversed(list(view.pending.values())):\n"
        "            if job.nb_res <= len(view.free):\n"
        "                yield StartJob(job.key, view.free.lowest(job.nb_res))\n"
    )
    info = tmp_path / "lifo_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lifo-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[clustersim.policies]\nlifo = lifo_plugin:Lifo\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from clustersim.policies.registry import POLICIES

    clustersim.policy_names()  # load the built-ins, then forget what this test loads once it is over
    monkeypatch.setattr(POLICIES, "_entries", dict(POLICIES._entries))
    assert "lifo" in clustersim.policy_names()
    process = clustersim.create_policy("lifo", tag="x")
    assert isinstance(process, clustersim.RejectNeverFitting)
    with pytest.raises(UnknownNameError, match="option of policy 'lifo': 'colour'; valid: tag"):
        clustersim.create_policy("lifo", colour="red")


CSV_READER = '''
import csv
from clustersim import Delay, FileFormat, InputError, Job, Workload


def read_csv_jobs(path, name="w0"):
    """id,submit,res,runtime rows."""
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    try:
        jobs = [Job(r["id"], float(r["submit"]), int(r["res"]), Delay(float(r["runtime"])),
                    walltime=float(r["runtime"]), workload=name, profile_name="delay") for r in rows]
    except (KeyError, ValueError) as error:
        raise InputError(str(path), f"expected id,submit,res,runtime rows ({error})") from None
    return Workload.from_jobs(jobs, name=name)


CSV_JOBS = FileFormat("CSV job lists", "(.csv: id,submit,res,runtime)", read_csv_jobs,
                      sniff=lambda head: head.startswith("id,"), suffixes=(".csv",))
'''


def test_a_workload_reader_plugin_is_chosen_by_name_on_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clustersim.cli import main
    from conftest import csv_rows

    (tmp_path / "csv_jobs.py").write_text(CSV_READER)
    (tmp_path / "jobs.txt").write_text("id,submit,res,runtime\n1,0,2,10\n2,5,4,10\n")
    (tmp_path / "four.yaml").write_text("nodes: [{count: 4}]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"
    argv = ["run", "-w", str(tmp_path / "jobs.txt"), "-p", str(tmp_path / "four.yaml"), "--policy", "fcfs",
            "-o", str(out), "-q", "--no-gantt"]
    assert main(argv) == 2  # not a format clustersim recognises
    assert main([*argv, "--workload-format", "csv_jobs:CSV_JOBS"]) == 0
    assert [(r["job_id"], r["starting_time"]) for r in csv_rows(out / "jobs.csv")] == [("1", "0"), ("2", "10")]


def test_threads_that_look_up_policies_at_once_all_find_the_built_ins() -> None:
    """The first lookup imports the built-ins; threads racing it (a Dask campaign on threads) wait for them."""
    import subprocess
    import sys

    code = (
        "import threading, clustersim\n"
        "errors = []\n"
        "def look():\n"
        "    try:\n"
        "        clustersim.create_policy('easy')\n"
        "    except Exception as error:\n"
        "        errors.append(error)\n"
        "threads = [threading.Thread(target=look) for _ in range(8)]\n"
        "[t.start() for t in threads]; [t.join() for t in threads]\n"
        "print(len(errors))\n"
    )
    for _ in range(3):
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert result.stdout.strip() == "0", result.stdout + result.stderr
