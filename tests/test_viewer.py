"""`clustersim view`: the run reader and series (oracles), then the page in a real headless Chromium.

The browser tests open a page for every kind of run (batch, energy, Kubernetes, autoscaling, architectures, two
runs compared), fail on any console error, zoom with the mouse wheel and check the Gantt chart switches from the
occupancy image to the jobs, hover a job and read its fields in the tooltip, and save screenshots for a person.
"""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from clustersim.cli import main
from clustersim.errors import InputError
from clustersim.view.browser import ARGS, ensure_chromium
from clustersim.view.command import serve_in_background
from clustersim.view.page import build_page
from clustersim.view.runs import read_run, run_directories
from clustersim.view.series import binned_mean, occupancy_image, step_series

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "src" / "clustersim" / "examples"
SHOTS = Path(__file__).resolve().parent / "screenshots"


# ---- series and reader: hand-computed oracles ----

def test_step_series_merges_equal_instants_and_ends_at_the_run_end() -> None:
    x, y = step_series(np.array([0.0, 5, 5, 10]), np.array([2.0, -2, 1, -1]), 20)
    assert x.tolist() == [0, 5, 10, 20] and y.tolist() == [2, 1, 0, 0]


def test_binned_mean_is_the_time_weighted_mean_of_each_bin() -> None:
    # 2 over [0, 3), 0 over [3, 4): bins [0, 2) -> 2, [2, 4) -> (2*1 + 0*1) / 2 = 1
    edges, means = binned_mean(np.array([0.0, 3, 4]), np.array([2.0, 0, 0]), 2)
    assert edges.tolist() == [0, 2, 4] and means.tolist() == [2, 1, 1]


def test_occupancy_image_matches_a_direct_computation() -> None:
    rng = np.random.default_rng(3)
    start = rng.uniform(0, 90, 200)
    finish = start + rng.uniform(0, 30, 200)
    lo = rng.integers(0, 8, 200)
    hi = np.minimum(lo + rng.integers(0, 3, 200), 7)
    image = occupancy_image(start, finish, lo, hi, 8, 0.0, 100.0, 25)
    direct = np.zeros((8, 25))
    for s, f, a, b in zip(start, finish, lo, hi, strict=True):
        for col in range(25):
            overlap = max(0.0, min(f, 4.0 * col + 4) - max(s, 4.0 * col))
            direct[a:b + 1, col] += overlap / 4
    assert np.allclose(image, direct, atol=1e-5)


def test_reader_fails_naming_the_file_and_the_column(tmp_path: Path) -> None:
    (tmp_path / "jobs.csv").write_text("job_id,starting_time,finish_time,allocated_resources\n1,0,5,0-1\n")
    with pytest.raises(InputError, match=r"jobs.csv, field 'submission_time': missing column"):
        read_run(tmp_path)
    (tmp_path / "jobs.csv").write_text(
        "job_id,submission_time,starting_time,finish_time,final_state,allocated_resources\n1,0,0,5,X,zero\n")
    with pytest.raises(InputError, match=r"line 2, field 'allocated_resources': expected unit ids"):
        read_run(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["view", str(empty), "--html", str(tmp_path / "x.html")]) == 2


def test_a_directory_of_runs_opens_each_run(tmp_path: Path) -> None:
    for name in ("never", "always"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "jobs.csv").write_text(
            "job_id,submission_time,starting_time,finish_time,final_state,allocated_resources\n"
            "1,0,0,5,COMPLETED_SUCCESSFULLY,0\n")
    (tmp_path / "comparison.csv").write_text("policy\n")
    assert run_directories(tmp_path) == [tmp_path / "always", tmp_path / "never"]
    assert run_directories(tmp_path / "never") == [tmp_path / "never"]
    html = tmp_path / "page.html"
    assert main(["view", str(tmp_path), "--html", str(html)]) == 0
    assert "always vs never" in html.read_text()


def test_reader_takes_columns_by_name_in_any_order(tmp_path: Path) -> None:
    (tmp_path / "jobs.csv").write_text(
        "allocated_resources,final_state,finish_time,starting_time,submission_time,job_id,extra\n"
        "0-1 4,COMPLETED_SUCCESSFULLY,5,1,0,7,x\n,REJECTED,-1,-1,2,8,y\n")
    jobs = read_run(tmp_path).jobs
    assert jobs is not None
    assert (jobs.rect_job.tolist(), jobs.rect_lo.tolist(), jobs.rect_hi.tolist()) == ([0, 0], [0, 4], [1, 4])
    assert np.isnan(jobs.start[1]) and jobs.nb_units == 5


# ---- the page in Chromium ----

