"""The compiled path (mypyc, setup.py's opt-in build) gives the bytes of the pure-Python path.

The compiled package is built once into a cache directory (tests/compiled_build.py, about 25 CPU seconds) and
each run below goes through `clustersim run` twice, in fresh processes: `PYTHONPATH=src` (pure) and
`PYTHONPATH=<compiled>`; every output file must be identical. A selection of the suite then runs again on the
compiled modules. A compile failure is checked to leave the install pure instead of breaking it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from clustersim.kubernetes.synthetic import main as synthetic_main
from compiled_build import ROOT, build, compiled_modules

TRACES = ROOT.parent / "shared" / "traces"
KTH = TRACES / "KTH-SP2-1996-2.1-cln.swf.gz"
EXAMPLES = ROOT / "examples"

# KTH-SP2's 100 processors as hosts with power states (the power model of examples/cluster.yaml)
POWERED_HOSTS = """\
name: kth-powered
unit: host
nodes:
  - count: 100
    prefix: host
    power:
      idle: 95
      full: 190.7
      sleep: {watts: 9.75, switch_off: {seconds: 2, joules: 402}, switch_on: {seconds: 20, joules: 8520}}
"""

RUNS = {
    "kth-fcfs": ["-w", str(KTH), "--policy", "fcfs"],
    "kth-easy": ["-w", str(KTH), "--policy", "easy"],
    "kth-easy-instant": ["-w", str(KTH), "--policy", "easy", "--delivery", "instant"],
    "kth-sjf": ["-w", str(KTH), "--policy", "sjf"],
    "kth-easy-energy": ["-p", "{powered}", "-w", str(KTH), "--policy", "easy", "-E"],
    "kth-easy-idle-timeout": ["-p", "{powered}", "-w", str(KTH), "--policy", "easy", "--power-off", "idle-timeout:600"],
    "example-conservative": ["-p", str(EXAMPLES / "platform.xml"), "-w", str(EXAMPLES / "workload.json"),
                             "--policy", "conservative"],
    "example-failures": ["-p", str(EXAMPLES / "platform.xml"), "-w", str(EXAMPLES / "workload.json"),
                         "--events", str(EXAMPLES / "failures.txt")],
    "example-slurm": ["-w", str(EXAMPLES / "trace.swf"), "--policy", "slurm", "--policy-option",
                      f"conf={EXAMPLES / 'slurm.conf'}"],
    "example-slurm-requests": ["-w", str(EXAMPLES / "requests.csv"), "--policy", "slurm", "--policy-option",
                               f"conf={EXAMPLES / 'requests.conf'}"],
    "example-slurm-gres": ["-w", str(EXAMPLES / "job-scripts"), "--policy", "slurm", "--policy-option",
                           f"conf={EXAMPLES / 'gres.conf'}"],
}
CLI = "import sys; from clustersim.cli import main; sys.argv[0] = 'clustersim'; main()"


@pytest.fixture(scope="module")
def compiled() -> Path:
    return build()


def _env(path: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(path)}


def _run(path: Path, args: list[str], out: Path, subcommand: str = "run") -> dict[str, bytes]:
    extra = ["--no-gantt"] if subcommand == "run" else []
    command = [sys.executable, "-c", CLI, subcommand, *args, "-o", str(out), *extra, "-q"]
    result = subprocess.run(command, env=_env(path), capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}


def test_the_listed_modules_are_compiled_and_the_others_are_not(compiled: Path) -> None:
    modules = [*compiled_modules(), "clustersim.policies.batch.parts", "clustersim.runner"]
    code = f"import importlib; print(*[importlib.import_module(m).__file__ for m in {modules!r}], sep='\\n')"
    result = subprocess.run([sys.executable, "-c", code], env=_env(compiled), capture_output=True, text=True,
                            check=True)
    files = result.stdout.split()
    assert len(files) == len(modules)
    for module, file in zip(modules, files, strict=True):
        assert file.startswith(str(compiled)), (module, file)
        assert file.endswith(".so") == (module in compiled_modules()), (module, file)


@pytest.mark.parametrize("name", sorted(RUNS))
def test_compiled_and_pure_outputs_are_identical(name: str, compiled: Path, tmp_path: Path) -> None:
    (tmp_path / "powered.yaml").write_text(POWERED_HOSTS)
    args = [arg.format(powered=tmp_path / "powered.yaml") for arg in RUNS[name]]
    pure = _run(ROOT / "src", args, tmp_path / "pure")
    fast = _run(compiled, args, tmp_path / "compiled")
    assert "jobs.csv" in pure and "schedule.csv" in pure
    assert sorted(fast) == sorted(pure)
    for file, data in pure.items():
        assert fast[file] == data, f"{file} differs between the compiled and the pure-Python path"


# The kube policy (its queue by bands and node columns are compiled): saturated pods, so that most attempts fail,
# signatures fail and fit again as pods end, and many or few nodes fit; default scoring, then packing with
# seeded ties
KUBE_RUNS = {
    "kube-saturated": [],
    "kube-saturated-most-seeded": ["--policy-option", "strategy=MostAllocated", "--policy-option", "seed=3"],
}


@pytest.mark.parametrize("name", sorted(KUBE_RUNS))
def test_compiled_and_pure_kube_outputs_are_identical(name: str, compiled: Path, tmp_path: Path) -> None:
    synthetic_main(["3000", "60", "--seed", "2", "-o", str(tmp_path)])
    args = ["-p", str(tmp_path / "nodes.yaml"), "-w", str(tmp_path / "pods.yaml"), *KUBE_RUNS[name]]
    pure = _run(ROOT / "src", args, tmp_path / "pure", "run-k8s")
    fast = _run(compiled, args, tmp_path / "compiled", "run-k8s")
    assert "pods.csv" in pure and pure["pods.csv"].count(b"\n") == 3001
    assert sorted(fast) == sorted(pure)
    for file, data in pure.items():
        assert fast[file] == data, f"{file} differs between the compiled and the pure-Python path"


# Tests that replay schedules and traces end to end, against oracles, golden files and Batsim's outputs
ON_COMPILED = [
    "tests/test_golden_outputs.py",
    "tests/test_oracle_schedules.py",
    "tests/test_swf.py",
    "tests/test_energy.py",
    "tests/test_engine.py",
    "tests/test_memory_per_job.py",
    "tests/test_batsim_reference_easy.py",
    "tests/test_machine_failures.py",
    "tests/test_kube_columns.py",
    "tests/test_kube_queue.py",
    "tests/test_slurm_speed.py",
    "tests/test_slurm_node_space.py",
    "tests/test_slurm_model.py",
    "tests/test_slurm_shapes.py",
    "tests/test_slurm_queue_order.py",
]


def test_a_selection_of_the_suite_passes_on_the_compiled_modules(compiled: Path) -> None:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *ON_COMPILED]
    result = subprocess.run(command, cwd=ROOT, env=_env(compiled), capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]


def test_a_failed_compilation_installs_pure_python(tmp_path: Path) -> None:
    """No C compiler that works: setup.py warns and builds no extension, instead of failing the install."""
    env = {**os.environ, "CLUSTERSIM_COMPILE": "1", "CC": "false", "LDSHARED": "false"}
    command = [sys.executable, "setup.py", "build_ext", "--build-lib", str(tmp_path / "lib"),
               "--build-temp", str(tmp_path / "temp")]
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr[-4000:]
    assert "installing the pure-Python package" in result.stderr
    assert not list(tmp_path.rglob("*.so"))
