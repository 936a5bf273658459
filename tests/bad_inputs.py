"""The bad-input table: for each reader, inputs it must refuse, run through the `clustersim` command.

tests/test_bad_inputs.py checks every case (exit 2, one clean `clustersim: error:` line naming the file) and
that docs/bad-input.md is this table with the messages the command prints today;
`python tests/bad_inputs.py` rewrites that document after a message changes.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

WORKLOAD = '{"nb_res": 4, "jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "p"}], ' \
    '"profiles": {"p": {"type": "delay", "delay": 10}}}'
PLATFORM = "nodes:\n  - {count: 4, cores: 2}\n"
NODES = 'kind: Node\nmetadata: {name: a}\nstatus: {capacity: {cpu: "4"}}\n'
POD = "kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n"
ARCH = "duration: 100\ncluster: {machines: 4, cpu: 4, memory: 16Gi}\nschedulers: {batch: {t_job: 0.1}}\n"


@dataclass(frozen=True)
class Case:
    reader: str
    what: str
    file: str
    content: bytes | str | None
    """None: the path does not exist; bytes or text: the file's content."""
    argv: tuple[str, ...]
    """The command; FILE stands for the bad file."""
    extra: dict[str, str] = field(default_factory=dict)
    """Other files the command reads (good ones)."""


def _run(file: str) -> tuple[str, ...]:
    return ("run", "-w", file, "-o", "out", "-q", "--no-gantt")


def _platform(file: str) -> tuple[str, ...]:
    return ("run", "-p", file, "-w", "ok.json", "-o", "out", "-q", "--no-gantt")


def _slurm(file: str) -> tuple[str, ...]:
    return ("run", "-w", "ok.json", "--policy", "slurm", "--policy-option", f"conf={file}", "-o", "out", "-q",
            "--no-gantt")


def _k8s(file: str) -> tuple[str, ...]:
    return ("run-k8s", "-p", "nodes.yaml", "-w", file, "-o", "out")


def _k8s_nodes(file: str) -> tuple[str, ...]:
    return ("run-k8s", "-p", file, "-w", "pod.yaml", "-o", "out")


def _sweep(file: str) -> tuple[str, ...]:
    return ("sweep", file, "-o", "out", "-q")


def _autoscale(file: str) -> tuple[str, ...]:
    return ("autoscale", file, "-o", "out", "-q", "--no-figures")


def _arch(file: str) -> tuple[str, ...]:
    return ("architectures", file, "-o", "out", "-q", "--no-figures")


_GOOD = {"ok.json": WORKLOAD, "nodes.yaml": NODES, "pod.yaml": POD}
_SCENARIO = ("duration: {d}\ndeployment: {{name: web, requests: {{cpu: 500m}}}}\ntraffic: {{pattern: poisson, "
             "rate: 10}}\ncluster: {{nodes: [{{count: 2, cores: 4, memory: 8Gi}}]}}\n")
_BOMB = "l0: &l0 lol\n" + "".join(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 10)) + \
    "nodes: [{count: 1, properties: {k: *l9}}]\n"

