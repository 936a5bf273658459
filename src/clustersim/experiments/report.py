"""The HTML report of a campaign: its tables and figures on one self-contained page.

`report.html` embeds every figure as PNG (the page can be mailed alone) and links the SVG versions written
next to it in `report_figures/`, for papers. Figures:

- each key metric against each axis, with 95% confidence bands over seeds, one line per other configuration;
- waiting-time and bounded-slowdown CDFs, one line per configuration (seeds pooled);
- utilisation and queue length over time, and a Gantt chart when available, for a few representative runs.
"""

from __future__ import annotations

import base64
import html
import importlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from clustersim._version import __version__
from clustersim.experiments.campaign import write_tables
from clustersim.experiments.results import RUNS_DIR, Manifest, Table
from clustersim.plots.distributions import plot_distributions
from clustersim.plots.figures import save_figure
from clustersim.plots.metric_axis import plot_metric_vs_axis
from clustersim.plots.usage import plot_usage

KEY_METRICS = ("mean_waiting_time", "mean_bounded_slowdown", "utilisation", "makespan")
MAX_CDF_SERIES = 10
MAX_TIMELINES = 4
MAX_TABLE_ROWS = 1000


@dataclass(frozen=True)
class ReportFigure:
    title: str
    png: Path
    svg: Path | None


def write_report(
    directory: Path | str, output: Path | str | None = None, *, timelines: int = MAX_TIMELINES
) -> Path:
    """Write the campaign's report (default `DIR/report.html`) and return its path; tables are refreshed.

    `timelines` bounds the runs drawn over time (one per configuration, first seed): rendering is the slow part.
    """
    directory = Path(directory)
    output = Path(output) if output is not None else directory / "report.html"
    manifest = Manifest.read(directory)
    results, summary = write_tables(directory)
    figures_dir = output.parent / f"{output.stem}_figures"
    figures = _figures(directory, manifest, results, summary, figures_dir, timelines)
    output.write_text(_page(manifest, results, summary, figures, output.parent), encoding="utf-8")
    return output


def _figures(
    directory: Path, manifest: Manifest, results: Table, summary: Table, out: Path, timelines: int
) -> list[ReportFigure]:
    figures: list[ReportFigure] = []
    keys = [axis for axis in manifest.axes if axis != manifest.aggregate_over]
    metrics = [m for m in KEY_METRICS if f"{m}_mean" in summary.columns]
    for axis in keys:
        if len({json.dumps(row.get(axis), default=str) for row in summary.rows}) < 2 or not metrics:
            continue
        others = [k for k in keys if k != axis]
        figure = plot_metric_vs_axis(summary.rows, axis, metrics, others)
        figures.append(_save(figure, out / f"metrics_vs_{_safe(axis)}", f"Metrics against {axis} (95% CI over "
                             f"{manifest.aggregate_over})"))

    ok = [row for row in results.rows if row.get("status") == "ok"]
    if not ok:
        return figures
    groups = _groups(ok, keys)
    if len(groups) > MAX_CDF_SERIES and keys:
        groups = _groups(ok, keys[:1])
    series = {
        label: [directory / RUNS_DIR / str(r["run"]) / "jobs.csv" for r in rows] for label, rows in groups.items()
    }
    figures.append(_save(plot_distributions(series), out / "distributions", "Per-job distributions (seeds pooled)"))

    gantt = _gantt_function()
    for rows in list(_groups(ok, keys).values())[:timelines]:
        run = rows[0]
        jobs_csv = directory / RUNS_DIR / str(run["run"]) / "jobs.csv"
        size = run.get("nb_computing_machines")
        nb_resources = size if isinstance(size, int) else None
        stem = out / f"usage_{_safe(str(run['run']))}"
        figures.append(_save(plot_usage(jobs_csv, nb_resources=nb_resources, title=str(run["run"])), stem,
                             f"Utilisation and queue length: {run['run']}"))
        if gantt is not None:
            png = out / f"gantt_{_safe(str(run['run']))}.png"
            svg = png.with_suffix(".svg")
            try:
                gantt(jobs_csv, png, nb_resources=nb_resources, title=str(run["run"]))
                gantt(jobs_csv, svg, nb_resources=nb_resources, title=str(run["run"]))
            except Exception:  # the Gantt chart is a bonus: a report is still useful without it
                continue
            figures.append(ReportFigure(f"Gantt chart: {run['run']}", png, svg))
    return figures


def _gantt_function() -> Callable[..., object] | None:
    """The Gantt chart plotter of `clustersim.plots.gantt`, when that module is installed."""
    try:
        module = importlib.import_module("clustersim.plots.gantt")
    except ImportError:
        return None
    function = getattr(module, "plot_gantt", None)
    return function if callable(function) else None


