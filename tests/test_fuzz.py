"""Coverage-guided fuzzing (atheris) of every reader and of serve-k8s's request parser, for a bounded time each,
plus every crash the fuzzers have found, replayed as a regression test.

Each target runs in its own process (`tests/fuzz/run.py`), starting from the corpus kept in
tests/fuzz/corpus/TARGET (new inputs go to a temporary copy, so the repository is not written).
CLUSTERSIM_FUZZ_SECONDS sets the time per target (default 12 s: ten targets stay under three minutes).
Inputs run under small size limits (`targets.FUZZ_LIMITS`), so the 20 s per-input timeout catches hangs, not
inputs that are merely large (docs/fuzzing.md).
The inputs tried and the crashes found are appended to the file CLUSTERSIM_FUZZ_LOG names, when set.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FUZZ = Path(__file__).parent / "fuzz"
sys.path.insert(0, str(FUZZ))
import targets  # noqa: E402

SECONDS = int(os.environ.get("CLUSTERSIM_FUZZ_SECONDS", "12"))
CRASHES = sorted(p for p in (FUZZ / "crashes").glob("*/*") if p.is_file())


@pytest.mark.parametrize("name", sorted(targets.TARGETS))
def test_fuzzing_finds_no_crash(name: str, tmp_path: Path) -> None:
    pytest.importorskip("atheris", reason="atheris is in the [dev] extra")
    work = tmp_path / "corpus"
    shutil.copytree(FUZZ / "corpus" / name, work)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[1] / "src"),
                                                          os.environ.get("PYTHONPATH", "")]),
           "TMPDIR": str(tmp_path)}  # libFuzzer exits without atexit: its scratch files stay in tmp_path
    result = subprocess.run(
        [sys.executable, str(FUZZ / "run.py"), name, f"-max_total_time={SECONDS}", "-max_len=4096",
         "-print_final_stats=1", "-timeout=20", "-rss_limit_mb=2048", f"-artifact_prefix={tmp_path}/", str(work)],
        capture_output=True, text=True, timeout=SECONDS + 120, env=env, cwd=tmp_path,
    )
    runs = re.search(r"stat::number_of_executed_units: (\d+)", result.stderr)
    crashes = sorted(p.name for p in tmp_path.glob("crash-*")) + sorted(p.name for p in tmp_path.glob("timeout-*"))
    log = os.environ.get("CLUSTERSIM_FUZZ_LOG")
    if log:
        with open(log, "a") as f:
            f.write(f"{name} inputs={runs[1] if runs else '?'} crashes={len(crashes)}\n")
    assert result.returncode == 0 and not crashes, (
        f"the {name} fuzzer found a crash ({crashes}): keep the input in tests/fuzz/crashes/{name}/ and fix it\n"
        + result.stderr[-4000:]
    )
    assert runs is not None and int(runs[1]) > 0


@pytest.mark.parametrize("crash", CRASHES, ids=[f"{p.parent.name}/{p.name}" for p in CRASHES])
def test_every_crash_found_by_fuzzing_is_now_a_clean_error(crash: Path) -> None:
    targets.check(crash.parent.name, crash.read_bytes())


def test_fuzzing_runs_under_limits_that_bound_every_input_far_below_the_timeout(tmp_path: Path) -> None:
    """A 1,000,000-node platform is within the real limits (tens of seconds instrumented): fuzzing refuses it."""
    scenario = (FUZZ / "corpus" / "autoscale_scenario" / "example.yaml").read_text()
    big = tmp_path / "big.yaml"
    big.write_text(scenario.replace("count: 3, prefix: node", "count: 1000000, prefix: node"))
    code = (f"import sys; sys.path.insert(0, {str(FUZZ)!r}); import targets, clustersim.autoscaling.scenario\n"
            "from clustersim.errors import InputError\ntargets.lower_limits()\n"
            f"try:\n    targets.autoscale_scenario(open({str(big)!r}, 'rb').read())\n"
            "except InputError as error:\n    print(error)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")})
    assert "field 'nodes[0].count': the platform would have more than 10000 nodes" in result.stdout, result.stderr
