"""The SWF reader: header, field mapping, what it skips and notes, streaming, gzip, and its error messages."""

from __future__ import annotations

import contextlib
import gzip
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clustersim.errors import InputError, UnknownNameError
from clustersim.workload import swf
from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay
from clustersim.workload.swf import (
    NOTE_ALLOCATED_MISSING,
    NOTE_NO_WALLTIME,
    NOTE_OVERRUN,
    NOTE_REQUESTED_MISSING,
    SKIP_PROCESSORS,
    SKIP_RUNTIME,
    read_swf,
)

HEADER = """; Version: 2.2
; Computer: Test cluster
; MaxNodes: 4
; MaxProcs: 8
; UnixStartTime: 1027839845
; Note: first note
; Note: second note
;       a continuation line without a key
;
"""


def record(
    job: int,
    submit: float,
    run: float,
    alloc: int,
    req_procs: int,
    req_time: float,
    user: int = 3,
    group: int = 2,
    queue: int = 1,
) -> str:
    """One SWF line; unused fields are -1."""
    fields = [
        job,
        submit,
        5,
        run,
        alloc,
        -1,
        -1,
        req_procs,
        req_time,
        -1,
        1,
        user,
        group,
        -1,
        queue,
        -1,
        -1,
        -1,
    ]
    return " ".join(str(f) for f in fields) + "\n"


def write(tmp_path: Path, *records: str, name: str = "trace.swf", header: str = HEADER) -> Path:
    path = tmp_path / name
    path.write_text(header + "".join(records))
    return path


def test_header_lines_fill_the_header_and_maxprocs_is_the_platform_size(tmp_path: Path) -> None:
    workload = read_swf(write(tmp_path, record(1, 0, 10, 1, 1, 20)))
    assert workload.header["MaxProcs"] == "8"
    assert workload.header["MaxNodes"] == "4"
    assert workload.header["UnixStartTime"] == "1027839845"
    assert workload.header["Computer"] == "Test cluster"
    assert workload.header["Note"] == "first note\nsecond note"
    assert workload.nb_res == 8


def test_without_maxprocs_the_platform_size_is_unknown(tmp_path: Path) -> None:
    workload = read_swf(write(tmp_path, record(1, 0, 10, 1, 1, 20), header="; Version: 2\n"))
    assert workload.nb_res is None


def test_fields_map_to_job_attributes(tmp_path: Path) -> None:
    workload = read_swf(write(tmp_path, record(7, 12, 100, 4, 6, 200, user=5, group=9, queue=2)), name="hpc")
    (job,) = list(workload.jobs)
    assert job.id == "7"
    assert job.submit_time == 12.0
    assert job.nb_res == 4
    assert job.profile == Delay(100.0)
    assert job.profile_name == "delay100"
    assert job.walltime == 200.0
    assert (job.user, job.group, job.queue) == ("5", "9", "2")
    assert job.workload == "hpc"
    assert workload.name == "hpc"
    assert job.key == "hpc!7"


def test_unknown_owner_fields_become_empty_names(tmp_path: Path) -> None:
    (job,) = read_swf(write(tmp_path, record(1, 0, 10, 1, 1, 20, user=-1, group=-1, queue=-1))).jobs
    assert (job.user, job.group, job.queue) == ("", "", "")


def test_fractional_run_times_keep_their_value_and_name(tmp_path: Path) -> None:
    (job,) = read_swf(write(tmp_path, record(1, 0, 552.21, 1, 1, 600))).jobs
    assert job.profile == Delay(552.21)
    assert job.profile_name == "delay552.21"


def test_jobs_of_one_run_or_requested_time_share_their_objects(tmp_path: Path) -> None:
    # A queued job is held until it starts: jobs alike hold one profile, name, walltime and submit time.
    first, second, other = read_swf(
        write(tmp_path, record(1, 5, 100, 1, 1, 200), record(2, 5, 100, 2, 2, 200), record(3, 6, 50, 1, 1, 200))
    ).jobs
    assert first.profile is second.profile and first.profile_name is second.profile_name
    if not swf.__file__.endswith(".py"):  # compiled: the reader's floats are unboxed, and boxed again per job
        return
    assert first.walltime is second.walltime is other.walltime
    assert first.submit_time is second.submit_time


