"""The Batsim workload reader: profiles, ids, order, extra fields, and errors that name the field path."""

from __future__ import annotations

import contextlib
import gzip
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clustersim.errors import InputError
from clustersim.workload.batsim_json import parse_batsim_workload, read_batsim_workload
from clustersim.workload.profiles import Composed, Delay, Parallel, ParallelHomogeneous


def write(tmp_path: Path, document: object, name: str = "workload.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document, indent=2))
    return path


def workload(
    jobs: list[dict[str, object]], profiles: dict[str, object] | None = None, **top: object
) -> dict[str, object]:
    return {"nb_res": 4, **top, "jobs": jobs, "profiles": profiles or {"p1": {"type": "delay", "delay": 10}}}


def job(
    job_id: object = 1, subtime: object = 0, res: object = 1, profile: object = "p1", **more: object
) -> dict[str, object]:
    return {"id": job_id, "subtime": subtime, "res": res, "profile": profile, **more}


def read(tmp_path: Path, document: object, name: str = "w0") -> list:  # type: ignore[type-arg]
    return list(read_batsim_workload(write(tmp_path, document), name=name).jobs)


def error_of(tmp_path: Path, document: object) -> InputError:
    with pytest.raises(InputError) as error:
        read(tmp_path, document)
    return error.value


def test_all_profile_types(tmp_path: Path) -> None:
    profiles = {
        "p1": {"type": "delay", "delay": 10},
        "p2": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0},
        "p3": {"type": "parallel", "cpu": [1e9, 2e9], "com": [0, 1, 1, 0]},
        "p4": {"type": "composed", "repeat": 2, "seq": ["p1", "p2"]},
        "p5": {"type": "parallel_homogeneous_total", "cpu": 8e9},
    }
    jobs = [job(i, i, 4 if name == "p5" else 2, name) for i, name in enumerate(profiles, start=1)]
    read_jobs = read(tmp_path, workload(jobs, profiles))
    assert [j.profile for j in read_jobs] == [
        Delay(10.0),
        ParallelHomogeneous(1e9, 0.0),
        Parallel((1e9, 2e9), (0.0, 1.0, 1.0, 0.0)),
        Composed((Delay(10.0), ParallelHomogeneous(1e9, 0.0)), 2),
        ParallelHomogeneous(2e9, 0.0),  # the total shared among the job's 4 units
    ]
    assert [j.profile_name for j in read_jobs] == ["p1", "p2", "p3", "p4", "p5"]


def test_batsim_1_profile_type_names_are_accepted(tmp_path: Path) -> None:
    profiles = {"a": {"type": "msg_par_hg", "cpu": 5, "com": 0}, "b": {"type": "sequence", "seq": ["a"]}}
    jobs = read(tmp_path, workload([job(1, 0, 1, "a"), job(2, 0, 1, "b")], profiles))
    assert jobs[1].profile == Composed((ParallelHomogeneous(5.0, 0.0),), 1)


def test_fields_and_nb_res(tmp_path: Path) -> None:
    loaded = read_batsim_workload(
        write(tmp_path, workload([job("7", 3.5, 2, "p1", walltime=100)], description="x"))
    )
    assert loaded.nb_res == 4
    assert loaded.header == {"description": "x"}
    (only,) = loaded.jobs
    assert (only.id, only.submit_time, only.nb_res, only.walltime, only.workload) == (
        "7",
        3.5,
        2,
        100.0,
        "w0",
    )


def test_nb_res_is_optional(tmp_path: Path) -> None:
    document = workload([job()])
    del document["nb_res"]
    assert read_batsim_workload(write(tmp_path, document)).nb_res is None


@pytest.mark.parametrize("walltime", [-1, None])
def test_minus_one_or_no_walltime_is_unlimited(tmp_path: Path, walltime: object) -> None:
    extra = {} if walltime is None else {"walltime": walltime}
    (only,) = read(tmp_path, workload([job(**extra)]))
    assert only.walltime is None


def test_integer_string_and_prefixed_ids(tmp_path: Path) -> None:
    jobs = read(tmp_path, workload([job(1, 0), job("2", 1), job("other!3", 2), job("name", 3)]), name="mine")
    assert [(j.workload, j.id) for j in jobs] == [
        ("mine", "1"),
        ("mine", "2"),
        ("other", "3"),
        ("mine", "name"),
    ]


