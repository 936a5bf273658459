"""The viewer's page: Bokeh figures over one or more runs, written as one self-contained HTML file.

Why Bokeh: it is made for large interactive data in the browser (a spatial index for hit-testing, typed-array
columns sent base64-encoded, zoom, pan, hover and tap tools, linked ranges, JS callbacks without a server), it is
well kept (NumFOCUS, releases every few months), and its Python package carries its JavaScript, which the page
inlines: nothing is fetched at run time. Every figure of a page shares one time axis, so zooming one zooms all.

The Gantt chart has one rectangle per contiguous interval of a job's allocation; when the time window in view
holds more than `DETAIL_LIMIT` jobs it shows instead an occupancy image (share of each unit busy per time bin),
which is what a screen can show of hundreds of thousands of jobs; zooming in brings the rectangles back.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence

import numpy as np
from bokeh.document import Document
from bokeh.embed import file_html
from bokeh.layouts import column, row
from bokeh.models import (
    ColorBar,
    ColumnDataSource,
    CustomJS,
    CustomJSHover,
    CustomJSTickFormatter,
    Div,
    FixedTicker,
    HoverTool,
    LinearColorMapper,
    LogColorMapper,
    Range1d,
    Select,
    TapTool,
)
from bokeh.palettes import Category10_10, Category20_20, Greys256, Viridis256
from bokeh.plotting import figure
from bokeh.resources import Resources
from bokeh.util import serialization

from clustersim.view.runs import STATES, Jobs, Run, Table
from clustersim.view.series import occupancy_image, step_series

DETAIL_LIMIT = 20_000
"""Most jobs drawn as rectangles; a wider window shows the occupancy image."""

IMAGE_BINS = 2000
"""Time bins of the occupancy image (about one per screen pixel)."""

STATE_COLOURS = ("#4daf4a", "#ff7f00", "#e41a1c", "#984ea3", "#999999", "#377eb8", "#a65628")
WIDTH_MODE = "stretch_width"
TOOLS = "xpan,xwheel_zoom,box_zoom,reset,save"

TIME_FORMAT = """
const t = tick, a = Math.abs(t);
if (a < 600) return t.toFixed(a < 10 && t % 1 ? 1 : 0) + " s";
const d = Math.floor(t / 86400), h = Math.floor((t % 86400) / 3600), m = Math.floor((t % 3600) / 60);
const hm = String(h).padStart(2, "0") + ":" + String(m).padStart(2, "0");
return d ? d + "d " + hm : hm;
"""

SWITCH_VIEW = """
// jobs overlapping [x0, x1]: started before x1 minus finished before x0 (binary search in sorted arrays)
function below(a, v) { let lo = 0, hi = a.length; while (lo < hi) { const m = (lo + hi) >> 1;
  if (a[m] < v) lo = m + 1; else hi = m; } return lo; }
const s = bounds.data.start, f = bounds.data.finish;
const n = below(s, xr.end) - below(f, xr.start);
const detail = n <= limit;
if (rects.visible != detail) { rects.visible = detail; image.visible = !detail; }
note.text = detail ? n + " jobs in view" : n + " jobs in view: occupancy shown, zoom in below " + limit +
  " to see jobs";
