"""Campaigns: many runs described by one experiment file, executed locally or on Dask, summarised.

    experiment = load_experiment("experiment.yaml", strict=True)
    result = run_campaign(experiment, "out", LocalBackend())   # or DaskBackend("tcp://scheduler:8786")
    write_report("out")                                        # from clustersim.experiments.report

See docs/experiments.md for the file format and the outputs. The report (and matplotlib) is not imported
here: workers import this package to run simulations and should not pay for plotting.
"""

from clustersim.experiments.backends import Backend, DaskBackend, LocalBackend
from clustersim.experiments.campaign import CampaignResult, run_campaign, write_tables
from clustersim.experiments.config import RunConfig, load_run_config
from clustersim.experiments.spec import Experiment, PlannedRun, load_experiment, parse_experiment

__all__ = [
    "Backend",
    "CampaignResult",
    "DaskBackend",
    "Experiment",
    "LocalBackend",
    "PlannedRun",
    "RunConfig",
    "load_experiment",
    "load_run_config",
    "parse_experiment",
    "run_campaign",
    "write_tables",
]
