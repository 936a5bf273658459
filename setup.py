"""The opt-in compiled build: `CLUSTERSIM_COMPILE=1 python -m pip install .` compiles the hot modules with mypyc.

Without the variable the install is pure Python, exactly what pyproject.toml describes. With it, mypy (which
ships mypyc) is added to the build requirements and the modules listed in pyproject.toml under
`[tool.clustersim] compiled` become C extensions; the other modules stay Python. A compiled build that fails
(mypyc missing or refusing a module, no C compiler) warns and installs the pure-Python package instead: the
compiled path is a speed-up, never a condition of the install. docs/benchmarks.md has the figures.
"""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
COMPILE = os.environ.get("CLUSTERSIM_COMPILE", "") == "1"
# Commands that build code; metadata steps (egg_info, dist_info) need no type check of the package.
BUILDING = {"build", "build_ext", "bdist_wheel", "editable_wheel", "develop", "install"}


def compiled_modules() -> list[str]:
    """The modules to compile, as paths under src/ (pyproject.toml's `[tool.clustersim] compiled`)."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        modules: list[str] = tomllib.load(f)["tool"]["clustersim"]["compiled"]
    return [f"src/{module.replace('.', '/')}.py" for module in modules]


def _warn(message: str) -> None:
    print(f"clustersim: {message}; installing the pure-Python package", file=sys.stderr)


def extensions() -> list[Any]:
    if not COMPILE or not BUILDING.intersection(sys.argv[1:]):
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        _warn("CLUSTERSIM_COMPILE=1 but mypyc is not installed (pip install mypy)")
        return []
    cwd = os.getcwd()
    os.chdir(ROOT)  # mypy reads its configuration (strict) from pyproject.toml here
    try:
        return list(mypycify(compiled_modules(), opt_level="3", multi_file=True))
    except (Exception, SystemExit) as error:  # mypy exits on a type error
        _warn(f"mypyc could not compile the modules ({error})")
        return []
    finally:
        os.chdir(cwd)


class OptionalBuildExt(build_ext):
    """Build the compiled modules, or none of them: a C compiler error leaves the pure-Python package whole."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:
            _warn(f"the C compilation of the mypyc modules failed ({error})")
            for ext in self.extensions:
                built = self.get_ext_fullpath(ext.name)
                if os.path.exists(built):
                    os.remove(built)
            self.extensions = []

    def get_outputs(self) -> list[str]:
        return [path for path in super().get_outputs() if os.path.exists(path)]


def _mypyc_missing() -> bool:
    try:
        import mypyc  # noqa: F401
    except ImportError:
        return True
    return False


setup(
    ext_modules=extensions(),
    cmdclass={"build_ext": OptionalBuildExt},
    # pip's isolated build environment gets mypy when compiling (asked for before the build, then present)
    setup_requires=["mypy>=1.8"] if COMPILE and _mypyc_missing() else [],
)
