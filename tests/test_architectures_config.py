"""Configuration files: every bad key or file fails with an InputError naming it; the seed's file formats."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from clustersim.architectures import load_config, parse_config, simulate
from clustersim.architectures.distributions import Constant, Empirical, Exponential
from clustersim.architectures.jobs import GIB
from clustersim.errors import InputError, UnknownNameError

EXAMPLE = Path(__file__).resolve().parents[1] / "src" / "clustersim" / "examples" / "architectures.yaml"


def base() -> dict[str, Any]:
    return {
        "duration": 100,
        "cluster": {"machines": 2, "cpu": 4, "memory": 16},
        "schedulers": {"batch": {"t_job": 0.1, "t_task": 0.005}},
        "workloads": {"batch": {"interarrival": 10, "tasks": 2, "runtime": 5, "cpu": 0.5, "memory": 1}},
    }


def with_(**changes: Any) -> dict[str, Any]:
    document = base()
    document.update(changes)
    return document


def fails(document: object, *fragments: str, base_dir: Path = Path("."), source: str = "cell.yaml") -> None:
    """Parsing fails with an error about `source` (the configuration or a file it names) with the fragments."""
    with pytest.raises(InputError) as caught:
        parse_config(document, source="cell.yaml", base_dir=base_dir)
    message = str(caught.value)
    assert message.startswith(str(base_dir / source) if source != "cell.yaml" else source), message
    for fragment in fragments:
        assert fragment in message, message


def test_the_shipped_example_is_valid_and_describes_every_part() -> None:
    config = load_config(EXAMPLE)
    assert config.total_machines == 100 and set(config.schedulers) == set(config.workloads) == {"batch", "service"}
    assert isinstance(config.workloads["service"].tasks, Empirical)
    assert config.initial_state.fill is not None and len(config.initial_state.jobs) == 2
    assert config.sweep is not None and config.sweep.t_job[0] == 0.01
    assert [s.label() for s in config.selected()] == ["mesos", "monolithic", "omega/resource-fit/incremental"]


def test_units_cores_gib_and_kubernetes_quantities() -> None:
    config = parse_config(with_(cluster=[{"machines": 1, "cpu": "3500m", "memory": "8Gi"},
                                         {"machines": 2, "cpu": 2, "memory": 0.5}]))
    assert [(g.count, g.cpu, g.memory) for g in config.machines] == [(1, 3500, 8 * GIB), (2, 2000, GIB // 2)]


@pytest.mark.parametrize(("change", "fragments"), [
    ({"duraton": 5}, ("field 'duraton'", "did you mean 'duration'")),
    ({"duration": -1}, ("field 'duration'", "a number > 0")),
    ({"architecture": "borg"}, ("field 'architecture'", "valid: mesos, monolithic, omega, all")),
    ({"architectures": {"omega": {"conflicts": "medium"}}},
     ("field 'architectures.omega.conflicts'", "valid: cell-version, resource-fit, sequence-numbers")),
    ({"architectures": {"omega": {"transactions": "gang"}}}, ("architectures.omega.transactions", "all-or-nothing")),
    ({"architectures": {"mesos": {"offer_interval": "1s"}}}, ("architectures.mesos.offer_interval",)),
    ({"cluster": {"machines": 0, "cpu": 4, "memory": 16}}, ("field 'cluster.machines'", ">= 1")),
    ({"cluster": {"machines": 1, "cpu": "four", "memory": 16}}, ("field 'cluster.cpu'",)),
    ({"schedulers": {"batch": {"t_task": 1}}}, ("field 'schedulers.batch'", "missing key 't_job'")),
    ({"schedulers": {"batch": {"t_job": 1, "picker": "best-fit"}}},
     ("field 'schedulers.batch.picker'", "unknown picker 'best-fit'", "spread-margin")),
    ({"schedulers": {"batch": {"t_job": 1, "picker": {"name": "spread-margin", "margin": 2}}}},
     ("schedulers.batch.picker.margin", "[0, 1)")),
    ({"schedulers": {"batch": {"t_job": 1, "max_attempts": 0}}}, ("schedulers.batch.max_attempts", ">= 1")),
])
def test_bad_values_name_their_key(change: dict[str, Any], fragments: tuple[str, ...]) -> None:
    fails(with_(**change), *fragments)


@pytest.mark.parametrize(("workload", "fragments"), [
    ({"tasks": 2}, ("field 'workloads.batch'", "missing key 'interarrival'")),
    ({"interarrival": {"distribution": "gamma", "mean": 3}},
     ("workloads.batch.interarrival.distribution", "unknown distribution 'gamma'", "lognormal, weibull")),
    ({"interarrival": {"distribution": "exponential"}}, ("workloads.batch.interarrival", "missing key 'mean'")),
    ({"interarrival": {"distribution": "weibull", "shape": 0, "scale": 1}}, ("interarrival.shape", "> 0")),
    ({"interarrival": 0}, ("workloads.batch.interarrival", "must not all be 0")),
    ({"runtime": {"values": []}}, ("workloads.batch.runtime.values", "at least one value")),
    ({"runtime": {"values": [1, -2]}}, ("workloads.batch.runtime.values[1]", ">= 0")),
    ({"cpu": 5}, ("workloads.batch.cpu", "no task fits a machine")),
    ({"scheduler": "service"}, ("workloads.batch.scheduler", "unknown scheduler 'service'")),
    ({"runtime": {"file": "missing.log"}}, ("missing.log: cannot read", "named by 'workloads.batch.runtime.file'")),
])
def test_bad_workloads_name_their_key(workload: dict[str, Any], fragments: tuple[str, ...]) -> None:
    document = base()
    document["workloads"]["batch"].update(workload)
    if "tasks" in workload and len(workload) == 1:
        document["workloads"]["batch"] = workload
    with pytest.raises(InputError) as caught:
        parse_config(document, source="cell.yaml")
    for fragment in fragments:
        assert fragment in str(caught.value), str(caught.value)


def test_distribution_forms() -> None:
    document = base()
    document["workloads"]["batch"].update(
        interarrival={"distribution": "exponential", "mean": 4},
        tasks={"values": [1, 2, 3], "max": 2},
        cpu=0.25,
    )
    workload = parse_config(document).workloads["batch"]
    assert workload.interarrival == Exponential(4.0) and workload.cpu == Constant(0.25)
    assert all(workload.tasks.sample(random.Random(i)) <= 2 for i in range(50))


def test_sample_files_one_value_per_line_or_the_seeds_format_relative_to_the_config(tmp_path: Path) -> None:
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "plain.log").write_text("# runtimes\n5\n7.5\n\n")
    (tmp_path / "traces" / "sizes.log").write_text(
        "example_cluster cmb-new 0 1\nexample_cluster cmb-new 0 1600\nexample_cluster cmb-new 1 30\n"
    )
    document = base()
    document["workloads"]["batch"].update(runtime={"file": "traces/plain.log"}, tasks={"file": "traces/sizes.log"})
    document["workloads"]["service"] = {**document["workloads"]["batch"], "scheduler": "batch"}
    (tmp_path / "cell.yaml").write_text(yaml.safe_dump(document))
    config = load_config(tmp_path / "cell.yaml")
    assert config.workloads["batch"].runtime.maximum() == 7.5
    assert config.workloads["batch"].tasks.maximum() == 1600  # scheduler id 0: batch rows
    assert config.workloads["service"].tasks.maximum() == 30  # scheduler id 1: service rows


def test_seed_format_rows_need_a_trace_id_for_other_job_types(tmp_path: Path) -> None:
    (tmp_path / "sizes.log").write_text("c p 0 1\n")
    document = base()
    document["workloads"] = {"web": {**document["workloads"]["batch"], "tasks": {"file": "sizes.log"}}}
    fails(document, "line 1: rows in the simulator's format need a 'trace_id'",
          "(file named by 'workloads.web.tasks.file' in cell.yaml)", base_dir=tmp_path, source="sizes.log")
    document["workloads"]["web"]["trace_id"] = 2
    fails(document, "no samples with scheduler id 2", base_dir=tmp_path, source="sizes.log")


def test_bad_sample_lines_name_the_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "bad.log").write_text("1\n2\nthree\n")
    document = base()
    document["workloads"]["batch"]["runtime"] = {"file": "bad.log"}
    fails(document, "line 3: expected a number, got 'three'", "named by 'workloads.batch.runtime.file'",
          base_dir=tmp_path, source="bad.log")


def test_the_seeds_initial_state_file(tmp_path: Path) -> None:
    # the seed's example: three jobs running at time 0, two of which end during the run
    (tmp_path / "init.log").write_text(
        "11 0.000000 049475829738997701 1 3 1 0.17000000178813934 524288000\n"
        "11 0.000000 610339428128088085 0 0 1 0.0010000000474974513 10485760\n"
        "11 0.000000 856292140335049805 0 0 1000 0.10000000149011612 1074000000000\n"
        "12 6.844149 610339428128088085 0 0 5.001143932342529\n"
        "12 8.921186 856292140335049805 0 0 20.576528549194336\n"
    )
    document = with_(initial_state={"file": "init.log"}, cluster={"machines": 300, "cpu": 4, "memory": 16})
    config = parse_config(document, base_dir=tmp_path)
    jobs = config.initial_state.jobs
    assert [(j.tasks, j.end) for j in jobs] == [(1, None), (1, 6.844149), (1000, 8.921186)]
    assert jobs[2].cpu == 1  # 0.1 cores for 1000 tasks: 0.1 millicores, rounded up to 1
    result = simulate(config, config.architectures["omega"])
    assert (result.prefill.jobs, result.prefill.tasks, result.prefill.with_end) == (3, 1002, 2)


def test_a_bad_initial_state_row_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "init.log").write_text("11 0 a 0 0 1 1 100\n12 5 b 0 0 1\n")
    fails(with_(initial_state={"file": "init.log"}), "line 2: job b ends but was not listed",
          "named by 'initial_state.file'", base_dir=tmp_path, source="init.log")


def test_fill_reaches_its_cpu_share() -> None:
    config = parse_config(with_(initial_state={"fill": {"workload": "batch", "cpu": 0.5}}, duration=1))
    result = simulate(config, config.architectures["monolithic"])
    assert result.utilisation[0].cpu == pytest.approx(0.5, abs=0.07)
    fails(with_(initial_state={"fill": {"workload": "web", "cpu": 0.5}}), "initial_state.fill.workload")


def test_unknown_architecture_from_code_lists_the_valid_ones() -> None:
    with pytest.raises(UnknownNameError, match="valid: mesos, monolithic, omega"):
        parse_config(base()).selected("borg")


def test_not_yaml(tmp_path: Path) -> None:
    (tmp_path / "cell.yaml").write_text("cluster: [unclosed\n")
    with pytest.raises(InputError, match=r"cell.yaml, line 2: invalid YAML"):
        load_config(tmp_path / "cell.yaml")
