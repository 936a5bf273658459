"""Hand-computed schedules on small cases where the policies must differ.

The main case, 4 hosts, walltime = run time:
  J1 t=0 3 hosts 10 s; J2 t=1 2 hosts 10 s; J3 t=2 4 hosts 10 s; J4 t=3 1 host 30 s; J5 t=4 1 host 5 s.
- fcfs: strict order. J2 waits for J1, J3 for J2, J4 and J5 for J3.
- easy: J2 is the head at t=1, reserved at t=10 on hosts 0-1, so host 3 is outside the reservation and J4
  backfills there at t=3 even though it runs past t=10 (it delays J3, which EASY allows: J3 is not the head).
  At t=10 J2 starts, J3 becomes the head with a reservation at t=33 (when J4 ends), and J5 (ends at 15)
  backfills on host 2.
- conservative: J4 would delay J3's reservation [20, 30) on all 4 hosts, so it waits until 30; J5 fits
  before J2's reservation on host 3 at t=4.
"""

from __future__ import annotations

from clustersim.core.events import FinalState
from conftest import delay_job, hosts, run_policy

CASE = [
    delay_job(1, 0, 3, 10),
    delay_job(2, 1, 2, 10),
    delay_job(3, 2, 4, 10),
    delay_job(4, 3, 1, 30),
    delay_job(5, 4, 1, 5),
]


def test_fcfs_starts_jobs_strictly_in_submit_order() -> None:
    assert run_policy("fcfs", hosts(4), CASE).schedule() == {
        "1": (0, 10, "0-2"),
        "2": (10, 20, "0-1"),
        "3": (20, 30, "0-3"),
        "4": (30, 60, "0"),
        "5": (30, 35, "1"),
    }


def test_easy_backfills_outside_the_head_reservation_and_before_it() -> None:
    assert run_policy("easy", hosts(4), CASE).schedule() == {
        "1": (0, 10, "0-2"),
        "2": (10, 20, "0-1"),
        "3": (33, 43, "0-3"),
        "4": (3, 33, "3"),
        "5": (10, 15, "2"),
    }


def test_conservative_backfills_only_jobs_that_delay_no_reservation() -> None:
    assert run_policy("conservative", hosts(4), CASE).schedule() == {
        "1": (0, 10, "0-2"),
        "2": (10, 20, "0-1"),
        "3": (20, 30, "0-3"),
        "4": (30, 60, "0"),
        "5": (4, 9, "3"),
    }


def test_sjf_orders_the_queue_by_requested_time_without_backfilling() -> None:
    # At t=4 the queue by requested time is J5 (5 s), J2 (10 s), J3 (10 s), J4 (30 s): J5 is first and fits
    # on host 3. J2 then blocks everything behind it until t=10 (unlike easy, J4 is never backfilled).
    assert run_policy("sjf", hosts(4), CASE).schedule() == {
        "1": (0, 10, "0-2"),
        "2": (10, 20, "0-1"),
        "3": (20, 30, "0-3"),
        "4": (30, 60, "0"),
        "5": (4, 9, "3"),
    }


def test_easy_reservation_moves_earlier_when_a_job_ends_before_its_walltime() -> None:
    # J1 asks 100 s but runs 20 s: J2 (head, all hosts) starts at 20, not 100. J3 (ends 5+90=95 <= 100)
    # backfills at t=5 on the reserved hosts, so J2 then waits for it: the reservation was at 100.
    jobs = [delay_job(1, 0, 2, 20, walltime=100), delay_job(2, 1, 4, 10), delay_job(3, 5, 2, 90)]
    assert run_policy("easy", hosts(4), jobs).schedule() == {
        "1": (0, 20, "0-1"),
        "2": (95, 105, "0-3"),
        "3": (5, 95, "2-3"),
    }


def test_job_running_past_its_walltime_is_killed_at_the_walltime() -> None:
    result = run_policy("fcfs", hosts(2), [delay_job(1, 0, 1, 50, walltime=20), delay_job(2, 0, 2, 5)])
    killed = result.outcomes["1"]
    assert (killed.start, killed.finish, killed.state) == (0, 20, FinalState.COMPLETED_WALLTIME_REACHED)
    assert result.schedule()["2"] == (20, 25, "0-1")


def test_job_larger_than_the_platform_is_rejected_and_recorded() -> None:
    for policy in ("fcfs", "easy", "conservative", "sjf"):
        result = run_policy(policy, hosts(4), [delay_job(1, 0, 5, 10), delay_job(2, 0, 4, 10)])
        rejected = result.outcomes["1"]
        assert rejected.state is FinalState.REJECTED
        assert (rejected.start, rejected.finish, len(rejected.resources)) == (None, None, 0)
        assert result.schedule()["2"] == (0, 10, "0-3")


def test_submissions_at_one_instant_are_queued_in_id_order() -> None:
    # Same submit time, given out of id order: the queue is 1, 2, 10 (numeric ids compare as numbers).
    jobs = [delay_job(10, 0, 1, 5), delay_job(2, 0, 1, 5), delay_job(1, 0, 1, 5)]
    assert run_policy("fcfs", hosts(1), jobs).schedule() == {
        "1": (0, 5, "0"),
        "10": (10, 15, "0"),
        "2": (5, 10, "0"),
    }
