"""Gantt charts drawn from a jobs.csv: what they contain, the files they produce, and the inputs they refuse."""

from __future__ import annotations

import gzip
import time
from pathlib import Path

import matplotlib.image
import matplotlib.pyplot as plt
import pytest

from clustersim.errors import InputError
from clustersim.platform.model import Node, Platform
from clustersim.plots import GanttSummary, plot_gantt
from clustersim.policies.registry import create_policy
from clustersim.records.jobs_csv import COLUMNS
from clustersim.runner import simulate
from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay
from clustersim.workload.stream import Workload

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def row(job_id: str, state: str, start: float, finish: float, allocation: str) -> dict[str, str]:
    return {
        "job_id": job_id,
        "workload_name": "w0",
        "profile": "p",
        "submission_time": "0",
        "requested_number_of_resources": str(len(allocation.split())),
        "requested_time": "-1",
        "success": "1" if state == "COMPLETED_SUCCESSFULLY" else "0",
        "final_state": state,
        "starting_time": f"{start:g}",
        "execution_time": f"{finish - start:g}" if start >= 0 else "-1",
        "finish_time": f"{finish:g}",
        "waiting_time": "0",
        "turnaround_time": "0",
        "stretch": "1",
        "allocated_resources": allocation,
        "consumed_energy": "-1",
        "metadata": "",
    }


