"""The HTML report of a campaign: self-contained page with its tables and figures, SVG links that resolve."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from clustersim.cli import main
from clustersim.experiments import LocalBackend, load_experiment, run_campaign
from clustersim.experiments.report import write_report


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("report")
    jobs = [{"id": i, "subtime": 7 * i, "res": 1 + i % 3, "walltime": 60, "profile": "a" if i % 2 else "b"}
            for i in range(1, 9)]
    profiles = {"a": {"type": "delay", "delay": 30}, "b": {"type": "delay", "delay": 12}}
    (folder / "w.json").write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": profiles}))
    (folder / "exp.yaml").write_text(yaml.safe_dump({
        "name": "report-test",
        "description": "EASY vs <FCFS> under load",
        "base": {"workload": "w.json", "walltime": "uniform", "walltime_factor": 4},
        "axes": {"policy": ["fcfs", "easy", "broken"], "load_scale": [1, 2], "seed": [1, 2]},
    }, sort_keys=False))
    run_campaign(load_experiment(folder / "exp.yaml"), folder / "out", LocalBackend(2), progress=False)
    return folder / "out"


@pytest.fixture(scope="module")
def page(campaign: Path) -> str:
    """The report, written once for the module (rendering figures is the slow part)."""
    return write_report(campaign, timelines=2).read_text()


def test_report_shows_the_experiment_description(page: str) -> None:
    assert "<p class=\"description\">EASY vs &lt;FCFS&gt; under load</p>" in page


def test_report_embeds_its_figures_and_links_svg_versions(campaign: Path, page: str) -> None:
    images = re.findall(r"<img alt='([^']*)' src='data:image/png;base64,", page)
    assert "Metrics against policy (95% CI over seed)" in images
    assert "Metrics against load_scale (95% CI over seed)" in images
    assert "Per-job distributions (seeds pooled)" in images
    assert [t for t in images if t.startswith("Utilisation")] == [
        "Utilisation and queue length: policy=fcfs,load_scale=1,seed=1",
        "Utilisation and queue length: policy=fcfs,load_scale=2,seed=1",
    ]
    links = re.findall(r"<a href='([^']+\.svg)'>SVG</a>", page)
    assert len(links) == len(images)
    assert all((campaign / link).is_file() for link in links)


def test_report_shows_the_summary_and_the_failed_runs(page: str) -> None:
    assert "<h1>Campaign report-test</h1>" in page
    assert "12 runs: 8 ok, 4 failed, 0 pending" in page
    assert "policy=broken,load_scale=1,seed=1</td><td>unknown policy &#x27;broken&#x27;" in page
    summary = page[page.index("<h2>Summary</h2>"):page.index("<h2>Figures</h2>")]
    assert summary.count("<tr>") == 1 + 6  # header and one row per (policy, load_scale)
    assert "mean_waiting_time (mean ± 95% CI)" in summary
    assert "<details><summary>All runs</summary>" in page


def test_cli_report_writes_to_the_chosen_file(tmp_path: Path) -> None:
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "w.json").write_text(json.dumps({
        "nb_res": 2, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "a"}],
        "profiles": {"a": {"type": "delay", "delay": 5}},
    }))
    (folder / "exp.yaml").write_text("base: {workload: w.json}\n")
    assert main(["sweep", str(folder / "exp.yaml"), "-o", str(folder / "out"), "--workers", "1", "-q"]) == 0
    assert main(["report", str(folder / "out"), "-o", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text()
    assert "1 runs: 1 ok, 0 failed, 0 pending" in page
    assert (tmp_path / "r_figures" / "distributions.svg").is_file()
    assert "<a href='r_figures/distributions.svg'>SVG</a>" in page


def test_cli_report_on_a_directory_that_is_not_a_campaign_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(tmp_path)]) == 2
    assert "not a campaign directory" in capsys.readouterr().err