def test_sharing_starts_afresh_beyond_its_limit_with_the_same_values(tmp_path: Path) -> None:
    records = [record(i, i, 1 + i % (swf._SHARED + 10), 1, 1, 10 + i % (swf._SHARED + 7)) for i in range(10_000)]
    for i, job in enumerate(read_swf(write(tmp_path, *records)).jobs):
        run = 1 + i % (swf._SHARED + 10)
        assert (job.profile, job.profile_name, job.walltime) == (Delay(run), f"delay{run}", 10 + i % (swf._SHARED + 7))


def test_records_without_run_time_or_processors_are_skipped_and_counted(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        record(1, 0, 10, 1, 1, 20),
        record(2, 1, -1, 1, 1, 20),  # run time unknown
        record(3, 2, 0, 1, 1, 20),  # run time 0
        record(4, 3, 10, -1, -1, 20),  # no processor count at all
        record(5, 4, 10, 0, 0, 20),
    )
    workload = read_swf(path)
    assert [job.id for job in workload.jobs] == ["1"]
    assert workload.skips.skipped == {SKIP_RUNTIME: 2, SKIP_PROCESSORS: 2}
    assert workload.skips.total_skipped == 4


def test_skips_are_counted_only_as_the_jobs_are_consumed(tmp_path: Path) -> None:
    workload = read_swf(write(tmp_path, record(1, 0, -1, 1, 1, 20), record(2, 1, 10, 1, 1, 20)))
    assert workload.skips.total_skipped == 0
    list(workload.jobs)
    assert workload.skips.total_skipped == 1


def test_allocated_processors_fall_back_to_requested_with_a_note(tmp_path: Path) -> None:
    workload = read_swf(write(tmp_path, record(1, 0, 10, -1, 3, 20), record(2, 0, 10, 2, 5, 20)))
    assert [job.nb_res for job in workload.jobs] == [3, 2]
    assert workload.skips.notes == {NOTE_ALLOCATED_MISSING: 1}


def test_requested_processors_can_be_chosen_and_fall_back_to_allocated(tmp_path: Path) -> None:
    path = write(tmp_path, record(1, 0, 10, 4, -1, 20), record(2, 0, 10, 2, 5, 20))
    workload = read_swf(path, processors="requested")
    assert [job.nb_res for job in workload.jobs] == [4, 5]
    assert workload.skips.notes == {NOTE_REQUESTED_MISSING: 1}


def test_unknown_requested_time_means_unlimited_walltime_with_a_note(tmp_path: Path) -> None:
    workload = read_swf(write(tmp_path, record(1, 0, 10, 1, 1, -1)))
    (job,) = workload.jobs
    assert job.walltime is None
    assert workload.skips.notes == {NOTE_NO_WALLTIME: 1}


def test_jobs_running_past_their_request_are_kept_and_noted(tmp_path: Path) -> None:
    workload = read_swf(write(tmp_path, record(1, 0, 300, 1, 1, 200)))
    (job,) = workload.jobs
    assert (job.profile, job.walltime) == (Delay(300.0), 200.0)
    assert workload.skips.notes == {NOTE_OVERRUN: 1}
    assert "will be killed at their walltime" in workload.skips.lines()[0]


def test_exact_walltimes_are_the_run_times(tmp_path: Path) -> None:
    workload = read_swf(
        write(tmp_path, record(1, 0, 300, 1, 1, 200), record(2, 0, 10, 1, 1, -1)), walltime="exact"
    )
    assert [job.walltime for job in workload.jobs] == [300.0, 10.0]
    assert not workload.skips.notes


