"""Experiment files: axes expand into a cartesian product, explicit runs, strict keys, clear errors, names
that depend only on a run's own values, and run configurations that round-trip through config.yaml."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from clustersim.errors import InputError
from clustersim.experiments.config import RunConfig, load_run_config, write_run_config
from clustersim.experiments.naming import run_name
from clustersim.experiments.spec import load_experiment, parse_experiment


def parse(document: object, strict: bool = True, base: Path = Path("/data")):  # type: ignore[no-untyped-def]
    return parse_experiment(document, source="exp.yaml", base_dir=base, strict=strict)


BASE = {"workload": "w.json", "platform": 8}


def test_axes_expand_into_a_cartesian_product_last_axis_fastest() -> None:
    experiment = parse({"base": BASE, "axes": {"policy": ["fcfs", "easy"], "seed": [1, 2, 3]}})
    assert [r.name for r in experiment.runs] == [
        "policy=fcfs,seed=1", "policy=fcfs,seed=2", "policy=fcfs,seed=3",
        "policy=easy,seed=1", "policy=easy,seed=2", "policy=easy,seed=3",
    ]
    assert experiment.axes == ["policy", "seed"]
    assert [(r.config.policy, r.config.seed) for r in experiment.runs][:2] == [("fcfs", 1), ("fcfs", 2)]
    assert all(r.config.workload == "/data/w.json" and r.config.platform == 8 for r in experiment.runs)
    assert experiment.runs[4].axes == {"policy": "easy", "seed": 2}


def test_axis_values_override_the_base() -> None:
    experiment = parse({"base": {**BASE, "policy": "sjf", "load_scale": 2}, "axes": {"load_scale": [0.5, 1]}})
    assert [(r.config.policy, r.config.load_scale) for r in experiment.runs] == [("sjf", 0.5), ("sjf", 1.0)]


def test_no_axes_is_one_run_with_the_base_configuration() -> None:
    experiment = parse({"base": BASE})
    assert [r.name for r in experiment.runs] == ["run"]
    assert experiment.runs[0].config == RunConfig(workload="/data/w.json", platform=8)


def test_explicit_runs_are_listed_and_crossed_with_the_axes() -> None:
    experiment = parse({
        "base": {"platform": 8},
        "runs": [{"workload": "a.json"}, {"name": "big", "workload": "b.json", "platform": 64}],
        "axes": {"seed": [1, 2]},
    })
    assert [r.name for r in experiment.runs] == [
        "workload=a.json,seed=1", "workload=a.json,seed=2", "name=big,seed=1", "name=big,seed=2",
    ]
    assert [r.config.platform for r in experiment.runs] == [8, 8, 64, 64]
    assert experiment.axes == ["workload", "seed", "name", "platform"]
    # A run that does not set a varying key shows the value it gets: the base's, or the default.
    assert experiment.runs[0].axes == {"workload": "a.json", "seed": 1, "name": None, "platform": 8}
    assert experiment.runs[2].axes == {"workload": "b.json", "seed": 1, "name": "big", "platform": 64}


def test_explicit_runs_with_the_same_values_are_an_error() -> None:
    with pytest.raises(InputError, match=r"runs\[1\].*same values as runs\[0\]"):
        parse({"base": BASE, "runs": [{"policy": "fcfs"}, {"policy": "fcfs"}]})


def test_relative_paths_resolve_against_the_experiment_files_directory(tmp_path: Path) -> None:
    folder = tmp_path / "study"
    folder.mkdir()
    (folder / "exp.yaml").write_text(yaml.safe_dump({
        "base": {"workload": "traces/w.json", "platform": "../platforms/p.yaml"},
        "axes": {"workload": ["traces/w.json", "/abs/x.swf"]},
    }))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cwd = Path.cwd()
    os.chdir(elsewhere)
    try:
        experiment = load_experiment(Path("..") / "study" / "exp.yaml")
    finally:
        os.chdir(cwd)
    configs = [r.config for r in experiment.runs]
    assert configs[0].workload == str(folder / "traces" / "w.json")
    assert configs[0].platform == str(tmp_path / "platforms" / "p.yaml")
    assert configs[1].workload == "/abs/x.swf"


def test_strict_names_every_unknown_key_and_suggests_the_near_match() -> None:
    with pytest.raises(InputError) as error:
        parse({"base": {**BASE, "polcy": "easy", "colour": 1}})
    message = str(error.value)
    assert message.startswith("exp.yaml: base: unknown keys 'polcy' (did you mean 'policy'?), 'colour'")
    assert "valid keys:" in message


def test_strict_refuses_unknown_axes_and_top_level_keys() -> None:
    with pytest.raises(InputError, match=r"axes: unknown key 'sed' \(did you mean 'seed'\?\)"):
        parse({"base": BASE, "axes": {"sed": [1, 2]}})
    with pytest.raises(InputError, match=r"unknown key 'axis' \(did you mean 'axes'\?\)"):
        parse({"base": BASE, "axis": {"seed": [1, 2]}})


def test_configuration_keys_at_the_top_level_get_a_hint() -> None:
    with pytest.raises(InputError, match=r"'policy' \(configuration keys go under 'base'"):
        parse({"base": BASE, "policy": "easy"})


def test_without_strict_unknown_keys_are_warnings_and_ignored() -> None:
    experiment = parse({"base": {**BASE, "polcy": "fcfs"}, "axes": {"sed": [1, 2], "seed": [3]}}, strict=False)
    assert [r.name for r in experiment.runs] == ["seed=3"]
    assert experiment.runs[0].config.policy == "easy"
    assert len(experiment.warnings) == 2
    assert "'polcy' (did you mean 'policy'?)" in experiment.warnings[0]
    assert "ignored; --strict makes this an error" in experiment.warnings[0]


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ({"base": BASE, "axes": {"load_scale": [1, "fast"]}},
         "exp.yaml, field 'axes.load_scale[1]': expected a number > 0, got 'fast' (a string)"),
        ({"base": {**BASE, "seed": -1}}, "exp.yaml, field 'base.seed': expected an integer >= 0, got -1"),
        ({"base": {**BASE, "walltime": "perfect"}},
         "exp.yaml, field 'base.walltime': expected one of requested, exact, multiplied, uniform, got 'perfect'"),
        ({"base": {**BASE, "time_window": [100, 50]}},
         "exp.yaml, field 'base.time_window[1]': expected a number > 100, got 50"),
        ({"base": {**BASE, "platform": 0}}, "field 'base.platform': expected an integer >= 1, got 0"),
        ({"base": BASE, "axes": {"seed": []}}, "field 'axes.seed': expected a non-empty list of values"),
        ({"base": BASE, "axes": {"seed": 3}}, "field 'axes.seed': expected a non-empty list of values"),
        ({"base": BASE, "axes": {"seed": [1, 1]}}, "field 'axes.seed[1]': value 1 appears twice in the axis"),
        ({"base": {"platform": 8}}, "missing key 'workload'"),
        ({"base": {**BASE, "walltime": "uniform", "walltime_factor": 0.5}}, "walltime_factor must be >= 1"),
        ([1, 2], "exp.yaml: expected a mapping, got a list"),
        (None, "the experiment file is empty"),
    ],
)
def test_bad_values_are_errors_naming_the_file_the_key_and_what_was_expected(document: object, expected: str) -> None:
    with pytest.raises(InputError) as error:
        parse(document)
    assert expected in str(error.value)


def test_yaml_syntax_errors_and_missing_files_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("base: [unclosed\n")
    with pytest.raises(InputError, match=r"bad\.yaml, line 2: invalid YAML"):
        load_experiment(bad)
    with pytest.raises(InputError, match=r"missing\.yaml: cannot read the file"):
        load_experiment(tmp_path / "missing.yaml")


def test_names_depend_only_on_a_runs_own_values() -> None:
    small = parse({"base": BASE, "axes": {"policy": ["easy"], "load_scale": [1.5]}})
    large = parse({"base": BASE, "axes": {"policy": ["fcfs", "easy"], "load_scale": [0.5, 1.5, 2]}})
    assert small.runs[0].name in [r.name for r in large.runs]


def test_names_are_file_system_safe_and_unique_for_paths() -> None:
    experiment = parse({"base": BASE, "axes": {"workload": ["a/w.json", "b/w.json", "w.json"]}})
    names = [r.name for r in experiment.runs]
    assert len(set(names)) == 3
    assert names[2] == "workload=w.json"
    assert all("/" not in n and n.startswith("workload=") for n in names)
    assert names[0].startswith("workload=a_w.json~")


def test_names_of_lists_and_long_values() -> None:
    assert run_name({"time_window": [0, 3600.5], "seed": 1}) == "time_window=0_3600.5,seed=1"
    long_name = run_name({"workload": "x" * 300})
    assert len(long_name) < 100 and "~" in long_name


def test_aggregate_over_must_be_a_configuration_key() -> None:
    assert parse({"base": BASE, "aggregate_over": "policy"}).aggregate_over == "policy"
    with pytest.raises(InputError, match="aggregate_over"):
        parse({"base": BASE, "aggregate_over": "colour"})


def test_run_configuration_round_trips_through_config_yaml(tmp_path: Path) -> None:
    config = RunConfig(
        workload=str(tmp_path / "w.json"), platform=16, policy="fcfs", seed=4, time_window=(10.0, None),
        load_scale=1.25, size_cap=8, size_cap_mode="drop", walltime="multiplied", walltime_factor=1.5,
    )
    path = tmp_path / "config.yaml"
    write_run_config(config, path)
    assert load_run_config(path) == config
    assert load_run_config(path).digest() == config.digest()
    assert "clustersim run --config" in path.read_text()


def test_run_configuration_files_are_checked_strictly(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("workload: w.json\npolcy: easy\n")
    with pytest.raises(InputError, match=r"config.yaml, field 'polcy': unknown key 'polcy' \(did you mean 'policy'"):
        load_run_config(path)
