"""Build the mypyc-compiled package into a cache directory, for the tests and benchmarks of the compiled path.

The directory holds a copy of the package sources with the compiled modules (`[tool.clustersim] compiled` in
pyproject.toml) built over them by setup.py's opt-in build: Python imports an extension module before the `.py`
of the same name, so `PYTHONPATH=<dir>` runs the compiled path and `PYTHONPATH=src` the pure one. The cache is
keyed by the sources, the build files, Python's and mypy's versions: a change rebuilds it.

    PYTHONPATH=$(python tests/compiled_build.py) python benchmarks/replay.py    # the compiled figures
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import tomllib
from importlib.metadata import version
from pathlib import Path

from clustersim._io.system import apt_install

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "clustersim"
CACHE = ROOT / "build" / "mypyc"


def compiled_modules() -> list[str]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        modules: list[str] = tomllib.load(f)["tool"]["clustersim"]["compiled"]
    return modules


def _key() -> str:
    digest = hashlib.sha256(f"{sys.version} mypy {version('mypy')}".encode())
    for path in [ROOT / "pyproject.toml", ROOT / "setup.py", *sorted(PACKAGE.rglob("*.py"))]:
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def extension_path(lib: Path, module: str) -> Path | None:
    """The compiled extension of `module` under `lib`, if it was built."""
    *package, name = module.split(".")
    found = sorted(lib.joinpath(*package).glob(f"{name}.*.so"))
    return found[0] if found else None


def _has_compiler() -> bool:
    headers = Path(sysconfig.get_paths()["include"]) / "Python.h"
    return shutil.which(os.environ.get("CC", "gcc")) is not None and headers.exists()


def build(jobs: int = 2) -> Path:
    """The directory to put on PYTHONPATH for the compiled path (built on first use, then cached)."""
    lib = CACHE / _key()
    if lib.is_dir():
        return lib
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / "lock", "w") as lock:  # mypyc writes its C under build/: one build of a checkout at a time
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not lib.is_dir():
            _build_into(lib, jobs)
    return lib


def _build_into(lib: Path, jobs: int) -> None:
    failure = apt_install(["gcc", "python3-dev"], _has_compiler)  # a fresh Debian machine may have neither
    if failure is not None:
        raise RuntimeError(f"no C compiler or Python headers for mypyc: {failure}")
    with tempfile.TemporaryDirectory(dir=CACHE) as scratch:
        staged = Path(scratch) / "lib"
        shutil.copytree(PACKAGE, staged / "clustersim", ignore=shutil.ignore_patterns("__pycache__"))
        command = [sys.executable, "setup.py", "build_ext", "--build-lib", str(staged),
                   "--build-temp", str(Path(scratch) / "temp"), "--parallel", str(jobs)]
        env = {**os.environ, "CLUSTERSIM_COMPILE": "1"}
        result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        missing = [m for m in compiled_modules() if extension_path(staged, m) is None]
        if result.returncode != 0 or missing:
            raise RuntimeError(
                f"the mypyc build failed (modules not built: {missing}):\n{result.stdout[-4000:]}\n"
                f"{result.stderr[-4000:]}"
            )
        shutil.rmtree(lib, ignore_errors=True)
        staged.rename(lib)
    for stale in CACHE.iterdir():  # earlier sources' builds
        if stale != lib and stale.is_dir() and not stale.name.startswith("tmp"):
            shutil.rmtree(stale, ignore_errors=True)


if __name__ == "__main__":
    print(build())
