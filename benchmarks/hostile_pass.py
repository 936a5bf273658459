"""A hostile user's pass over every reader and output path: broken inputs run through the `clustersim` command.

Each input runs in its own process (4 GiB address space, 60 s), and counts as clean when the command ends
without a traceback, within the limits, with exit 0 (accepted), 2 (refused with a `clustersim: error:` line),
4 (jobs left unstarted) or 5 (`sweep`: runs failed, each named with its error). Inputs: the bad-input table
of the test suite (tests/bad_inputs.py), plus mutations of a valid seed of each reader (empty, truncated,
binary, non-UTF-8, every number made negative, zero, huge, 1e15 or a word, the document doubled, a directory,
a missing path), plus output-directory faults and Ctrl-C.

    python benchmarks/hostile_pass.py            # prints every input that was not clean, then N tried, M clean, K not
"""

from __future__ import annotations

import os
import random
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from bad_inputs import _GOOD, CASES, Case  # noqa: E402

SEEDS = ROOT / "tests" / "fuzz" / "corpus"
READERS = {  # reader: (seed file in the fuzz corpus, file name, command with FILE)
    "SWF": ("swf/small.swf", "t.swf", ("run", "-w", "FILE", "-o", "out", "-q", "--no-gantt")),
    "Batsim JSON": ("batsim_json/example.json", "w.json", ("run", "-w", "FILE", "-o", "out", "-q", "--no-gantt")),
    "platform XML": ("platform_xml/small.xml", "p.xml",
                     ("run", "-p", "FILE", "-w", "ok.json", "-o", "out", "-q", "--no-gantt")),
    "cluster YAML": ("cluster_file/example.yaml", "c.yaml",
                     ("run", "-p", "FILE", "-w", "ok.json", "-o", "out", "-q", "--no-gantt")),
    "Kubernetes manifests": ("kubernetes_manifests/pod-and-job.yaml", "m.yaml",
                             ("run-k8s", "-p", "nodes.yaml", "-w", "FILE", "-o", "out", "-q")),
    "slurm.conf": ("slurm_conf/small.conf", "s.conf",
                   ("run", "-w", "ok.json", "--policy", "slurm", "--policy-option", "conf=FILE", "-o", "out", "-q",
                    "--no-gantt")),
    "experiment": ("experiment/small.yaml", "e.yaml", ("sweep", "FILE", "-o", "out", "-q", "--workers", "1")),
    "autoscaling scenario": ("autoscale_scenario/example.yaml", "a.yaml",
                             ("autoscale", "FILE", "-o", "out", "-q", "--no-figures")),
    "architectures config": ("architectures_config/example.yaml", "x.yaml",
                             ("architectures", "FILE", "-o", "out", "-q", "--no-figures")),
}
NUMBER = re.compile(rb"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")


def _mutations(seed: bytes) -> dict[str, bytes | str | None]:
    rng = random.Random(18)
    return {
        "empty": b"",
        "truncated at 1/3": seed[: len(seed) // 3],
        "truncated at 2/3": seed[: 2 * len(seed) // 3],
        "binary": bytes(rng.randrange(256) for _ in range(512)),
        "non-UTF-8 in the middle": seed[: len(seed) // 2] + b"\xff\xfe\x80" + seed[len(seed) // 2:],
        "every number negative": NUMBER.sub(rb"-\g<0>", seed),
        "every number huge": NUMBER.sub(b"100000000000000", seed),
        "every number 1e15": NUMBER.sub(b"1e15", seed),
        "every number a word": NUMBER.sub(b"abc", seed),
        "every number zero": NUMBER.sub(b"0", seed),
        "the document twice": seed + b"\n" + seed,
        "a directory": "DIR",
        "a missing path": None,
    }


def _cases() -> list[tuple[str, str, Case]]:
    cases = [(case.reader, case.what, case) for case in CASES]
    for reader, (seed, name, argv) in READERS.items():
        for what, content in _mutations((SEEDS / seed).read_bytes()).items():
            command = tuple(a.replace("FILE", name) for a in argv)
            cases.append((reader, what, Case(reader, what, name, content, command)))
    return cases


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def _run(case: Case, directory: Path, interrupt_after: float | None = None) -> tuple[bool, str]:
    for name, text in _GOOD.items():
        (directory / name).write_text(text)
    path = directory / case.file
    path.parent.mkdir(parents=True, exist_ok=True)
    if case.content == "DIR":
        path.mkdir(exist_ok=True)
    elif isinstance(case.content, bytes):
        path.write_bytes(case.content)
    elif case.content is not None:
        path.write_text(case.content)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "MPLBACKEND": "Agg"}
    process = subprocess.Popen([sys.executable, "-m", "clustersim.cli", *case.argv], cwd=directory, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=_limits)
    try:
        if interrupt_after is not None:
            time.sleep(interrupt_after)
            process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        return False, "still running after 60 s"
    code = process.returncode
    if "Traceback" in stderr or "MemoryError" in stderr:
        return False, f"exit {code}: {stderr.strip().splitlines()[-1]}"
    if code in (0, 4) or (code in (2, 5, 130) and "clustersim: " in stderr):
        return True, stderr.strip().splitlines()[-1] if stderr.strip() else "accepted"
    return False, f"exit {code}: {stderr.strip()[-300:]}"


def main() -> None:
    cases = _cases()
    faults: list[tuple[str, str, Case, float | None]] = [
        (reader, what, case, None) for reader, what, case in cases]
    big = "{\"nb_res\": 8, \"jobs\": [" + ",".join(
        f'{{"id": {i}, "subtime": {i}, "res": 1, "profile": "p"}}' for i in range(200_000)) + \
        "], \"profiles\": {\"p\": {\"type\": \"delay\", \"delay\": 50}}}"
    for delay in (1.5, 2.5, 3.5):
        faults.append(("interrupt", f"Ctrl-C after {delay} s", Case("interrupt", "", "big.json", big, (
            "run", "-w", "big.json", "-o", "out", "-q", "--no-gantt")), delay))
    faults.append(("output directory", "inside a file", Case("output directory", "", "f", "x", (
        "run", "-o", "f/out", "-q", "--no-gantt")), None))
    faults.append(("output directory", "a prefix into a missing directory", Case("output directory", "", "x", "x", (
        "run", "-e", "missing/dir/exp", "-q", "--no-gantt")), None))
    not_clean = 0
    for reader, what, case, interrupt in faults:
        with tempfile.TemporaryDirectory() as directory:
            clean, detail = _run(case, Path(directory), interrupt)
            if interrupt is not None and clean:
                schedule = Path(directory) / "out" / "schedule.csv"
                extra = Path(directory) / "out" / "extra_metrics.csv"
                jobs = Path(directory) / "out" / "jobs.csv"
                if schedule.exists():
                    header, values = schedule.read_text().splitlines()[:2]
                    row = dict(zip(header.split(","), values.split(","), strict=True))
                    rows = len(jobs.read_text().splitlines()) - 1
                    marker = dict(zip(*(line.split(",") for line in extra.read_text().splitlines()[:2]), strict=True))
                    if marker.get("partial") != "1" or int(row["nb_jobs"]) != rows:
                        clean, detail = False, f"{marker.get('partial')=} nb_jobs {row['nb_jobs']} != {rows}"
        if not clean:
            not_clean += 1
            print(f"NOT CLEAN  {reader}: {what}: {detail}")
    print(f"{len(faults)} tried, {len(faults) - not_clean} clean, {not_clean} not")


if __name__ == "__main__":
    main()
