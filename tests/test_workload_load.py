"""Recognising workload formats by content and name."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from clustersim.errors import InputError
from clustersim.workload.load import load_workload, workload_format

SWF_LINE = "1 0 5 100 4 -1 -1 4 200 -1 1 3 2 -1 1 -1 -1 -1\n"
JSON = json.dumps(
    {
        "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "p"}],
        "profiles": {"p": {"type": "delay", "delay": 1}},
    }
)


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("trace.swf", "; MaxProcs: 4\n" + SWF_LINE, "swf"),
        ("trace.txt", SWF_LINE, "swf"),
        ("anything", "; header only\n", "swf"),
        ("empty.swf", "", "swf"),
        ("empty.swf.gz", "", "swf"),
        ("w.json", JSON, "batsim-json"),
        ("w.data", "\n  " + JSON, "batsim-json"),
        ("empty.json", "", "batsim-json"),
    ],
)
def test_format_from_content_then_name(tmp_path: Path, name: str, content: str, expected: str) -> None:
    path = tmp_path / name
    path.write_text(content)
    assert workload_format(path) == expected


def test_gzipped_content_is_looked_into(tmp_path: Path) -> None:
    swf, batsim = tmp_path / "a.gz", tmp_path / "b.gz"
    swf.write_bytes(gzip.compress(SWF_LINE.encode()))
    batsim.write_bytes(gzip.compress(JSON.encode()))
    assert workload_format(swf) == "swf"
    assert workload_format(batsim) == "batsim-json"
    assert [j.id for j in load_workload(batsim).jobs] == ["1"]


def test_unknown_format_lists_the_supported_ones(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello world\n")
    with pytest.raises(
        InputError, match=r"notes.txt: unrecognised workload format; supported: SWF .*Batsim JSON"
    ):
        load_workload(path)


def test_swf_options_are_passed_on(tmp_path: Path) -> None:
    path = tmp_path / "t.swf"
    path.write_text(SWF_LINE)
    (job,) = load_workload(path, name="x", walltime="exact", processors="requested").jobs
    assert (job.workload, job.walltime, job.nb_res) == ("x", 100.0, 4)


def test_swf_options_on_a_json_workload_are_an_error(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text(JSON)
    with pytest.raises(InputError, match="'walltime' option applies to SWF traces only"):
        load_workload(path, walltime="exact")


def test_default_swf_options_are_accepted_for_a_json_workload(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text(JSON)
    assert len(list(load_workload(path, processors="allocated", walltime="requested").jobs)) == 1


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        load_workload(tmp_path / "nope.swf")