def test_jobs_come_in_file_order_and_comment_lines_between_records_are_ignored(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        record(3, 0, 10, 1, 1, 20),
        "; a comment\n\n",
        record(1, 0, 10, 1, 1, 20),
        record(2, 5, 1, 1, 1, 2),
    )
    assert [job.id for job in read_swf(path).jobs] == ["3", "1", "2"]


def test_gzip_is_recognised_by_magic_bytes_whatever_the_name(tmp_path: Path) -> None:
    path = tmp_path / "trace.log"
    path.write_bytes(gzip.compress((HEADER + record(1, 0, 10, 1, 1, 20)).encode()))
    workload = read_swf(path)
    assert workload.nb_res == 8
    assert [job.id for job in workload.jobs] == ["1"]


def test_swf_gz_name(tmp_path: Path) -> None:
    path = tmp_path / "trace.swf.gz"
    with gzip.open(path, "wt") as out:
        out.write(HEADER + record(1, 0, 10, 1, 1, 20) + record(2, 1, 10, 2, 2, 20))
    assert [job.nb_res for job in read_swf(path).jobs] == [1, 2]


def test_jobs_are_streamed_lazily(tmp_path: Path) -> None:
    """A broken line is only met when the stream reaches it: the reader never reads the file up front."""
    path = write(tmp_path, record(1, 0, 10, 1, 1, 20), "1 2 3\n")
    jobs = read_swf(path).jobs
    assert next(jobs).id == "1"
    with pytest.raises(InputError, match="line 11"):
        next(jobs)


def test_wrong_field_count_names_file_line_and_expectation(tmp_path: Path) -> None:
    path = write(tmp_path, record(1, 0, 10, 1, 1, 20), "1 2 3 4 5 6 7\n")
    with pytest.raises(InputError) as error:
        list(read_swf(path).jobs)
    message = str(error.value)
    assert str(path) in message
    assert "line 11" in message
    assert "expected 18 whitespace-separated numeric fields, got 7" in message
    assert error.value.line == 11


def test_non_numeric_field_is_named(tmp_path: Path) -> None:
    line = record(1, 0, 10, 1, 1, 20).replace(" 10 ", " ten ", 1)
    with pytest.raises(InputError, match=r"line 10: .*field 4 \(run time\) is 'ten', not a number"):
        list(read_swf(write(tmp_path, line)).jobs)


@pytest.mark.parametrize(
    ("index", "text", "expected"),
    [
        (1, "1e", r"field 2 \(submit time\) is '1e', not a number"),
        (3, "--5", r"field 4 \(run time\) is '--5', not a number"),
        (8, ".", r"field 9 \(requested time\) is '.', not a number"),
        (0, "1-2", r"job number '1-2' is not a whole number"),
    ],
)
def test_malformed_numbers_in_used_fields_are_named(
    tmp_path: Path, index: int, text: str, expected: str
) -> None:
    fields = record(1, 0, 10, 1, 1, 20).split()
    fields[index] = text
    with pytest.raises(InputError, match=f"line 10: .*{expected}"):
        list(read_swf(write(tmp_path, " ".join(fields) + "\n")).jobs)


def test_fractional_processor_count_is_refused(tmp_path: Path) -> None:
    line = record(1, 0, 10, 1, 1, 20).replace(" 0 5 10 1 ", " 0 5 10 1.5 ", 1)
    with pytest.raises(InputError, match=r"field 5 \(allocated processors\) is '1.5', not a whole number"):
        list(read_swf(write(tmp_path, line)).jobs)


def test_integral_decimal_counts_are_accepted(tmp_path: Path) -> None:
    line = record(1, 0, 10, 1, 1, 20).replace(" 0 5 10 1 ", " 0 5 10 4.0 ", 1)
    assert [job.nb_res for job in read_swf(write(tmp_path, line)).jobs] == [4]


def test_submit_times_must_not_go_back(tmp_path: Path) -> None:
    path = write(tmp_path, record(1, 100, 10, 1, 1, 20), record(2, 50, 10, 1, 1, 20))
    with pytest.raises(
        InputError, match=r"line 11: submit time 50 is before the previous record's \(100, line 10\)"
    ):
        list(read_swf(path).jobs)


