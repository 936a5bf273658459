"""Heavy dependencies are extras: without them a simulation runs, and the features that need them fail with an
error naming the extra to install."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from clustersim.cli import EXIT_BAD_INPUT, main
from clustersim.errors import MissingExtraError
from clustersim.experiments.results import Table, read_parquet_rows, write_table

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_without_pyarrow_campaign_tables_are_csv_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = Table(["run", "makespan"], [{"run": "a", "makespan": 1.5}])
    (tmp_path / "results.parquet").write_text("stale")
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow now raises ImportError
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    csv_path, parquet_path = write_table(table, tmp_path, "results")
    assert parquet_path is None and not (tmp_path / "results.parquet").exists()
    assert csv_path.read_text().splitlines() == ["run,makespan", "a,1.5"]
    with pytest.raises(MissingExtraError, match=r"pip install 'clustersim\[parquet\]'"):
        read_parquet_rows(tmp_path / "results.parquet")


def test_a_dask_campaign_without_dask_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(EXAMPLES / "trace.swf", tmp_path)
    (tmp_path / "experiment.yaml").write_text("base: {workload: trace.swf}\naxes: {policy: [fcfs]}\n")
    monkeypatch.setitem(sys.modules, "distributed", None)
    code = main(["sweep", str(tmp_path / "experiment.yaml"), "-o", str(tmp_path / "campaign"), "--dask", "local"])
    assert code == EXIT_BAD_INPUT
    assert ("running a campaign on Dask needs the optional package 'distributed', which is not installed: "
            "pip install 'clustersim[dask]'") in capsys.readouterr().err