def write_jobs_csv(path: Path, rows: list[dict[str, str]], columns: tuple[str, ...] = COLUMNS) -> Path:
    lines = [",".join(columns)] + [",".join(r[c] for c in columns) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


SMALL = [
    row("1", "COMPLETED_SUCCESSFULLY", 0, 10, "0-1 3"),  # two contiguous intervals: two rectangles
    row("2", "COMPLETED_WALLTIME_REACHED", 2, 7, "2"),
    row("3", "REJECTED", -1, -1, ""),  # never ran: skipped
    row("4", "COMPLETED_KILLED", 10, 12.5, "0-3"),
    row("5", "COMPLETED_SUCCESSFULLY", 12.5, 12.5, "1"),  # zero length: drawn, zero width
]


@pytest.fixture
def small_csv(tmp_path: Path) -> Path:
    return write_jobs_csv(tmp_path / "jobs.csv", SMALL)


def test_summary_counts_one_rectangle_per_contiguous_interval(small_csv: Path, tmp_path: Path) -> None:
    summary = plot_gantt(small_csv, tmp_path / "gantt.png")
    assert summary == GanttSummary(
        nb_jobs=4,
        nb_rectangles=5,
        nb_killed=2,
        nb_skipped=1,
        time_range=(0.0, 12.5),
        resource_range=(0, 3),
    )


def test_png_output_is_a_valid_image_of_the_figure_size(small_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "gantt.png"
    plot_gantt(small_csv, out, title="small run")
    assert out.read_bytes()[:8] == PNG_MAGIC
    image = matplotlib.image.imread(out)
    assert image.ndim == 3 and image.shape[2] in (3, 4)
    assert image.shape[1] == 1100  # 11 inches at 100 dpi
    assert image.shape[0] >= 400
    # The image is not blank: job colours fill part of it.
    assert len({tuple(p) for p in image.reshape(-1, image.shape[2])[::97].tolist()}) > 5


def test_svg_output_contains_axis_labels_and_title_as_text(small_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "gantt.svg"
    plot_gantt(small_csv, out, title="small run", nb_resources=8)
    svg = out.read_text(encoding="utf-8")
    assert svg.lstrip().startswith("<?xml")
    assert "<svg" in svg
    for text in ("time (s)", "resource id", "small run"):
        assert f">{text}<" in svg, text


def test_small_charts_label_each_rectangle_with_its_job_id(tmp_path: Path) -> None:
    jobs = write_jobs_csv(tmp_path / "jobs.csv", [row("alpha", "COMPLETED_SUCCESSFULLY", 0, 4, "0 2")])
    plot_gantt(jobs, tmp_path / "gantt.svg")
    assert (tmp_path / "gantt.svg").read_text(encoding="utf-8").count(">alpha<") == 2


def test_outputs_are_byte_identical_across_renders(small_csv: Path, tmp_path: Path) -> None:
    for suffix in (".svg", ".png"):
        a, b = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
        plot_gantt(small_csv, a)
        plot_gantt(small_csv, b)
        assert a.read_bytes() == b.read_bytes(), suffix


def test_no_pyplot_figure_is_left_open(small_csv: Path, tmp_path: Path) -> None:
    before = plt.get_fignums()
    plot_gantt(small_csv, tmp_path / "gantt.png")
    assert plt.get_fignums() == before


def test_killed_jobs_are_outlined_in_red(tmp_path: Path) -> None:
    """A lone killed job on a white background leaves pure-red outline pixels; a successful one does not."""
    killed = write_jobs_csv(tmp_path / "killed.csv", [row("1", "COMPLETED_WALLTIME_REACHED", 0, 10, "0")])
    ok = write_jobs_csv(tmp_path / "ok.csv", [row("1", "COMPLETED_SUCCESSFULLY", 0, 10, "0")])

    def red_pixels(csv_path: Path) -> int:
        out = csv_path.with_suffix(".png")
        plot_gantt(csv_path, out)
        image = matplotlib.image.imread(out)
        r, g, b = image[..., 0], image[..., 1], image[..., 2]
        return int(((r > 0.9) & (g < 0.2) & (b < 0.2)).sum())

    assert red_pixels(killed) > 100
    assert red_pixels(ok) == 0


def test_a_real_run_is_drawn_with_every_started_job(tmp_path: Path) -> None:
    platform = Platform([Node(i, f"h{i}") for i in range(4)])
    jobs = [Job(str(i), float(i), 1 + i % 3, Delay(5.0 + i), 4.0 + 2 * (i % 2)) for i in range(12)]
    jobs.append(Job("big", 3.0, 9, Delay(1.0), None))  # too big for the platform: rejected
    simulate(platform, Workload.from_jobs(jobs), create_policy("easy"), tmp_path)
    summary = plot_gantt(tmp_path / "jobs.csv", tmp_path / "gantt.svg", nb_resources=4)
    assert summary.nb_jobs == 12
    assert summary.nb_skipped == 1
    assert summary.nb_killed == 12  # run time 5 + i reaches the walltime (4 or 6) for every job (`1`: 6 == 6)
    assert summary.resource_range is not None and summary.resource_range[0] >= 0
    assert summary.resource_range[1] <= 3


def test_gzipped_jobs_csv_is_read(small_csv: Path, tmp_path: Path) -> None:
    packed = tmp_path / "jobs.csv.gz"
    packed.write_bytes(gzip.compress(small_csv.read_bytes(), mtime=0))
    assert plot_gantt(packed, tmp_path / "g.png").nb_rectangles == 5


def test_missing_column_is_an_input_error_naming_file_and_column(tmp_path: Path) -> None:
    columns = tuple(c for c in COLUMNS if c != "allocated_resources")
    bad = write_jobs_csv(tmp_path / "bad.csv", SMALL, columns)
    with pytest.raises(InputError) as caught:
        plot_gantt(bad, tmp_path / "gantt.png")
    assert caught.value.source == str(bad)
    assert str(bad) in str(caught.value)
    assert "'allocated_resources'" in str(caught.value)
    assert not (tmp_path / "gantt.png").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param("", "the file is empty", id="empty"),
        pytest.param(",".join(COLUMNS) + "\n1,w0,p,0,1,-1,1,COMPLETED_SUCCESSFULLY,zero,1,1,0,1,1,0,-1,\n",
                     "line 2, field 'starting_time': 'zero' is not a number", id="bad-number"),
        pytest.param(",".join(COLUMNS) + "\n1,w0,p,0,1,-1,1,COMPLETED_SUCCESSFULLY,0,1,1,0,1,1,0-x,-1,\n",
                     "line 2, field 'allocated_resources'", id="bad-allocation"),
        pytest.param(",".join(COLUMNS) + "\n1,w0,p,0,1,-1,1,COMPLETED_SUCCESSFULLY,5,1,4,0,1,1,0,-1,\n",
                     "line 2: finish_time 4 is before starting_time 5", id="finish-before-start"),
        pytest.param(",".join(COLUMNS) + "\n1,w0,p\n", "line 2: expected 17 fields, got 3", id="short-row"),
    ],
)
def test_malformed_jobs_csv_is_an_input_error_naming_where(tmp_path: Path, content: str, message: str) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        plot_gantt(bad, tmp_path / "gantt.png")


def test_allocation_outside_the_platform_is_refused(small_csv: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"line 2, field 'allocated_resources': resource 3 is outside .* 0\.\.2"):
        plot_gantt(small_csv, tmp_path / "gantt.png", nb_resources=3)


def test_unsupported_extension_is_refused(small_csv: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"unsupported image format '\.pdf'; expected one of \.png, \.svg"):
        plot_gantt(small_csv, tmp_path / "gantt.pdf")


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nothing\.csv"):
        plot_gantt(tmp_path / "nothing.csv", tmp_path / "gantt.png")


def test_a_csv_without_any_run_job_gives_an_empty_chart(tmp_path: Path) -> None:
    only_rejected = write_jobs_csv(tmp_path / "jobs.csv", [row("1", "REJECTED", -1, -1, "")])
    summary = plot_gantt(only_rejected, tmp_path / "gantt.png")
    assert summary == GanttSummary(0, 0, 0, 1, None, None)
    assert (tmp_path / "gantt.png").read_bytes()[:8] == PNG_MAGIC


def test_large_files_render_quickly(tmp_path: Path) -> None:
    """50 000 jobs (100 000 rectangles) on 256 units: streamed and drawn as collections in a few seconds."""
    path = tmp_path / "big.csv"
    with path.open("w", encoding="utf-8") as f:
        f.write(",".join(COLUMNS) + "\n")
        for i in range(50_000):
            lo = (i * 7) % 250
            start = i * 0.5
            state = "COMPLETED_KILLED" if i % 10 == 0 else "COMPLETED_SUCCESSFULLY"
            f.write(f"{i},w0,p,0,3,-1,1,{state},{start},3,{start + 3},0,3,1,{lo}-{lo + 1} {lo + 4},-1,\n")
    started = time.perf_counter()
    summary = plot_gantt(path, tmp_path / "big.png", nb_resources=256)
    elapsed = time.perf_counter() - started
    assert (summary.nb_jobs, summary.nb_rectangles, summary.nb_killed) == (50_000, 100_000, 5_000)
    assert summary.time_range == (0.0, 49_999 * 0.5 + 3)
    assert elapsed < 10, f"{elapsed:.1f} s"