def _groups(rows: Sequence[dict[str, object]], keys: Sequence[str]) -> dict[str, list[dict[str, object]]]:
    groups: dict[str, list[dict[str, object]]] = {}
    for row in rows:
        label = ", ".join(f"{k}={_text(row.get(k))}" for k in keys) or "all runs"
        groups.setdefault(label, []).append(row)
    return groups


def _save(figure: object, stem: Path, title: str) -> ReportFigure:
    from matplotlib.figure import Figure

    assert isinstance(figure, Figure)
    png, svg = save_figure(figure, stem)
    return ReportFigure(title, png, svg)


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "._-=" else "_" for c in text)[:80]


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | dict):
        return json.dumps(value, default=str)
    return str(value)


def _table_links(base: Path, stem: str) -> str:
    """Links to a campaign table, its Parquet copy only when written (the `parquet` extra is installed)."""
    links = f"<a href='{stem}.csv'>{stem}.csv</a>"
    return links + (f" (<a href='{stem}.parquet'>Parquet</a>)" if (base / f"{stem}.parquet").exists() else "")


def _table(columns: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_text(v))}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _page(manifest: Manifest, results: Table, summary: Table, figures: list[ReportFigure], base: Path) -> str:
    counts = {status: sum(1 for s in results.column("status") if s == status) for status in ("ok", "failed", "pending")}
    keys = [axis for axis in manifest.axes if axis != manifest.aggregate_over]
    metrics = [m for m in KEY_METRICS if f"{m}_mean" in summary.columns]
    summary_rows = [
        [*(row.get(k) for k in keys), row.get("runs"), row.get("failed"), *(_mean_ci(row, m) for m in metrics)]
        for row in summary.rows
    ]
    failed = [[row.get("run"), row.get("error")] for row in results.rows if row.get("status") == "failed"]
    shown = results.rows[:MAX_TABLE_ROWS]
    parts = [
        f"<h1>Campaign {html.escape(manifest.name)}</h1>",
        f"<p>{len(results.rows)} runs: {counts['ok']} ok, {counts['failed']} failed, {counts['pending']} pending. "
        f"Axes: {html.escape(', '.join(manifest.axes) or 'none')}; averages over "
        f"<code>{html.escape(manifest.aggregate_over)}</code> with 95% Student-t confidence intervals. "
        f"Tables: {_table_links(base, 'results')}, {_table_links(base, 'summary')}.</p>",
    ]
    if failed:
        parts += ["<h2>Failed runs</h2>", _table(["run", "error"], failed)]
    parts += [
        "<h2>Summary</h2>",
        _table([*keys, "runs", "failed", *(f"{m} (mean ± 95% CI)" for m in metrics)], summary_rows),
        "<h2>Figures</h2>",
    ]
    for figure in figures:
        data = base64.b64encode(figure.png.read_bytes()).decode("ascii")
        link = f" (<a href='{html.escape(_relative(figure.svg, base))}'>SVG</a>)" if figure.svg else ""
        parts.append(
            f"<figure><img alt='{html.escape(figure.title)}' src='data:image/png;base64,{data}'>"
            f"<figcaption>{html.escape(figure.title)}{link}</figcaption></figure>"
        )
    more = f" (first {MAX_TABLE_ROWS} of {len(results.rows)})" if len(results.rows) > MAX_TABLE_ROWS else ""
    parts += [
        f"<details><summary>All runs{more}</summary>",
        _table(results.columns, [[row.get(c) for c in results.columns] for row in shown]),
        "</details>",
        f"<footer>clustersim {html.escape(__version__)}</footer>",
    ]
    return _HTML.format(title=html.escape(manifest.name), body="\n".join(parts))


def _mean_ci(row: dict[str, object], metric: str) -> str:
    mean, half = row.get(f"{metric}_mean"), row.get(f"{metric}_ci95")
    if not isinstance(mean, int | float):
        return ""
    return f"{mean:.4g} ± {half:.2g}" if isinstance(half, int | float) else f"{mean:.4g}"


def _relative(path: Path, base: Path) -> str:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return path.as_posix()


_HTML = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}: clustersim campaign</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; padding: 0 1em; }}
table {{ border-collapse: collapse; font-size: 0.85em; margin: 1em 0; }}
th, td {{ border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: right; }}
th {{ background: #f0f0f0; }}
figure {{ margin: 1.5em 0; }} img {{ max-width: 100%; }}
details {{ overflow-x: auto; }}
</style></head>
<body>
{body}
</body></html>
"""
