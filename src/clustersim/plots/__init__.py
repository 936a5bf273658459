"""Plots computed from a run's records, outside the core."""

from clustersim.plots.gantt import GanttSummary, plot_gantt

__all__ = ["GanttSummary", "plot_gantt"]