@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One output directory of every kind, made by the project's own commands."""
    base = tmp_path_factory.mktemp("runs")
    workload = str(EXAMPLES / "workload.json")
    (base / "power.yaml").write_text(
        "nodes:\n  - count: 32\n    power:\n      idle: 100\n      full: 200\n"
        "      sleep: {watts: 10, switch_off: {seconds: 5, joules: 250}, switch_on: {seconds: 10, joules: 1000}}\n")
    pods = "---\n".join(
        f"kind: Pod\nmetadata: {{name: p{i}, namespace: team-{'ab'[i % 2]}, annotations: {{clustersim.io/duration: "
        f"{30 + 10 * i}s}}}}\nspec: {{containers: [{{name: c, resources: {{requests: {{cpu: 1, memory: 1Gi}}}}}}]}}\n"
        for i in range(12))
    (base / "pods.yaml").write_text(pods)
    (base / "k8s.yaml").write_text("nodes: [{count: 3, prefix: node, cores: 2, memory: 8Gi}]\n")
    (base / "big.json").write_text(_two_big_jobs())
    commands = {
        "easy": ["run", "-w", workload, "--policy", "easy"],
        "fcfs": ["run", "-w", workload, "--policy", "fcfs"],
        "energy": ["run", "-w", workload, "-p", str(base / "power.yaml"), "--power-off", "idle-timeout:30"],
        "kubernetes": ["run-k8s", "-p", str(base / "k8s.yaml"), "-w", str(base / "pods.yaml")],
        "autoscaling": ["autoscale", "--no-figures", "-q"],
        "architectures": ["architectures", "--no-figures", "-q"],
        "hover": ["run", "-w", str(base / "big.json"), "--policy", "fcfs"],
    }
    out = {}
    for name, command in commands.items():
        out[name] = base / name
        extra = ["--no-gantt", "-q"] if command[0] == "run" else []
        assert main([*command, *extra, "-o", str(out[name])]) in (0, 4), name
    return out


def _two_big_jobs() -> str:
    """Two jobs filling the chart (job 41 on hosts 0-3 for 100 s, then job 42), so a hover at the centre hits one."""
    return ('{"nb_res": 4, "jobs": [{"id": 41, "subtime": 0, "res": 4, "walltime": 200, "profile": "d100"},'
            ' {"id": 42, "subtime": 0, "res": 4, "walltime": 200, "profile": "d100"}],'
            ' "profiles": {"d100": {"type": "delay", "delay": 100}}}')


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = ensure_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=list(ARGS))
        yield chromium
        chromium.close()


def _open(browser: Any, html: str) -> tuple[Any, list[str]]:
    """Serve the page on loopback, load it, wait until Bokeh has drawn it; returns the page and its console errors."""
    server, url = serve_in_background(html.encode())
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: errors.append(f"fetched {r.url}") if not r.url.startswith(url) else None)
    page.goto(url)
    page.wait_for_function("window.clustersimViewer !== undefined", timeout=60_000)
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    server.shutdown()
    return page, errors


def _titles(page: Any) -> list[str]:
    return page.evaluate("""() => Bokeh.documents[0].all_models ? [...Bokeh.documents[0].all_models]
        .filter(m => m.type === "Title").map(m => m.text) : []""")  # type: ignore[no-any-return]


EXPECTED_TITLES = {
    "easy": ["Gantt chart", "utilisation (32 units)", "queue: jobs waiting"],
    "energy": ["Gantt chart", "machine states", "power"],
    "kubernetes": ["Gantt chart", "pods running per node"],
    "autoscaling": ["Gantt chart", "replicas by state", "latency", "cpu utilisation"],
    "architectures": ["schedulers' busyness", "conflicts per committed transaction"],
}


@pytest.mark.parametrize("kind", list(EXPECTED_TITLES))
def test_every_kind_of_run_opens_without_console_errors(kind: str, runs: dict[str, Path], browser: Any) -> None:
    page, errors = _open(browser, build_page([read_run(runs[kind])]))
    titles = _titles(page)
    for expected in EXPECTED_TITLES[kind]:
        assert any(t.startswith(expected) for t in titles), (expected, titles)
    assert errors == []
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{kind}.png"), full_page=True)
    page.close()


def _state(page: Any) -> dict[str, Any]:
    return page.evaluate("""() => { const m = [...Bokeh.documents[0].all_models];
        const one = n => m.find(x => x.name === n);
        return {jobs: one("jobs").visible, occupancy: one("occupancy").visible, note: one("note").text,
                start: one("time").start, end: one("time").end}; }""")  # type: ignore[no-any-return]