CASES = (
    Case("SWF", "missing file", "missing.swf", None, _run("missing.swf")),
    Case("SWF", "a line with too few fields", "t.swf", "; MaxProcs: 4\n1 0 0 10\n", _run("t.swf")),
    Case("SWF", "a negative submit time", "t.swf", "; MaxProcs: 4\n1 -5 0 10 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1\n",
         _run("t.swf")),
    Case("SWF", "a huge MaxProcs in the header", "t.swf",
         "; MaxProcs: 100000000000\n1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1\n", _run("t.swf")),
    Case("SWF", "binary garbage (gzip magic, truncated)", "t.swf.gz", b"\x1f\x8b\x08\x00garbage", _run("t.swf.gz")),
    Case("Batsim JSON", "empty file", "w.json", "", _run("w.json")),
    Case("Batsim JSON", "garbage named .json (not sniffed as SWF)", "w.json", "12 garbage\n", _run("w.json")),
    Case("Batsim JSON", "truncated", "w.json", WORKLOAD[:40], _run("w.json")),
    Case("Batsim JSON", "non-UTF-8 bytes", "w.json", b'{"nb_res": 4, "jobs": [\xff\xfe]}', _run("w.json")),
    Case("Batsim JSON", "a job without a profile", "w.json", '{"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, '
         '"res": 1}], "profiles": {}}', _run("w.json")),
    Case("Batsim JSON", "NaN as a time", "w.json", '{"nb_res": 4, "jobs": [{"id": 1, "subtime": NaN, "res": 1, '
         '"profile": "p"}], "profiles": {"p": {"type": "delay", "delay": 1}}}', _run("w.json")),
    Case("Batsim JSON", "nested 100,000 deep", "w.json", "[" * 100_000 + "]" * 100_000, _run("w.json")),
    Case("platform XML", "not XML", "p.xml", "<platform", _platform("p.xml")),
    Case("platform XML", "an external entity (XXE)", "p.xml", '<?xml version="1.0"?><!DOCTYPE p [<!ENTITY x SYSTEM '
         '"file:///etc/passwd">]><platform version="4.1">&x;</platform>', _platform("p.xml")),
    Case("platform XML", "a cluster radical of a billion hosts", "p.xml", '<?xml version="1.0"?><platform '
         'version="4.1"><zone id="z" routing="Full"><cluster id="c" prefix="n" suffix="" radical="0-999999999" '
         'speed="1Gf" bw="1GBps" lat="0"/></zone></platform>', _platform("p.xml")),
    Case("cluster YAML/JSON", "a count of 1e12 nodes", "c.yaml", "nodes:\n  - {count: 1e12}\n", _platform("c.yaml")),
    Case("cluster YAML/JSON", "a misspelt key", "c.yaml", "nodes:\n  - {count: 2, cors: 4}\n", _platform("c.yaml")),
    Case("cluster YAML/JSON", "a key given twice", "c.yaml", "nodes:\n  - {count: 2}\nnodes: []\n",
         _platform("c.yaml")),
    Case("cluster YAML/JSON", "a billion-laughs alias bomb (9^9 by aliases)", "c.yaml", _BOMB, _platform("c.yaml")),
    Case("cluster YAML/JSON", "a directory", "dir.yaml", "DIR", _platform("dir.yaml")),
    Case("Kubernetes manifests", "a Job with completions -1", "m.yaml", "kind: Job\nmetadata: {name: j}\nspec: "
         "{completions: -1, template: {spec: {containers: [{name: c}]}}}\n", _k8s("m.yaml")),
    Case("Kubernetes manifests", "two pods with one name", "m.yaml", POD + "---\n" + POD, _k8s("m.yaml")),
    Case("Kubernetes manifests", "an unsupported kind", "m.yaml", "kind: Service\nmetadata: {name: s}\n",
         _k8s("m.yaml")),
    Case("Kubernetes manifests", "two Node manifests with one name", "n.yaml", NODES + "---\n" + NODES,
         _k8s_nodes("n.yaml")),
    Case("Kubernetes manifests", "a schedule naming no pod", "s.yaml", "nosuch: 10s\n",
         ("run-k8s", "-p", "nodes.yaml", "-w", "pod.yaml", "--schedule", "s.yaml", "-o", "out")),
    Case("slurm.conf", "a node range of 100,000,000 nodes", "s.conf", "NodeName=n[1-100000000] CPUs=4\n",
         _slurm("s.conf")),
    Case("slurm.conf", "CPUs=100000000000000", "s.conf", "NodeName=n1 CPUs=100000000000000\n", _slurm("s.conf")),
    Case("slurm.conf", "PriorityType=priority/banana", "s.conf", "NodeName=n1 CPUs=4\nPriorityType=priority/banana\n",
         _slurm("s.conf")),
    Case("slurm.conf", "a file that includes itself", "s.conf", "Include s.conf\nNodeName=n1\n", _slurm("s.conf")),
    Case("slurm.conf", "no NodeName line", "s.conf", "ClusterName=c\n", _slurm("s.conf")),
    Case("slurm.conf", "a node GRES GresTypes does not declare", "s.conf",
         "GresTypes=gpu\nNodeName=n1 CPUs=4 Gres=gpu:1,bw:10\n", _slurm("s.conf")),
    Case("sbatch-options CSV", "an option the format does not support", "j.csv",
         "id,submit,duration,sbatch\n1,0,10,-n 2 --qos=high\n", _run("j.csv")),
    Case("sbatch-options CSV", "a node range backwards", "j.csv", "id,submit,duration,sbatch\n1,0,10,-N 3-2\n",
         _run("j.csv")),
    Case("sbatch job script", "no '# clustersim:' line", "j.sbatch", "#!/bin/sh\n#SBATCH -n 2\nsrun a\n",
         _run("j.sbatch")),
    Case("sbatch job script", "an option the format does not support", "j.sbatch",
         "#!/bin/sh\n#SBATCH -n 2\n#SBATCH --constraint=fast\n# clustersim: submit=0 runtime=5\n", _run("j.sbatch")),
    Case("experiment file", "3,000,000 runs", "e.yaml", "base: {workload: ok.json, platform: 4}\naxes:\n"
         f"  seed: {list(range(3000))}\n  load_scale: {[1 + i / 1000 for i in range(1000)]}\n", _sweep("e.yaml")),
    Case("experiment file", "a negative seed", "e.yaml", "base: {workload: ok.json, platform: 4, seed: -1}\n",
         _sweep("e.yaml")),
    Case("experiment file", "a list instead of a mapping", "e.yaml", "[1, 2]\n", _sweep("e.yaml")),
    Case("autoscaling scenario", "a duration of 1e15 s", "a.yaml", _SCENARIO.format(d="1e15"), _autoscale("a.yaml")),
    Case("autoscaling scenario", "a negative duration", "a.yaml", _SCENARIO.format(d="-5"), _autoscale("a.yaml")),
    Case("autoscaling scenario", "no traffic", "a.yaml", "duration: 10\ndeployment: {name: web}\n",
         _autoscale("a.yaml")),
    Case("autoscaling scenario", "an HPA metric given as a list (found by fuzzing)", "a.yaml",
         _SCENARIO.format(d="60") + "hpa: {metric: [cpu]}\n", _autoscale("a.yaml")),
    Case("autoscaling scenario", "10,000,000 requests/s for an hour, one by one", "a.yaml",
         _SCENARIO.format(d="3600").replace("rate: 10", "rate: 1e7"), _autoscale("a.yaml")),
    Case("autoscaling scenario", "a rate of 1e300 requests/s in aggregate mode", "a.yaml",
         "mode: aggregate\n" + _SCENARIO.format(d="60").replace("rate: 10", "rate: 1e300"), _autoscale("a.yaml")),
    Case("autoscaling scenario", "100,000,000,000 replicas", "a.yaml",
         _SCENARIO.format(d="60").replace("name: web,", "name: web, replicas: 100000000000,"), _autoscale("a.yaml")),
    Case("architectures config", "1,000,000,000,000 machines", "x.yaml", ARCH.replace("machines: 4",
         "machines: 1000000000000"), _arch("x.yaml")),
    Case("architectures config", "no scheduler", "x.yaml", ARCH.replace("schedulers: {batch: {t_job: 0.1}}",
         "schedulers: {}"), _arch("x.yaml")),
    Case("output directory", "an earlier run's outputs (without --force)", "out/schedule.csv", "x\n",
         ("run", "-o", "out", "-q", "--no-gantt")),
    Case("output directory", "a file where the directory should be", "out", "x\n",
         ("run", "-o", "out", "-q", "--no-gantt")),
)


