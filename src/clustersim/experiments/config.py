"""The configuration of one run: every option that decides its outputs, checked, with paths made absolute.

A run's effective configuration is written as `config.yaml` in its directory: `clustersim run --config` replays
it alone, and its hash tells a restarted campaign whether a finished run is still the run it would do now.
Adding an option is one entry in `KEYS` and one field of `RunConfig`.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

from clustersim._io.documents import load_document
from clustersim._io.fields import Checker, child, describe
from clustersim.workload.swf import Processors
from clustersim.workload.transforms import SIZE_CAP_MODES, WALLTIME_MODELS, SizeCapMode, WalltimeModel


@dataclass(frozen=True)
class RunConfig:
    """Everything one run depends on. Paths are absolute; `platform` may be a host count or None (guessed)."""

    workload: str
    platform: str | int | None = None
    policy: str = "easy"
    seed: int = 0
    time_window: tuple[float, float | None] | None = None
    time_window_shift: bool = True
    load_scale: float = 1.0
    size_cap: int | None = None
    size_cap_mode: SizeCapMode = "cap"
    walltime: WalltimeModel = "requested"
    walltime_factor: float = 2.0
    processors: Processors = "allocated"
    cores_per_node: bool = False
    energy: bool = False
    power_off: str | None = None
    power_on: str = "on-demand"

    def as_mapping(self) -> dict[str, object]:
        """The configuration as plain YAML/JSON values, every key present, in `KEYS` order."""
        values = asdict(self)
        if self.time_window is not None:
            values["time_window"] = list(self.time_window)
        return {key: values[key] for key in KEYS}

    def digest(self) -> str:
        """A hash of the configuration: equal configurations, equal digests."""
        text = json.dumps(self.as_mapping(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()


Parser = Callable[[Checker, object, str, Path], object]


def _path(check: Checker, value: object, field: str, base: Path) -> str:
    text = check.string(value, field)
    return os.path.normpath(base / Path(text).expanduser())


def _platform(check: Checker, value: object, field: str, base: Path) -> str | int | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return check.integer(value, field, 1)
    if isinstance(value, str) and value:
        return _path(check, value, field, base)
    check.expected(field, "a platform file, a number of hosts (>= 1), or null (sized by the workload)", value)


def _name(check: Checker, value: object, field: str, base: Path) -> str:
    return check.string(value, field)


def _optional_name(check: Checker, value: object, field: str, base: Path) -> str | None:
    return None if value is None else check.string(value, field)


def _seed(check: Checker, value: object, field: str, base: Path) -> int:
    return check.integer(value, field, 0)


def _positive(check: Checker, value: object, field: str, base: Path) -> float:
    return check.number(value, field, 0, above=True)


def _boolean(check: Checker, value: object, field: str, base: Path) -> bool:
    if not isinstance(value, bool):
        check.expected(field, "true or false", value)
    return value


def _cap(check: Checker, value: object, field: str, base: Path) -> int | None:
    return None if value is None else check.integer(value, field, 1)


def _window(check: Checker, value: object, field: str, base: Path) -> tuple[float, float | None] | None:
    if value is None:
        return None
    what = "a list [start, end] of seconds with 0 <= start < end (end null: no end)"
    if not isinstance(value, list) or len(value) != 2:
        check.expected(field, what, value)
    start = check.number(value[0], f"{field}[0]", 0)
    end = None if value[1] is None else check.number(value[1], f"{field}[1]", start, above=True)
    return (start, end)


def _choice(*choices: str) -> Parser:
    def parse(check: Checker, value: object, field: str, base: Path) -> str:
        if value not in choices:
            check.expected(field, f"one of {', '.join(choices)}", value)
        return str(value)

    return parse


KEYS: dict[str, tuple[Parser, str]] = {
    "workload": (_path, "workload file (SWF or Batsim JSON), relative to the experiment file"),
    "platform": (_platform, "platform file, a number of identical hosts, or null to size it from the workload"),
    "policy": (_name, "built-in policy name (see `clustersim policies`)"),
    "seed": (_seed, "seed of every random choice of the run (uniform walltimes, random power-off)"),
    "time_window": (_window, "[start, end): keep jobs submitted in this window of the original trace"),
    "time_window_shift": (_boolean, "shift the window's jobs so that the window starts at 0"),
    "load_scale": (_positive, "offered load factor: interarrival times are divided by it"),
    "size_cap": (_cap, "largest resource request kept as is (null: no cap)"),
    "size_cap_mode": (_choice(*SIZE_CAP_MODES), "cap: reduce bigger requests to the cap; drop: leave those jobs out"),
    "walltime": (_choice(*WALLTIME_MODELS), "walltime model: requested, exact, multiplied or uniform"),
    "walltime_factor": (_positive, "multiplied: run time x factor; uniform: run time x U(1, factor)"),
    "processors": (_choice("allocated", "requested"), "SWF: which processor count a job requests"),
    "cores_per_node": (_boolean, "SWF without a platform: MaxNodes nodes of MaxProcs/MaxNodes cores"),
    "energy": (_boolean, "account for energy (every node needs a power model); power_off implies it"),
    "power_off": (_optional_name, "power-off policy such as idle-timeout:600 (null: nodes stay on)"),
    "power_on": (_name, "power-on policy: on-demand or margin[:SHARE]"),
}
"""Every configuration key: how its value is checked, and what it means (shown in docs and errors)."""

REQUIRED = ("workload",)


def parse_value(check: Checker, key: str, value: object, field: str, base: Path) -> object:
    """One checked configuration value; `base` is the directory relative paths resolve against."""
    parser, _ = KEYS[key]
    return parser(check, value, field, base)


def make_config(values: Mapping[str, object], check: Checker, where: str) -> RunConfig:
    """A run configuration from checked values (defaults fill the rest); `where` names the run in errors."""
    for key in REQUIRED:
        if key not in values:
            check.fail(where, f"missing key '{key}' (set it in 'base', an axis or the run)")
    config = RunConfig(**values)  # type: ignore[arg-type]
    if config.walltime == "uniform" and config.walltime_factor < 1:
        check.fail(
            where,
            f"walltime 'uniform' draws factors in [1, walltime_factor]: walltime_factor must be >= 1, "
            f"got {describe(config.walltime_factor)}",
        )
    return config


def parse_config(document: object, source: str, base: Path) -> RunConfig:
    """A run configuration from a decoded mapping, such as a run's `config.yaml`; unknown keys are errors."""
    check = Checker(source)
    mapping = check.mapping(document, "")
    check.known_keys(mapping, "", KEYS)
    values = {key: parse_value(check, key, value, child("", key), base) for key, value in mapping.items()}
    return make_config(values, check, "")


def load_run_config(path: Path | str) -> RunConfig:
    """Read a run's `config.yaml`; relative paths in it resolve against its directory."""
    path = Path(path)
    return parse_config(load_document(path), str(path), path.parent.absolute())


def write_run_config(config: RunConfig, path: Path) -> None:
    """Write `config.yaml`: every key, with a header saying how to replay the run."""
    header = (
        "# The effective configuration of this run, written by `clustersim sweep`.\n"
        "# Replay it alone with: clustersim run --config config.yaml -o OUTPUT_DIR\n"
    )
    body = yaml.safe_dump(config.as_mapping(), sort_keys=False, default_flow_style=False)
    path.write_text(header + body, encoding="utf-8")
