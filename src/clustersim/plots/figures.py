"""Figures without pyplot: each plot owns its `Figure` (Agg), so nothing global is touched or leaked.

Saved as PNG and SVG side by side. SVG output is made reproducible (no date, fixed id salt) so that the same
data gives the same file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

FORMATS = ("png", "svg")


def new_figure(nrows: int = 1, ncols: int = 1, *, width: float = 6.4, height: float = 4.0) -> tuple[Figure, list[Axes]]:
    """A figure on an Agg canvas with a grid of axes, returned flat in reading order."""
    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    grid = figure.subplots(nrows, ncols, squeeze=False)
    return figure, [ax for row in grid for ax in row]


def save_figure(figure: Figure, stem: Path, formats: Sequence[str] = FORMATS, dpi: int = 120) -> list[Path]:
    """Write `stem.png`, `stem.svg` (or the given formats) and return their paths."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = []
    for extension in formats:
        path = stem.with_name(f"{stem.name}.{extension}")
        with matplotlib.rc_context({"svg.hashsalt": "clustersim"}):
            metadata = {"Date": None} if extension == "svg" else {"Software": None} if extension == "png" else None
            figure.savefig(path, format=extension, dpi=dpi, metadata=metadata)
        paths.append(path)
    return paths