"""

RECOLOUR = """
const choice = select.value;
rects.glyph.fill_color = {field: choice === "size" ? "units" : choice, transform: mappers[choice]};
"""

SELECT_SAME_JOB = """
// a job tapped in one run selects the same job's rectangles in the other
const picked = new Set(src.selected.indices.map(i => src.data.job_id[i]));
const out = [];
const ids = dst.data.job_id;
for (let i = 0; i < ids.length; i++) if (picked.has(ids[i])) out.push(i);
dst.selected.indices = out;
"""

SUBMITTED = """
// the submission time and the wait it implies (start - submit), so the page need not carry a wait column
const wait = source.data.left[special_vars.index] - value;
const f = v => v.toLocaleString("en", {maximumFractionDigits: 2});
return f(value) + " s (waited " + f(wait) + " s)";
"""

READY = "window.clustersimViewer = {ready: performance.now()};"


def build_page(runs: Sequence[Run], detail_limit: int = DETAIL_LIMIT) -> str:
    """The whole page as HTML text (Bokeh's JavaScript inlined)."""
    # Bokeh numbers its models from a process-wide counter: start it afresh so a page's bytes do not depend on
    # what was built before it in the same process (its element UUIDs are renumbered below)
    with serialization._simple_id_lock:
        serialization._simple_id = 1000
    document = Document()
    document.add_root(layout(runs, detail_limit))
    document.js_on_event("document_ready", CustomJS(code=READY))
    resources = Resources(mode="inline")  # bokeh drops the components the page does not use
    title = "clustersim: " + " vs ".join(run.name for run in runs)
    html: str = file_html(document, resources, title=title)
    return _stable_ids(html)


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _stable_ids(html: str) -> str:
    """Bokeh names the page's elements with random UUIDs: number them in order instead, so the same runs give
    the same bytes (each UUID is replaced everywhere it occurs, keeping every reference intact)."""
    names: dict[str, str] = {}
    return UUID.sub(lambda m: names.setdefault(m.group(), f"clustersim-{len(names) + 1}"), html)


def layout(runs: Sequence[Run], detail_limit: int = DETAIL_LIMIT) -> column:
    t0, t1 = _time_span(runs)
    x_range = Range1d(t0, t1, name="time", bounds=(t0 - 0.05 * (t1 - t0 or 1), t1 + 0.05 * (t1 - t0 or 1)))
    parts: list[object] = [Div(text=f"<h2>clustersim: {' vs '.join(r.name for r in runs)}</h2>")]
    gantts: list[ColumnDataSource] = []
    for run in runs:
        parts.append(Div(text=f"<h3>{run.name}</h3><p>{run.directory} — {', '.join(run.kinds)}</p>"))
        if run.jobs is not None and run.jobs.rect_job.size:
            other = runs[1] if run is runs[0] and len(runs) > 1 else runs[0] if run is not runs[0] else None
            section, source = _gantt(run, run.jobs, x_range, other.jobs if other else None, detail_limit)
            parts.extend(section)
            gantts.append(source)
            parts.extend(_job_series(run, run.jobs, x_range))
        parts.extend(_energy(run, x_range))
        parts.extend(_autoscaling(run, x_range))
        parts.extend(_kubernetes(run, x_range))
        parts.extend(_architectures(run, x_range))
    if len(gantts) >= 2:
        for src, dst in ((gantts[0], gantts[1]), (gantts[1], gantts[0])):
            src.selected.js_on_change("indices", CustomJS(args={"src": src, "dst": dst}, code=SELECT_SAME_JOB))
    if len(runs) >= 2 and runs[0].jobs is not None and runs[1].jobs is not None:
        parts.extend(_start_difference(runs[0], runs[1]))
    return column(*parts, sizing_mode=WIDTH_MODE)


def _time_span(runs: Sequence[Run]) -> tuple[float, float]:
    lows, highs = [], []
    for run in runs:
        if run.jobs is not None and run.jobs.submit.size:
            lows.append(float(np.nanmin(run.jobs.submit)))
            highs.append(float(np.nanmax(np.r_[run.jobs.finish, run.jobs.submit])))
        for table in run.tables.values():
            if table.has("time") and table.nb_rows:
                times = table.numbers("time")
                lows.append(float(np.nanmin(times)))
                highs.append(float(np.nanmax(times)))
    if not lows:
        return 0.0, 1.0
    low, high = min(lows), max(highs)
    return low, high if high > low else low + 1


def _time_figure(title: str, x_range: Range1d, y_label: str, height: int = 220) -> figure:
    fig = figure(title=title, x_range=x_range, height=height, sizing_mode=WIDTH_MODE, tools=TOOLS,
                 active_scroll="xwheel_zoom", y_axis_label=y_label)
    fig.xaxis.formatter = CustomJSTickFormatter(code=TIME_FORMAT)
    fig.toolbar.logo = None
    return fig


def _names_hover(names: Sequence[str]) -> CustomJSHover:
    return CustomJSHover(code=f"const n = {json.dumps(list(names))}; return n[value] ?? String(value);")


def _gantt(run: Run, jobs: Jobs, x_range: Range1d, other: Jobs | None,
           detail_limit: int) -> tuple[list[object], ColumnDataSource]:
    """The Gantt chart (rectangles and occupancy image), its colour choice and its job counter."""
    k = jobs.rect_job
    data: dict[str, object] = {
        "left": jobs.start[k], "right": jobs.finish[k],
        "bottom": jobs.rect_lo.astype(np.float32), "top": (jobs.rect_hi + 1).astype(np.float32),
        "job_id": _ids(jobs.ids)[k], "submit": jobs.submit[k], "units": jobs.units[k].astype(np.float32),
        "state": jobs.state[k],
    }
    mappers = {
        "state": LinearColorMapper(palette=list(STATE_COLOURS), low=-0.5, high=len(STATE_COLOURS) - 0.5),
        "size": LogColorMapper(palette=Viridis256, low=1, high=max(2.0, float(np.nanmax(jobs.units)))),
    }
    choices = ["state", "size"]
    tooltips = [("job", "@job_id"), ("state", "@state{custom}"), ("submitted", "@submit{custom}"),
                ("started", "@left{0,0.[00]} s"), ("finished", "@right{0,0.[00]} s"), ("units", "@units"),
                ("rows", "@bottom{0} to @top{0}")]
    formatters: dict[str, object] = {"@state": _names_hover(STATES)}
    if jobs.user is not None:
        users = sorted(set(jobs.user))
        code = {name: i for i, name in enumerate(users)}
        data["user"] = np.array([code[u] for u in jobs.user], np.int32)[k]
        palette = [Category20_20[i % 20] for i in range(max(len(users), 2))]
        mappers["user"] = LinearColorMapper(palette=palette, low=-0.5, high=len(palette) - 0.5)
        choices.insert(1, "user")
        tooltips.insert(2, ("user", "@user{custom}"))
        formatters["@user"] = _names_hover(users)
    if other is not None:
        data["other_start"], data["start_difference"] = _other_starts(jobs, other, k)
        tooltips += [("start in the other run", "@other_start{0,0.[00]} s"),
                     ("start difference", "@start_difference{+0,0.[00]} s")]
    source = ColumnDataSource(data=data)
    formatters["@submit"] = CustomJSHover(args={"source": source}, code=SUBMITTED)
    nb_rows = max(run.nb_units, jobs.nb_units, 1)
    fig = _time_figure(f"Gantt chart: {jobs.rect_job.size:,} rectangles, {np.count_nonzero(jobs.start >= 0):,} jobs "
                       f"on {nb_rows} units", x_range, "unit", height=520)
    fig.y_range = Range1d(0, nb_rows, bounds=(0, nb_rows))
    fig.add_tools(TapTool())
    rects = fig.quad(left="left", right="right", bottom="bottom", top="top", source=source,
                     fill_color={"field": "state", "transform": mappers["state"]}, line_color=None,
                     selection_line_color="black", nonselection_fill_alpha=0.35, name="jobs")
    t0, t1 = x_range.start, x_range.end
    starts = jobs.start[~np.isnan(jobs.start)]
    finishes = jobs.finish[~np.isnan(jobs.finish)]
    image_data = occupancy_image(jobs.start[k], jobs.finish[k], jobs.rect_lo, jobs.rect_hi, nb_rows, t0, t1,
                                 IMAGE_BINS)
    # one byte per cell (share x 250): a quarter of the floats' size, finer than the palette's 216 greys
    shares = np.rint(np.clip(image_data, 0, 1) * 250).astype(np.uint8)
    occupancy = LinearColorMapper(palette=list(reversed(Greys256))[40:], low=0, high=250)
    image = fig.image(image=[shares], x=t0, y=0, dw=t1 - t0, dh=nb_rows, color_mapper=occupancy,
                      name="occupancy")
    fig.add_layout(ColorBar(color_mapper=occupancy, ticker=FixedTicker(ticks=[0, 125, 250]), title="busy share",
                            width=10, major_label_overrides={0: "0", 125: "0.5", 250: "1"}), "right")
    fig.add_tools(HoverTool(renderers=[rects], tooltips=tooltips, formatters=formatters))
    fig.add_tools(HoverTool(renderers=[image], tooltips=[("time", "$x{0,0} s"), ("unit", "$y{0}"),
                                                         ("busy share (of 250)", "@image")]))
    if run.unit_labels is not None and nb_rows <= 64:
        fig.yaxis.major_label_overrides = {i: f"{label} ({i})" for i, label in enumerate(run.unit_labels)}
    bounds = ColumnDataSource(data={"start": np.sort(starts), "finish": np.sort(np.r_[finishes, np.full(
        starts.size - finishes.size, np.inf)])})
    detail = starts.size <= detail_limit
    rects.visible, image.visible = detail, not detail
    note = Div(name="note", text=f"{starts.size} jobs in view" + ("" if detail else ": occupancy shown, zoom in"))
    switch = CustomJS(args={"bounds": bounds, "xr": x_range, "rects": rects, "image": image, "note": note,
                            "limit": detail_limit}, code=SWITCH_VIEW)
    x_range.js_on_change("start", switch)
    x_range.js_on_change("end", switch)
    select = Select(title="colour by", value="state", options=choices, width=160)
    select.js_on_change("value", CustomJS(args={"select": select, "rects": rects, "mappers": mappers}, code=RECOLOUR))
    legend = " ".join(f'<span style="color:{c}">&#9632;</span> {s.lower().replace("_", " ")}'
                      for c, s in zip(STATE_COLOURS, STATES, strict=True))
    return [row(select, Div(text=f"<small>state colours: {legend}</small>"), note), fig], source


def _ids(ids: list[str]) -> np.ndarray:
    """Job ids as int32 when they all are integers (compact), else as strings."""
    try:
        values = np.array([int(i) for i in ids], np.int64)
    except ValueError:
        return np.array(ids, dtype=object)
    if values.size and (values.min() < -(2**31) or values.max() >= 2**31):
        return np.array(ids, dtype=object)
    return values.astype(np.int32)


def _other_starts(jobs: Jobs, other: Jobs, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    where = {job: row for row, job in enumerate(other.ids)}
    rows = np.array([where.get(job, -1) for job in jobs.ids])
    start = np.where(rows >= 0, other.start[np.maximum(rows, 0)], math.nan)
    return start[k], (start - jobs.start)[k]


def _step_line(fig: figure, x: np.ndarray, y: np.ndarray, label: str, colour: str) -> None:
    fig.step(x, y, mode="after", legend_label=label, line_color=colour, line_width=1.5)


def _job_series(run: Run, jobs: Jobs, x_range: Range1d) -> list[object]:
    """Utilisation, queue length and the units waiting jobs ask for, from jobs.csv."""
    ran = ~np.isnan(jobs.start)
    end = float(x_range.end)
    units = max(run.nb_units, 1)
    # units actually allocated (the rectangles), not asked: pods ask one "unit" each yet share their node
    k = jobs.rect_job
    width = (jobs.rect_hi - jobs.rect_lo + 1).astype(float)
    x, busy = step_series(np.r_[jobs.start[k], jobs.finish[k]], np.r_[width, -width], end)
    if busy.max(initial=0) <= units * (1 + 1e-9):  # binned means carry rounding
        util = _time_figure(f"utilisation ({units} units)", x_range, "share of units busy")
        _step_line(util, x, busy / units, "busy share", Category10_10[0])
    else:  # pods with requests share their nodes: count them instead
        util = _time_figure(f"running pods (sharing {units} nodes by their requests)", x_range, "pods")
        _step_line(util, x, busy, "running pods", Category10_10[0])
    waiting_end = np.where(ran, jobs.start, jobs.finish)
    waiting_end = np.where(np.isnan(waiting_end), jobs.submit, waiting_end)  # rejected: never waits
    times = np.r_[jobs.submit, waiting_end]
    qx, queue = step_series(times, np.r_[np.ones(jobs.submit.size), -np.ones(jobs.submit.size)], end)
    wx, wanted = step_series(times, np.r_[jobs.units, -jobs.units], end)
    queue_fig = _time_figure("queue: jobs waiting, and the units they ask for", x_range, "jobs / units")
    _step_line(queue_fig, qx, queue, "jobs waiting (queue length)", Category10_10[1])
    _step_line(queue_fig, wx, wanted, "units asked by waiting jobs", Category10_10[2])
    for fig in (util, queue_fig):
        fig.legend.location = "top_left"
        fig.legend.click_policy = "hide"
        fig.add_tools(HoverTool(tooltips=[("time", "$x{0,0} s"), ("value", "$y{0,0.00}")], mode="vline"))
    return [util, queue_fig]


def _lines(table: Table, x_range: Range1d, title: str, y_label: str, columns: Sequence[tuple[str, str]],
           stacked: bool = False, step: str | None = None) -> figure | None:
    """One line (or stacked area) per column present in the table; None if none is.

    `step` draws values that hold between rows: "after" (a value holds from its row to the next, as
    machine_states.csv's counts) or "before" (from the previous row to its own, as a mean since the previous
    event); rows without a value are dropped, not drawn as gaps.
    """
    present = [(name, label) for name, label in columns if table.has(name)]
    if not present or not table.has("time"):
        return None
    fig = _time_figure(title, x_range, y_label)
    x = table.numbers("time")
    if stacked:
        values = {name: np.nan_to_num(table.numbers(name)) for name, _ in present}
        if step is not None and x.size:
            x, values = _stepped(x, values, step)
        colours = [Category10_10[i % 10] for i in range(len(present))]
        fig.varea_stack([n for n, _ in present], x="x", source=ColumnDataSource({"x": x, **values}), color=colours,
                        legend_label=[label for _, label in present])
    else:
        for i, (name, label) in enumerate(present):
            y = table.numbers(name)
            keep = ~np.isnan(y)
            colour = Category10_10[i % 10]
            if step is None:
                fig.line(x, y, legend_label=label, line_color=colour, line_width=1.5)
            else:
                fig.step(x[keep], y[keep], mode=step, legend_label=label, line_color=colour, line_width=1.5)
    fig.legend.location = "top_left"
    fig.legend.click_policy = "hide"
    fig.add_tools(HoverTool(tooltips=[("time", "$x{0,0} s"), ("value", "$y{0,0.000}")], mode="vline"))
    return fig


def _stepped(x: np.ndarray, values: dict[str, np.ndarray], step: str) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Points of a staircase: each x twice, so a stacked area keeps a value until the next row (or from the
    previous one) instead of sloping between rows."""
    xs = np.repeat(x, 2)[1:] if step == "after" else np.repeat(x, 2)[:-1]
    out = {name: (np.repeat(v, 2)[:-1] if step == "after" else np.repeat(v, 2)[1:]) for name, v in values.items()}
    return xs, out


def _present(*figures: figure | None) -> list[object]:
    return [fig for fig in figures if fig is not None]


def _energy(run: Run, x_range: Range1d) -> list[object]:
    states = run.tables.get("machine_states.csv")
    energy = run.tables.get("consumed_energy.csv")
    parts = []
    if states is not None:
        parts.append(_lines(states, x_range, "machine states", "machines", [
            ("nb_computing", "computing"), ("nb_idle", "idle"), ("nb_switching_on", "switching on"),
            ("nb_switching_off", "switching off"), ("nb_sleeping", "sleeping")], stacked=True, step="after"))
    if energy is not None:
        parts.append(_lines(energy, x_range, "power (mean since the previous event)", "W", [("epower", "power")],
                            step="before"))
    return _present(*parts)


def _autoscaling(run: Run, x_range: Range1d) -> list[object]:
    table = run.tables.get("timeseries.csv")
    if table is None:
        return []
    return _present(
        _lines(table, x_range, "replicas by state", "replicas", [
            ("replicas_ready", "ready"), ("replicas_unready", "unready"), ("replicas_starting", "starting"),
            ("replicas_pending", "pending"), ("replicas_terminating", "terminating")], stacked=True, step="after"),
        _lines(table, x_range, "replicas wanted", "replicas", [("desired_replicas", "HPA desired"),
                                                               ("vpa_evictions", "VPA evictions")]),
        _lines(table, x_range, "traffic", "requests/s", [("arrived_per_s", "arrived"),
                                                         ("completed_per_s", "completed"), ("failed_per_s", "failed")]),
        _lines(table, x_range, "latency", "s", [("latency_p50", "p50"), ("latency_p95", "p95"),
                                                ("latency_p99", "p99")]),
        _lines(table, x_range, "cpu utilisation", "% of requests", [("utilisation", "true"),
                                                                    ("hpa_metric", "seen by the HPA")]),
        _lines(table, x_range, "requests of a replica (VPA)", "millicores / MiB", [
            ("cpu_request_m", "cpu request (m)"), ("cpu_target_m", "cpu target (m)"),
            ("memory_request_mi", "memory request (MiB)"), ("memory_target_mi", "memory target (MiB)")]),
    )


def _kubernetes(run: Run, x_range: Range1d) -> list[object]:
    pods = run.tables.get("pods.csv")
    if pods is None or not pods.has("node", "starting_time", "finish_time"):
        return []
    nodes = pods.text("node")
    start, finish = pods.numbers("starting_time"), pods.numbers("finish_time")
    fig = _time_figure("pods running per node", x_range, "pods")
    names = sorted({n for n in nodes if n})
    end = float(x_range.end)
    for i, name in enumerate(names[:20]):
        mine = np.array([n == name for n in nodes]) & (start >= 0)
        x, y = step_series(np.r_[start[mine], finish[mine]], np.r_[np.ones(mine.sum()), -np.ones(mine.sum())], end)
        _step_line(fig, x, y, name, Category20_20[i % 20])
    fig.legend.location = "top_left"
    fig.legend.click_policy = "hide"
    fig.add_tools(HoverTool(tooltips=[("time", "$x{0,0} s"), ("pods", "$y{0}")]))
    return [fig]


def _architectures(run: Run, x_range: Range1d) -> list[object]:
    parts: list[object] = []
    utilisation = run.tables.get("utilisation.csv")
    if utilisation is not None:
        parts.extend(_present(_lines(utilisation, x_range, "cell utilisation", "share", [
            ("cpu", "cpu"), ("memory", "memory"), ("cpu_locked", "cpu held by offers"),
            ("memory_locked", "memory held by offers")])))
    schedulers = run.tables.get("schedulers.csv")
    if schedulers is not None and schedulers.has("scheduler", "busyness"):
        labels = [f"{a}: {s}" for a, s in zip(schedulers.text("architecture") if schedulers.has("architecture")
                                              else [""] * schedulers.nb_rows, schedulers.text("scheduler"),
                                              strict=True)]
        kinds = [k for k in ("busyness_useful", "busyness_wasted", "busyness_no_fit", "busyness_unfinished")
                 if schedulers.has(k)]
        data = {"path": labels, **{k: np.nan_to_num(schedulers.numbers(k)) for k in kinds}}
        busy = figure(title="schedulers' busyness (share of the run spent deciding)", y_range=labels,
                      height=60 + 28 * len(labels), sizing_mode=WIDTH_MODE, tools="hover,save",
                      tooltips=[("path", "@path"), *((k.removeprefix("busyness_"), f"@{k}{{0.0000}}") for k in kinds)])
        busy.hbar_stack(kinds, y="path", height=0.7, source=ColumnDataSource(data),
                        color=[Category10_10[i] for i in range(len(kinds))],
                        legend_label=[k.removeprefix("busyness_") for k in kinds])
        parts.append(busy)
        if schedulers.has("conflict_fraction"):
            conflicts = figure(title="conflicts per committed transaction", y_range=labels,
                               height=60 + 28 * len(labels), sizing_mode=WIDTH_MODE, tools="hover,save",
                               tooltips=[("path", "@path"), ("conflict fraction", "@x{0.0000}")])
            conflicts.hbar(y="path", right="x", height=0.7, source=ColumnDataSource(
                {"path": labels, "x": np.nan_to_num(schedulers.numbers("conflict_fraction"))}),
                color=Category10_10[3])
            parts.append(conflicts)
    return parts


def _start_difference(a: Run, b: Run) -> list[object]:
    """Each job present in both runs: its start in the second minus its start in the first."""
    assert a.jobs is not None and b.jobs is not None
    where = {job: row for row, job in enumerate(b.jobs.ids)}
    rows_a = np.array([i for i, job in enumerate(a.jobs.ids) if job in where], np.int64)
    rows_b = np.array([where[a.jobs.ids[i]] for i in rows_a], np.int64)
    if rows_a.size == 0:
        return [Div(text="<p>no job id is in both runs: nothing to compare</p>")]
    diff = b.jobs.start[rows_b] - a.jobs.start[rows_a]
    both = ~np.isnan(diff)
    ids = _ids(a.jobs.ids)[rows_a]
    fig = figure(title=f"start in {b.name} minus start in {a.name}, by submission time", height=300,
                 sizing_mode=WIDTH_MODE, tools="xpan,xwheel_zoom,box_zoom,reset,save,hover",
                 tooltips=[("job", "@job"), ("submitted", "@x{0,0} s"), ("difference", "@y{+0,0.[00]} s")],
                 y_axis_label="s")
    fig.xaxis.formatter = CustomJSTickFormatter(code=TIME_FORMAT)
    colour = np.where(diff[both] > 0, "#d62728", np.where(diff[both] < 0, "#2ca02c", "#7f7f7f"))
    fig.scatter(x="x", y="y", source=ColumnDataSource({"x": a.jobs.submit[rows_a][both], "y": diff[both],
                                                      "job": ids[both], "colour": colour}),
                color="colour", size=3, alpha=0.6)
    later = int(np.count_nonzero(diff[both] > 0))
    earlier = int(np.count_nonzero(diff[both] < 0))
    mean = float(np.mean(np.abs(diff[both]))) if both.any() else math.nan
    summary = Div(text=f"<h3>{a.name} vs {b.name}</h3><p>{rows_a.size:,} jobs in both runs; {int(both.sum()):,} "
                  f"started in both: {later:,} later in {b.name}, {earlier:,} earlier, "
                  f"{int(both.sum()) - later - earlier:,} at the same time; mean |difference| {mean:,.1f} s. "
                  f"Tap a job in either Gantt chart to select it in both.</p>")
    return [summary, fig]