def test_jobs_are_sorted_by_subtime_then_numeric_id(tmp_path: Path) -> None:
    jobs = read(tmp_path, workload([job(10, 5), job(9, 5), job("b", 5), job(100, 1), job(2, 5)]))
    assert [j.id for j in jobs] == ["100", "2", "9", "10", "b"]


def test_extra_job_fields_are_kept_and_user_becomes_the_owner(tmp_path: Path) -> None:
    (only,) = read(
        tmp_path, workload([job(cpu="1.5", memory="500Mi", scheduler="default", user="alice", group=7)])
    )
    assert only.extra == {"cpu": "1.5", "memory": "500Mi", "scheduler": "default"}
    assert (only.user, only.group) == ("alice", "7")


def test_batkube_fields_in_the_profile_reach_the_job_extra_job_fields_winning(tmp_path: Path) -> None:
    profiles = {"p1": {"type": "delay", "delay": 10, "cpu": "1", "memory": "1Gi", "scheduler": "default"}}
    (only,) = read(tmp_path, workload([job(memory="2Gi")], profiles))
    assert only.extra == {"cpu": "1", "memory": "2Gi", "scheduler": "default"}
    assert only.profile == Delay(10.0)


def test_gzipped_workload(tmp_path: Path) -> None:
    path = tmp_path / "w.json.gz"
    path.write_bytes(gzip.compress(json.dumps(workload([job()])).encode()))
    assert [j.id for j in read_batsim_workload(path).jobs] == ["1"]


def test_unknown_profile_lists_the_defined_ones(tmp_path: Path) -> None:
    error = error_of(
        tmp_path,
        workload(
            [job(), job(2, 0, 1, "p9")],
            {"p1": {"type": "delay", "delay": 1}, "p2": {"type": "delay", "delay": 2}},
        ),
    )
    assert error.field == "jobs[1].profile"
    assert "unknown profile 'p9'; defined profiles: p1, p2" in str(error)
    assert "workload.json" in str(error)


def test_unsupported_profile_type_lists_the_supported_ones(tmp_path: Path) -> None:
    error = error_of(tmp_path, workload([job()], {"p1": {"type": "smpi", "trace": "x"}}))
    assert error.field == "profiles.p1.type"
    assert "unsupported profile type 'smpi'; supported: composed, data_staging, delay, parallel" in str(error)


def test_unused_profiles_of_unsupported_types_are_tolerated(tmp_path: Path) -> None:
    profiles = {"p1": {"type": "delay", "delay": 1}, "mpi": {"type": "smpi", "trace": "x"}}
    assert len(read(tmp_path, workload([job()], profiles))) == 1


def test_composed_cycles_are_refused(tmp_path: Path) -> None:
    profiles = {
        "a": {"type": "composed", "seq": ["b"]},
        "b": {"type": "composed", "seq": ["c", "a"]},
        "c": {"type": "delay", "delay": 1},
    }
    error = error_of(tmp_path, workload([job(1, 0, 1, "a")], profiles))
    assert "composed profiles form a cycle: a -> b -> a" in str(error)


def test_self_reference_is_a_cycle(tmp_path: Path) -> None:
    error = error_of(tmp_path, workload([job(1, 0, 1, "a")], {"a": {"type": "composed", "seq": ["a"]}}))
    assert "cycle: a -> a" in str(error)


@pytest.mark.parametrize(
    ("entry", "field", "expected"),
    [
        (job(res=-2), "jobs[0].res", "expected an integer >= 1, got -2"),
        (job(res="4"), "jobs[0].res", "expected an integer >= 1, got '4' (a string)"),
        (job(res=True), "jobs[0].res", "expected an integer >= 1, got true"),
        (job(subtime=-1), "jobs[0].subtime", "expected a number >= 0, got -1"),
        (job(walltime=0), "jobs[0].walltime", "expected a number > 0, got 0"),
        (job(walltime=-5), "jobs[0].walltime", "expected a number > 0, got -5"),
        (job(job_id=""), "jobs[0].id", "expected a job id"),
        (job(job_id="a!b!c"), "jobs[0].id", "exactly one '!'"),
        (job(job_id=[1]), "jobs[0].id", "got a list"),
        (job(profile=3), "jobs[0].profile", "expected a non-empty string, got 3"),
        ({"id": 1, "subtime": 0, "profile": "p1"}, "jobs[0]", "missing key 'res'"),
    ],
)
def test_bad_job_values_name_the_field(
    tmp_path: Path, entry: dict[str, object], field: str, expected: str
) -> None:
    error = error_of(tmp_path, workload([entry]))
    assert error.field == field
    assert expected in str(error)


