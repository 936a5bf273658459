"""Writing Batsim workloads: SWF -> Batsim JSON -> reader gives the same jobs; profiles named and shared."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clustersim.errors import InputError
from clustersim.workload.batsim_json import read_batsim_workload
from clustersim.workload.batsim_writer import write_batsim_workload
from clustersim.workload.job import Job
from clustersim.workload.profiles import Composed, Delay, Parallel, ParallelHomogeneous
from clustersim.workload.stream import Workload
from clustersim.workload.swf import read_swf

SWF = """; MaxProcs: 16
; MaxNodes: 16
1 0 5 100 4 -1 -1 4 200 -1 1 3 2 -1 1 -1 -1 -1
2 10 5 -1 4 -1 -1 4 200 -1 1 3 2 -1 1 -1 -1 -1
3 10 5 50 -1 -1 -1 2 -1 -1 1 -1 -1 -1 -1 -1 -1 -1
4 20 5 300 1 -1 -1 1 200 -1 1 3 2 -1 1 -1 -1 -1
5 30 5 552.21 2 -1 -1 2 600 -1 1 3 2 -1 1 -1 -1 -1
6 30 5 100 16 -1 -1 16 100 -1 1 4 2 -1 2 -1 -1 -1
"""


def fields(jobs: Iterable[Job]) -> list[tuple[object, ...]]:
    """Jobs as comparable tuples (Job compares by identity)."""
    return [
        (
            j.id,
            j.submit_time,
            j.nb_res,
            j.profile,
            j.walltime,
            j.workload,
            j.profile_name,
            j.user,
            j.group,
            j.queue,
            dict(j.extra),
        )
        for j in jobs
    ]


def test_swf_to_batsim_json_and_back_gives_the_same_jobs(tmp_path: Path) -> None:
    (tmp_path / "trace.swf").write_text(SWF)
    source = read_swf(tmp_path / "trace.swf")
    written = write_batsim_workload(source, tmp_path / "out.json")
    assert written == 5
    assert source.skips.total_skipped == 1  # the skip report fills up while converting
    back = read_batsim_workload(tmp_path / "out.json")
    assert back.nb_res == 16
    assert fields(back.jobs) == fields(read_swf(tmp_path / "trace.swf").jobs)


def test_one_delay_profile_per_distinct_run_time(tmp_path: Path) -> None:
    (tmp_path / "trace.swf").write_text(SWF)
    write_batsim_workload(read_swf(tmp_path / "trace.swf"), tmp_path / "out.json")
    document = json.loads((tmp_path / "out.json").read_text())
    assert document["profiles"] == {
        "delay100": {"type": "delay", "delay": 100},
        "delay50": {"type": "delay", "delay": 50},
        "delay300": {"type": "delay", "delay": 300},
        "delay552.21": {"type": "delay", "delay": 552.21},
    }
    assert document["jobs"][1] == {"id": "3", "subtime": 10, "res": 2, "profile": "delay50", "walltime": -1}


def test_nb_res_argument_wins_and_else_the_largest_job_is_used(tmp_path: Path) -> None:
    jobs = [Job("1", 0.0, 3, Delay(1.0)), Job("2", 1.0, 5, Delay(1.0))]
    write_batsim_workload(Workload.from_jobs(jobs), tmp_path / "a.json", nb_res=64)
    assert json.loads((tmp_path / "a.json").read_text())["nb_res"] == 64
    write_batsim_workload(Workload.from_jobs(jobs), tmp_path / "b.json")
    assert json.loads((tmp_path / "b.json").read_text())["nb_res"] == 5


def test_every_profile_type_and_extra_fields_round_trip(tmp_path: Path) -> None:
    base = ParallelHomogeneous(1e9, 10.0)
    jobs = [
        Job("1", 0.0, 2, Delay(5.0), 10.0, profile_name="short", extra={"cpu": "500m", "memory": "1Gi"}),
        Job("2", 1.0, 2, base, None, profile_name="ph", user="bob"),
        Job("3", 2.0, 2, Parallel((1.0, 2.0)), None, profile_name="par"),
        Job("4", 3.0, 2, Composed((Delay(5.0), base), 3), None, profile_name="seq"),
        Job("5", 4.0, 1, Delay(7.0), None, workload="other", profile_name="short"),  # name taken: renamed
    ]
    write_batsim_workload(Workload.from_jobs(jobs), tmp_path / "w.json")
    back = list(read_batsim_workload(tmp_path / "w.json").jobs)
    assert [j.profile for j in back] == [j.profile for j in jobs]
    assert [j.key for j in back] == ["w0!1", "w0!2", "w0!3", "w0!4", "other!5"]
    assert back[0].extra == {"cpu": "500m", "memory": "1Gi"}
    assert back[1].user == "bob"
    assert back[4].profile_name == "short_2"


def test_gzip_output(tmp_path: Path) -> None:
    write_batsim_workload(Workload.from_jobs([Job("1", 0.0, 1, Delay(1.0))]), tmp_path / "w.json.gz")
    assert json.loads(gzip.decompress((tmp_path / "w.json.gz").read_bytes()))["jobs"][0]["id"] == "1"


def test_a_failed_conversion_leaves_no_file(tmp_path: Path) -> None:
    (tmp_path / "trace.swf").write_text(SWF + "7 0 1 2 3\n")
    with pytest.raises(InputError, match="line 9"):
        write_batsim_workload(read_swf(tmp_path / "trace.swf"), tmp_path / "out.json")
    assert list(tmp_path.iterdir()) == [tmp_path / "trace.swf"]


def test_an_unwritable_target_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot write the workload"):
        write_batsim_workload(Workload.from_jobs([]), tmp_path / "missing-dir" / "w.json")


def test_empty_workload(tmp_path: Path) -> None:
    assert write_batsim_workload(Workload.from_jobs([]), tmp_path / "w.json") == 0
    assert json.loads((tmp_path / "w.json").read_text())["jobs"] == []


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(
            st.integers(0, 1000),
            st.integers(1, 64),
            st.floats(0.001, 1e6, allow_nan=False),
            st.none() | st.floats(0.001, 1e6),
            st.sampled_from(["", "3", "alice"]),
        ),
        max_size=30,
    )
)
def test_any_delay_workload_round_trips(
    tmp_path: Path, rows: list[tuple[int, int, float, float | None, str]]
) -> None:
    jobs = [Job(str(i), float(t), n, Delay(r), w, user=u) for i, (t, n, r, w, u) in enumerate(rows)]
    write_batsim_workload(Workload.from_jobs(jobs), tmp_path / "w.json")
    back = read_batsim_workload(tmp_path / "w.json")
    expected = sorted(fields(jobs), key=lambda f: (f[1], int(str(f[0]))))
    assert [f[:6] + f[7:] for f in fields(back.jobs)] == [
        f[:6] + f[7:] for f in expected
    ]  # all but profile_name