def test_zooming_in_replaces_the_occupancy_image_by_the_jobs(runs: dict[str, Path], browser: Any) -> None:
    page, errors = _open(browser, build_page([read_run(runs["easy"])], detail_limit=60))
    before = _state(page)
    assert (before["jobs"], before["occupancy"]) == (False, True)
    shot_before = page.screenshot()
    box = page.locator(".bk-Canvas").first.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.3, box["y"] + box["height"] / 2)
    for _ in range(12):
        page.mouse.wheel(0, -300)
        page.wait_for_timeout(50)
    page.wait_for_timeout(300)
    after = _state(page)
    assert after["end"] - after["start"] < (before["end"] - before["start"]) / 2
    assert (after["jobs"], after["occupancy"]) == (True, False), after
    assert after["note"].endswith("jobs in view") and int(after["note"].split()[0]) <= 60
    assert page.screenshot() != shot_before
    assert errors == []


def test_hovering_a_job_shows_its_fields(runs: dict[str, Path], browser: Any) -> None:
    page, errors = _open(browser, build_page([read_run(runs["hover"])]))
    box = page.locator(".bk-Canvas").first.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.25, box["y"] + box["height"] * 0.5)
    page.mouse.move(box["x"] + box["width"] * 0.26, box["y"] + box["height"] * 0.5)
    tooltip = page.locator(".bk-tooltip-content").first
    tooltip.wait_for(timeout=5000)
    text = tooltip.inner_text()
    for field in ("job", "state", "submitted", "started", "finished", "units"):
        assert field in text, text
    assert "41" in text and "completed successfully".upper().replace(" ", "_") in text and "waited 0 s" in text
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / "hover.png"))
    assert errors == []


def test_two_runs_side_by_side_select_the_same_job_and_give_start_differences(runs: dict[str, Path],
                                                                               browser: Any) -> None:
    page, errors = _open(browser, build_page([read_run(runs["easy"]), read_run(runs["fcfs"])]))
    titles = _titles(page)
    assert sum(t.startswith("Gantt chart") for t in titles) == 2
    assert any(t.startswith("start in fcfs minus start in easy") for t in titles)
    selected = page.evaluate("""async () => { const s = [...Bokeh.documents[0].all_models]
        .filter(m => m.type === "ColumnDataSource" && m.data.job_id && m.data.start_difference);
        const [a, b] = s; a.selected.indices = [0]; const job = a.data.job_id[0];
        await new Promise(r => setTimeout(r, 500));  // Bokeh runs CustomJS callbacks asynchronously
        return [job, b.selected.indices.map(i => b.data.job_id[i]), a.data.start_difference[0],
                b.data.start_difference[b.selected.indices[0]]]; }""")
    job, same, diff_a, diff_b = selected
    assert same and all(j == job for j in same) and diff_a == -diff_b
    page.screenshot(path=str(SHOTS / "compare.png"), full_page=True)
    assert errors == []


def test_view_serves_on_loopback_and_writes_a_self_contained_file(runs: dict[str, Path], tmp_path: Path) -> None:
    html = tmp_path / "page.html"
    assert main(["view", str(runs["easy"]), "--html", str(html)]) == 0
    assert main(["view", str(runs["easy"]), "--html", str(tmp_path / "again.html")]) == 0
    assert html.read_bytes() == (tmp_path / "again.html").read_bytes()  # same runs, same bytes
    text = html.read_text()
    assert "<script" in text and "http://" not in text.split("<body")[0].replace("http://www.w3.org", "")
    server, url = serve_in_background(text.encode())
    try:
        with urllib.request.urlopen(url) as answer:
            assert answer.read().decode() == text
    finally:
        server.shutdown()



SWF = """; MaxProcs: 4
1 0 0 100 2 -1 -1 2 100 -1 1 7 1 -1 1 -1 -1 -1
2 0 0 100 2 -1 -1 2 100 -1 1 9 1 -1 1 -1 -1 -1
"""


def test_colour_by_user_from_the_workload(tmp_path: Path, browser: Any) -> None:
    (tmp_path / "w.swf").write_text(SWF)
    assert main(["run", "-w", str(tmp_path / "w.swf"), "-o", str(tmp_path / "run"), "-q", "--no-gantt"]) == 0
    html = tmp_path / "page.html"
    assert main(["view", str(tmp_path / "run"), "-w", str(tmp_path / "w.swf"), "--html", str(html)]) == 0
    page, errors = _open(browser, html.read_text())
    select = page.locator("select").first
    assert select.locator("option").all_inner_texts() == ["state", "user", "size"]
    select.select_option("user")
    page.wait_for_timeout(300)
    fill = page.evaluate("""() => { const r = [...Bokeh.documents[0].all_models].find(m => m.name === "jobs");
        return [r.glyph.fill_color.field, [...r.data_source.data.user]]; }""")
    assert fill[0] == "user" and sorted(fill[1]) == [0, 1]  # users 7 and 9, coded 0 and 1
    assert errors == []