def test_submit_order_is_checked_on_skipped_records_too(tmp_path: Path) -> None:
    path = write(tmp_path, record(1, 100, -1, 1, 1, 20), record(2, 50, 10, 1, 1, 20))
    with pytest.raises(InputError, match="non-decreasing"):
        list(read_swf(path).jobs)


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        read_swf(tmp_path / "missing.swf")


def test_truncated_gzip_is_an_input_error(tmp_path: Path) -> None:
    data = gzip.compress((HEADER + record(1, 0, 10, 1, 1, 20) * 200).encode())
    path = tmp_path / "broken.swf.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=str(path)):
        list(read_swf(path).jobs)


def test_unknown_options_list_the_valid_ones(tmp_path: Path) -> None:
    path = write(tmp_path)
    with pytest.raises(UnknownNameError, match="allocated, requested"):
        read_swf(path, processors="used")  # type: ignore[arg-type]
    with pytest.raises(UnknownNameError, match="exact, requested"):
        read_swf(path, walltime="guess")  # type: ignore[arg-type]


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FUZZ
@given(st.lists(st.text(alphabet=st.sampled_from("0123456789 .-+eE;:\tx\n"), max_size=80), max_size=8))
def test_garbage_text_is_read_or_refused_with_an_input_error(tmp_path: Path, lines: list[str]) -> None:
    path = tmp_path / "fuzz.swf"
    path.write_text("\n".join(lines))
    with contextlib.suppress(InputError):
        list(read_swf(path).jobs)


@FUZZ
@given(
    st.lists(
        st.lists(st.sampled_from(["-1", "0", "1", "2.5", "1e3", "7", "-0", "3."]), min_size=18, max_size=18)
    )
)
def test_random_numeric_records_are_read_or_refused_with_an_input_error(
    tmp_path: Path, rows: list[list[str]]
) -> None:
    path = tmp_path / "fuzz.swf"
    path.write_text("".join(" ".join(row) + "\n" for row in rows))
    workload = read_swf(path)
    try:
        jobs = list(workload.jobs)
    except InputError:
        return
    assert all(job.nb_res > 0 and job.profile.seconds > 0 for job in jobs)  # type: ignore[union-attr]
    assert len(jobs) + workload.skips.total_skipped == len(rows)


@FUZZ
@given(
    st.lists(
        st.tuples(st.sampled_from(["0", "-0", "0.0", "3", "3.0"]), st.sampled_from(["10", "10.0", "2.5", "1e1"]),
                  st.sampled_from(["-1", "0", "10", "10.0", "1e1", "20"]), st.booleans()),
        max_size=12,
    )
)
def test_each_job_reads_as_its_record_alone(tmp_path: Path, rows: list[tuple[str, str, str, bool]]) -> None:
    # The objects jobs share (profile, name, walltime, submit time) are what each record alone would give, bit
    # for bit (-0.0 and 0.0, 10 and 1e1 are told apart by their text).
    lines, submit = [], 0.0
    for number, (submit_text, run, requested, later) in enumerate(rows, 1):
        if later:
            submit += 1.5
            submit_text = str(submit)
        elif float(submit_text) < submit:
            submit_text = str(submit)
        submit = float(submit_text)
        lines.append(f"{number} {submit_text} 5 {run} 1 -1 -1 1 {requested} -1 1 3 2 -1 1 -1 -1 -1\n")

    def fields(job: Job) -> tuple[object, ...]:
        return job.id, repr(job.submit_time), repr(job.profile), job.profile_name, repr(job.walltime)

    together = [fields(job) for job in read_swf(write(tmp_path, *lines, name="all.swf")).jobs]
    alone = [fields(job) for i, line in enumerate(lines)
             for job in read_swf(write(tmp_path, line, name=f"{i}.swf")).jobs]
    assert together == alone