@dataclass(frozen=True)
class Outcome:
    code: int
    stderr: str


def run_case(case: Case, directory: Path) -> Outcome:
    """Run one case in `directory` (made the working directory, so messages show short relative paths)."""
    from clustersim.cli import main

    for name, text in {**_GOOD, **case.extra}.items():
        (directory / name).write_text(text)
    path = directory / case.file
    path.parent.mkdir(parents=True, exist_ok=True)
    if case.content == "DIR":
        path.mkdir()
    elif isinstance(case.content, bytes):
        path.write_bytes(case.content)
    elif case.content is not None:
        path.write_text(case.content)
    previous = Path.cwd()
    stderr = io.StringIO()
    os.chdir(directory)
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            code = main(list(case.argv))
    finally:
        os.chdir(previous)
    return Outcome(code, stderr.getvalue())


def message(outcome: Outcome) -> str:
    """The error line the user sees, without the `clustersim: error: ` prefix."""
    lines = [line for line in outcome.stderr.splitlines() if line.startswith("clustersim: error: ")]
    return lines[-1].removeprefix("clustersim: error: ") if lines else ""


def render(messages: list[str]) -> str:
    rows = [
        "# Bad input: what each reader refuses, and the message",
        "",
        "Every case below is run by the test suite (tests/test_bad_inputs.py, cases in tests/bad_inputs.py) through",
        "the `clustersim` command: each exits 2 with the one line shown (after `clustersim: error: `), never a",
        "traceback. The messages are the command's own output; `python tests/bad_inputs.py` rewrites this file.",
        "Limits are in [limits.md](limits.md).",
        "",
    ]
    reader = None
    for case, text in zip(CASES, messages, strict=True):
        if case.reader != reader:
            reader = case.reader
            rows += [f"## {reader}", "", "| input | command | message |", "| --- | --- | --- |"]
        command = "clustersim " + " ".join(case.argv)
        shown = text.replace("|", "\\|")
        rows.append(f"| {case.what} | `{command}` | {shown} |")
        if case is CASES[-1] or CASES[CASES.index(case) + 1].reader != reader:
            rows.append("")
    return "\n".join(rows)


def collect() -> list[Outcome]:
    outcomes = []
    for case in CASES:
        with tempfile.TemporaryDirectory() as directory:
            outcomes.append(run_case(case, Path(directory)))
    return outcomes


DOC = Path(__file__).parents[1] / "docs" / "bad-input.md"

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parents[1] / "src"))
    DOC.write_text(render([message(o) for o in collect()]))
    print(f"wrote {DOC}")