@pytest.mark.parametrize(
    ("profile", "field", "expected"),
    [
        ({"type": "delay", "delay": -1}, "profiles.p1.delay", "expected a number >= 0, got -1"),
        ({"type": "delay"}, "profiles.p1", "missing key 'delay'"),
        ({"delay": 3}, "profiles.p1.type", "expected a profile type"),
        (
            {"type": "parallel", "cpu": [1, 2], "com": [0]},
            "profiles.p1.com",
            "expected 4 byte amounts (2x2), got 1",
        ),
        ({"type": "parallel", "cpu": []}, "profiles.p1.cpu", "non-empty list"),
        ({"type": "parallel", "cpu": [1, "x"]}, "profiles.p1.cpu[1]", "expected a number >= 0"),
        ({"type": "composed", "seq": []}, "profiles.p1.seq", "non-empty list"),
        ({"type": "composed", "seq": ["zz"]}, "profiles.p1.seq[0]", "unknown profile 'zz'"),
        (
            {"type": "composed", "seq": ["p1"], "repeat": 0},
            "profiles.p1.repeat",
            "expected an integer >= 1, got 0",
        ),
        ("delay", "profiles.p1", "expected a mapping"),
    ],
)
def test_bad_profiles_name_the_field(tmp_path: Path, profile: object, field: str, expected: str) -> None:
    error = error_of(tmp_path, workload([job()], {"p1": profile}))
    assert error.field == field
    assert expected in str(error)


def test_duplicate_ids_are_refused(tmp_path: Path) -> None:
    error = error_of(tmp_path, workload([job(1), job("1")]))
    assert error.field == "jobs[1].id"
    assert "duplicate job id 'w0!1'" in str(error)


def test_structure_errors(tmp_path: Path) -> None:
    assert "expected a JSON object" in str(error_of(tmp_path, [1, 2]))
    assert "missing key 'jobs'" in str(error_of(tmp_path, {"profiles": {}}))
    assert error_of(tmp_path, {"jobs": {}}).field == "jobs"
    assert error_of(tmp_path, workload([job()], nb_res=0)).field == "nb_res"


def test_json_syntax_errors_give_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{\n  "jobs": [\n    {"id": 1,,}\n  ]\n}\n')
    with pytest.raises(InputError, match=r"bad.json, line 3: invalid JSON") as error:
        read_batsim_workload(path)
    assert error.value.line == 3


def test_nan_is_not_a_number(tmp_path: Path) -> None:
    path = tmp_path / "nan.json"
    path.write_text('{"jobs": [{"id": 1, "subtime": NaN, "res": 1, "profile": "p"}], "profiles": {}}')
    with pytest.raises(InputError, match="NaN"):
        read_batsim_workload(path)


def test_huge_numbers_are_refused(tmp_path: Path) -> None:
    error = error_of(tmp_path, workload([job(subtime=10**400)]))
    assert error.field == "jobs[0].subtime"


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.integers()
    | st.floats()
    | st.sampled_from(["p1", "delay", "composed", "x!1", ""]),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "id",
                    "subtime",
                    "res",
                    "profile",
                    "walltime",
                    "type",
                    "delay",
                    "seq",
                    "cpu",
                    "com",
                    "repeat",
                    "p1",
                    "user",
                ]
            ),
            children,
            max_size=6,
        )
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(json_values, json_values)
def test_random_json_structures_are_read_or_refused_with_an_input_error(
    jobs: object, profiles: object
) -> None:
    for document in (
        {"jobs": jobs, "profiles": profiles},
        {"jobs": [jobs], "profiles": {"p1": profiles}},
        jobs,
    ):
        with contextlib.suppress(InputError):
            list(parse_batsim_workload(document).jobs)

