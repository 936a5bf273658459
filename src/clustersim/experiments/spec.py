"""Experiment files: a base configuration, axes expanded into a cartesian product, and explicit runs.

```yaml
name: policies-under-load
base:                        # configuration shared by every run
  workload: traces/kth.swf.gz  # relative paths resolve against this file's directory
  policy: easy
axes:                        # every combination of these values is one run (last axis varies fastest)
  policy: [fcfs, easy]
  load_scale: [0.8, 1.0, 1.2]
  seed: [1, 2, 3]
runs:                        # optional explicit runs, each crossed with the axes
  - {workload: a.swf, platform: a.yaml}
  - {name: big, workload: b.swf, platform: 128}
aggregate_over: seed         # the axis summaries average over (default: seed)
```

Every value is checked when the file is read, naming the file and the key, so a campaign never fails on its
200th run because of a typo. Without `strict`, unknown keys are reported as warnings and ignored; with it they
are errors. Whether a named policy or file exists is checked by the run itself: such a run fails alone.
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field
from pathlib import Path

from clustersim._io.documents import load_document
from clustersim._io.fields import Checker, child, describe, item, listing
from clustersim.experiments.config import KEYS, RunConfig, make_config, parse_value
from clustersim.experiments.naming import run_name

TOP_KEYS = ("name", "description", "base", "axes", "runs", "aggregate_over")
RUN_ENTRY_KEYS = ("name", *KEYS)


@dataclass(frozen=True)
class PlannedRun:
    """One run of a campaign: its directory name, the values that set it apart, its full configuration."""

    name: str
    axes: Mapping[str, object]
    config: RunConfig


@dataclass
class Experiment:
    """An expanded experiment file: the runs in file order, and the keys that vary between them."""

    source: str
    name: str
    runs: list[PlannedRun]
    axes: list[str]
    aggregate_over: str = "seed"
    warnings: list[str] = field(default_factory=list)


def load_experiment(path: Path | str, *, strict: bool = False) -> Experiment:
    """Read and expand an experiment file; relative paths in it resolve against its directory."""
    path = Path(path)
    return parse_experiment(load_document(path), source=str(path), base_dir=path.parent.absolute(), strict=strict)


def parse_experiment(
    document: object, *, source: str = "<memory>", base_dir: Path | None = None, strict: bool = False
) -> Experiment:
    """Expand a decoded experiment file into its runs."""
    base_dir = base_dir or Path.cwd()
    check = Checker(source)
    warnings: list[str] = []
    if document is None:
        check.fail("", "the experiment file is empty; expected a mapping with 'base' and 'axes' or 'runs'")
    top = check.mapping(document, "")
    unknown = _unknown(top, "", TOP_KEYS, strict, check, warnings, configuration_hint=True)
    top = {k: v for k, v in top.items() if k not in unknown}

    name = check.string(top["name"], "name") if "name" in top else Path(source).stem
    base = _config_values(top.get("base", {}), "base", strict, check, warnings, base_dir)
    axes = _axes(top.get("axes", {}), strict, check, warnings, base_dir)
    entries = _entries(top.get("runs"), strict, check, warnings, base_dir)
    over = top.get("aggregate_over", "seed")
    if not isinstance(over, str) or (over not in KEYS):
        check.expected("aggregate_over", f"a configuration key ({listing(KEYS)})", over)

    written_base = {k: v for k, v in check.mapping(top.get("base") or {}, "base").items() if k in base}
    planned: list[tuple[str, list[str], dict[str, object], RunConfig]] = []
    seen: dict[str, str] = {}
    for entry_field, entry_name, entry in entries:
        for combination in itertools.product(*axes.values()):
            chosen = dict(zip(axes, combination, strict=True))
            values = {**base, **_checked(entry), **_checked(chosen)}
            shown: dict[str, object] = {"name": entry_name} if entry_name is not None else _written(entry)
            shown.update(_written(chosen))
            label = run_name(shown)
            where = _where(entry_field, chosen)
            if label in seen:
                check.fail(where, f"this run has the same values as {seen[label]} (directory '{label}')")
            seen[label] = where
            written = {**written_base, **_written(entry), **_written(chosen)}
            if entry_name is not None:
                written["name"] = entry_name
            keys = (["name"] if entry_name is not None else []) + [*entry, *chosen]
            planned.append((label, keys, written, make_config(values, check, where)))
    varying = list(dict.fromkeys(key for _, keys, _, _ in planned for key in keys))
    runs = [
        PlannedRun(label, {key: written.get(key, _default(key)) for key in varying}, config)
        for label, _, written, config in planned
    ]
    return Experiment(source, name, runs, varying, over, warnings)


Checked = dict[str, tuple[object, object]]
"""key -> (checked value, value as written in the file)."""


def _unknown(
    mapping: Mapping[str, object],
    field: str,
    valid: tuple[str, ...] | Mapping[str, object],
    strict: bool,
    check: Checker,
    warnings: list[str],
    *,
    configuration_hint: bool = False,
) -> set[str]:
    """The keys of `mapping` outside `valid`: an error naming them all when strict, else warnings."""
    unknown = [k for k in mapping if k not in valid]
    if not unknown:
        return set()
    notes = []
    for key in unknown:
        close = difflib.get_close_matches(key, list(valid), n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        if configuration_hint and not close and key in KEYS:
            hint = " (configuration keys go under 'base', or 'axes' to vary them)"
        notes.append(f"'{key}'{hint}")
    where = f"{field}: " if field else ""
    message = f"{where}unknown key{'s' if len(unknown) > 1 else ''} {', '.join(notes)}; valid keys: {listing(valid)}"
    if strict:
        check.fail("", message)
    warnings.append(f"{check.source}: {message} (ignored; --strict makes this an error)")
    return set(unknown)


def _config_values(
    document: object, field: str, strict: bool, check: Checker, warnings: list[str], base_dir: Path
) -> dict[str, object]:
    mapping = check.mapping(document if document is not None else {}, field)
    unknown = _unknown(mapping, field, KEYS, strict, check, warnings)
    return {
        key: parse_value(check, key, value, child(field, key), base_dir)
        for key, value in mapping.items()
        if key not in unknown
    }


def _axes(
    document: object, strict: bool, check: Checker, warnings: list[str], base_dir: Path
) -> dict[str, list[tuple[object, object]]]:
    mapping = check.mapping(document if document is not None else {}, "axes")
    unknown = _unknown(mapping, "axes", KEYS, strict, check, warnings)
    axes: dict[str, list[tuple[object, object]]] = {}
    for key, values in mapping.items():
        if key in unknown:
            continue
        field = child("axes", key)
        if not isinstance(values, list) or not values:
            check.expected(field, f"a non-empty list of values for '{key}'", values)
        checked: list[tuple[object, object]] = []
        for index, value in enumerate(values):
            value_field = item(field, index)
            parsed = parse_value(check, key, value, value_field, base_dir)
            if any(parsed == previous for previous, _ in checked):
                check.fail(value_field, f"value {describe(value)} appears twice in the axis")
            checked.append((parsed, value))
        axes[key] = checked
    return axes


def _entries(
    document: object, strict: bool, check: Checker, warnings: list[str], base_dir: Path
) -> list[tuple[str, str | None, Checked]]:
    """The explicit runs as (field, name, values); one empty run when there is no `runs` list."""
    if document is None:
        return [("base", None, {})]
    entries = check.sequence(document, "runs")
    if not entries:
        check.fail("runs", "expected at least one run (or leave 'runs' out to use the axes alone)")
    out: list[tuple[str, str | None, Checked]] = []
    for index, entry in enumerate(entries):
        field = item("runs", index)
        mapping = check.mapping(entry, field)
        unknown = _unknown(mapping, field, RUN_ENTRY_KEYS, strict, check, warnings)
        name = check.string(mapping["name"], child(field, "name")) if "name" in mapping else None
        values: Checked = {
            key: (parse_value(check, key, value, child(field, key), base_dir), value)
            for key, value in mapping.items()
            if key not in unknown and key != "name"
        }
        out.append((field, name, values))
    return out


def _checked(values: Checked) -> dict[str, object]:
    return {key: value for key, (value, _) in values.items()}


def _written(values: Checked) -> dict[str, object]:
    return {key: written for key, (_, written) in values.items()}


def _where(entry_field: str, chosen: Checked) -> str:
    combination = ", ".join(f"{k}={written!r}" for k, (_, written) in chosen.items())
    return f"{entry_field} with {combination}" if combination else entry_field


def _default(key: str) -> object:
    """The value a run has for a key it does not set: the configuration default (None for a run's name)."""
    spec = RunConfig.__dataclass_fields__.get(key)
    return None if spec is None or spec.default is MISSING else spec.default
