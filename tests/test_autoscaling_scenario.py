"""Scenarios end to end: the classic HPA behaviours from the embedded example, outputs, plots, errors, CLI."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from clustersim.autoscaling.plots import latency_figure, replicas_figure
from clustersim.autoscaling.run import AutoscaleResult, run_scenario
from clustersim.autoscaling.scenario import load_scenario, parse_scenario
from clustersim.autoscaling.timeseries import COLUMNS, read_time_series
from clustersim.autoscaling.traffic import (
    Poisson,
    Ramp,
    ReplayRates,
    ReplayTimestamps,
    Sinusoidal,
    Step,
    Uniform,
    create_traffic,
    read_replay,
)
from clustersim.cli import main
from clustersim.errors import InputError, UnknownNameError

EXAMPLE = Path(str(resources.files("clustersim") / "examples" / "autoscale.yaml"))


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> tuple[AutoscaleResult, Path]:
    out = tmp_path_factory.mktemp("autoscale")
    return run_scenario(load_scenario(EXAMPLE), out), out


def test_example_shows_scale_up_after_the_lag_following_the_step(example: tuple[AutoscaleResult, Path]) -> None:
    rows = example[0].rows
    first_up = next(r for r in rows if r.time > 100 and r.desired_replicas > 2)
    # The step is at t=600: the HPA can only see it after a metrics window ends (610), its lag (614) and a sync.
    assert 614 <= first_up.time <= 640
    assert max(r.replicas for r in rows) == 15


def test_example_shows_replicas_pending_on_a_full_cluster(example: tuple[AutoscaleResult, Path]) -> None:
    rows = example[0].rows
    assert max(r.replicas_pending for r in rows) == 5  # 10 replicas fit beside the batch pods
    assert max(r.replicas_ready for r in rows) == 10


def test_example_holds_the_scale_down_for_the_stabilisation_window(example: tuple[AutoscaleResult, Path]) -> None:
    rows = example[0].rows
    drop = 1801.0  # traffic falls back to 20 requests/s; the last high recommendation is the sync of t=1800
    held = [r for r in rows if drop + 30 <= r.time < 1800 + 300]
    assert held and all(r.desired_replicas == 15 for r in held)
    assert all(r.utilisation < 20 for r in held)
    after = [r for r in rows if r.time >= 1800 + 330]
    assert after[0].desired_replicas == 2 and after[-1].replicas == 2


def test_time_series_csv_has_the_documented_columns(example: tuple[AutoscaleResult, Path]) -> None:
    result, out = example
    table = read_time_series(out / "timeseries.csv")
    assert list(table[0]) == list(COLUMNS)
    assert len(table) == len(result.rows) == 300
    assert [row["desired_replicas"] for row in table] == [r.desired_replicas for r in result.rows]
    assert (out / "replicas.png").stat().st_size > 10000 and (out / "latency.png").stat().st_size > 10000


def test_replicas_figure_draws_traffic_and_replicas_by_state(example: tuple[AutoscaleResult, Path]) -> None:
    rows = example[0].rows
    figure = replicas_figure(rows)
    traffic, replicas = figure.axes
    arriving = traffic.get_lines()[0]
    assert arriving.get_label() == "arriving"
    assert list(arriving.get_ydata()) == [r.arrived_per_s for r in rows]
    desired = next(line for line in replicas.get_lines() if line.get_label() == "desired")
    assert list(desired.get_ydata()) == [r.desired_replicas for r in rows]
    labels = [text.get_text() for text in replicas.get_legend().get_texts()]
    assert "pending (unscheduled)" in labels and "ready" in labels


def test_latency_figure_draws_the_three_percentiles(example: tuple[AutoscaleResult, Path]) -> None:
    rows = example[0].rows
    latency = latency_figure(rows).axes[0]
    lines = {line.get_label(): line for line in latency.get_lines()}
    assert set(lines) == {"p50", "p95", "p99"}
    np.testing.assert_array_equal(lines["p99"].get_ydata(), [r.latency_p99 for r in rows])


def test_same_scenario_same_seed_same_time_series(tmp_path: Path) -> None:
    document = {
        "duration": 300, "seed": 1, "deployment": {"replicas": 2, "timeout": 5},
        "traffic": {"pattern": "poisson", "rate": 30},
        "hpa": {"target": 50}, "cluster": {"scheduler": "first-fit", "nodes": [{"count": 2, "cores": 4}]},
    }
    run_scenario(parse_scenario(document), tmp_path / "a", figures=False)
    run_scenario(parse_scenario(document), tmp_path / "b", figures=False)
    assert (tmp_path / "a" / "timeseries.csv").read_bytes() == (tmp_path / "b" / "timeseries.csv").read_bytes()


def test_requests_per_second_metric_scales_to_the_per_pod_target() -> None:
    document = {
        "duration": 600, "seed": 2, "deployment": {"replicas": 1, "work": 0.001},
        "traffic": {"pattern": "poisson", "rate": 100},
        "hpa": {"metric": "requests_per_second", "target": 20, "max_replicas": 10},
        "cluster": {"scheduler": "first-fit", "nodes": [{"count": 2, "cores": 8}]},
    }
    rows = run_scenario(parse_scenario(document)).rows
    assert rows[-1].replicas in (5, 6)  # 100 requests/s at 20 per pod, within the tolerance


def test_misspelt_key_fails_naming_the_field_and_the_valid_keys() -> None:
    document = {"duration": 10, "deployment": {"replicsa": 2}, "traffic": {"pattern": "poisson", "rate": 1},
                "cluster": {"nodes": [{"count": 1}]}}
    with pytest.raises(InputError, match=r"field 'deployment.replicsa'.*did you mean 'replicas'"):
        parse_scenario(document, source="s.yaml")


def test_bad_values_name_their_field() -> None:
    base = {"duration": 10, "deployment": {}, "traffic": {"pattern": "poisson", "rate": 1},
            "cluster": {"nodes": [{"count": 1}]}}
    with pytest.raises(InputError, match=r"traffic\.pattern"):
        parse_scenario({**base, "traffic": {"pattern": "tsunami"}})
    with pytest.raises(InputError, match=r"traffic.*rate"):
        parse_scenario({**base, "traffic": {"pattern": "poisson"}})
    with pytest.raises(InputError, match=r"hpa.behavior.scale_up.policies\[0\].type"):
        parse_scenario({**base, "hpa": {"behavior": {"scale_up": {"policies": [{"type": "Pod", "value": 1,
                                                                                  "period": 15}]}}}})
    with pytest.raises(InputError, match=r"deployment\.requests\.cpu"):
        parse_scenario({**base, "deployment": {"requests": {"cpu": "lots"}}})
    with pytest.raises(InputError, match="missing key 'duration'"):
        parse_scenario({k: v for k, v in base.items() if k != "duration"})


def test_traffic_sources_have_their_documented_rates() -> None:
    rng = np.random.default_rng(0)
    for source, expected in ((Poisson(50), 50), (Uniform(50), 50), (Step(10, 90, 500), 50),
                             (Sinusoidal(50, 30, 200), 50), (Ramp(20, 80, 0, 500), 50)):
        count = sum(1 for _ in source.arrivals(rng, 1000))
        assert count == pytest.approx(expected * 1000, rel=0.03), source.name
        assert source.expected(0, 1000) == pytest.approx(expected * 1000, rel=0.01), source.name
    with pytest.raises(UnknownNameError, match="valid: poisson, ramp, replay, sinusoidal, step, uniform"):
        create_traffic("burst", {})


def test_replay_of_timestamps_and_of_per_second_rates(tmp_path: Path) -> None:
    times = tmp_path / "times.csv"
    times.write_text("time\n0.5\n1.25\n3\n")
    source = read_replay(times, "s")
    assert isinstance(source, ReplayTimestamps)
    assert list(source.arrivals(np.random.default_rng(0), 10)) == [0.5, 1.25, 3.0]
    rates = tmp_path / "rates.csv"
    rates.write_text("second,rate\n0,100\n1,0\n2,300\n")
    replay = read_replay(rates, "s")
    assert isinstance(replay, ReplayRates)
    assert replay.expected(0, 3) == 400 and replay.expected(0.5, 2.5) == 200
    assert sum(1 for _ in replay.arrivals(np.random.default_rng(0), 3)) == pytest.approx(400, abs=60)
    bad = tmp_path / "bad.csv"
    bad.write_text("time\n1\nsoon\n")
    with pytest.raises(InputError, match="line 3"):
        read_replay(bad, "s")


def test_cli_runs_the_embedded_example_and_a_scenario_file(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "duration: 120\ndeployment: {replicas: 1}\ntraffic: {pattern: poisson, rate: 5}\n"
        "cluster: {nodes: [{count: 1, cores: 2}]}\n"
    )
    assert main(["autoscale", str(scenario), "-o", str(tmp_path / "out"), "-q"]) == 0
    assert len(read_time_series(tmp_path / "out" / "timeseries.csv")) == 12
    scenario.write_text("duration: 120\ndeployment: {}\ntraffic: {pattern: poisson}\ncluster: {nodes: []}\n")
    assert main(["autoscale", str(scenario), "-o", str(tmp_path / "bad"), "-q"]) == 2


def test_cli_without_arguments_runs_the_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["autoscale", "--no-figures", "-q"]) == 0
    assert (tmp_path / "clustersim-autoscale" / "timeseries.csv").exists()
