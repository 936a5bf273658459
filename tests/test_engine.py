"""The event queue: equal-time ordering, whole instants, and a clock that never goes back."""

from __future__ import annotations

import pytest

from clustersim.core.engine import EventClass, EventQueue, TimeTravelError


def test_equal_times_pop_by_event_class_then_insertion_order() -> None:
    queue: EventQueue[str] = EventQueue()
    for kind, name in [
        (EventClass.CALL, "call-a"),
        (EventClass.JOB_SUBMIT, "submit-a"),
        (EventClass.JOB_END, "end-a"),
        (EventClass.CALL, "call-b"),
        (EventClass.JOB_END, "end-b"),
        (EventClass.JOB_SUBMIT, "submit-b"),
    ]:
        queue.push(5.0, kind, name)
    assert queue.pop_instant() == [
        (EventClass.JOB_END, "end-a"),
        (EventClass.JOB_END, "end-b"),
        (EventClass.JOB_SUBMIT, "submit-a"),
        (EventClass.JOB_SUBMIT, "submit-b"),
        (EventClass.CALL, "call-a"),
        (EventClass.CALL, "call-b"),
    ]


def test_event_classes_are_ordered_ends_then_submissions_then_calls() -> None:
    assert EventClass.JOB_END < EventClass.JOB_SUBMIT < EventClass.CALL


def test_pop_instant_returns_the_whole_earliest_instant_and_advances_the_clock() -> None:
    queue: EventQueue[str] = EventQueue()
    queue.push(2.0, EventClass.CALL, "t2")
    queue.push(1.0, EventClass.CALL, "t1-first")
    queue.push(3.0, EventClass.JOB_END, "t3")
    queue.push(1, EventClass.CALL, "t1-second")  # an int time equal to 1.0 is the same instant
    assert queue.now == 0.0
    assert queue.next_time() == 1.0
    assert queue.pop_instant() == [(EventClass.CALL, "t1-first"), (EventClass.CALL, "t1-second")]
    assert queue.now == 1.0
    assert len(queue) == 2
    assert queue.next_time() == 2.0
    assert queue.pop_instant() == [(EventClass.CALL, "t2")]
    assert queue.pop_instant() == [(EventClass.JOB_END, "t3")]
    assert queue.now == 3.0
    assert len(queue) == 0
    assert not queue
    assert queue.next_time() is None


def test_pushing_before_now_raises_time_travel_error_and_changes_nothing() -> None:
    queue: EventQueue[str] = EventQueue()
    queue.push(5.0, EventClass.CALL, "now")
    queue.push(9.0, EventClass.CALL, "later")
    queue.pop_instant()
    with pytest.raises(TimeTravelError, match=r"cannot schedule JOB_END at t=4\.5: the clock is at t=5\.0"):
        queue.push(4.5, EventClass.JOB_END, "past")
    assert len(queue) == 1
    assert queue.now == 5.0
    assert queue.pop_instant() == [(EventClass.CALL, "later")]


def test_negative_times_are_in_the_past_from_the_start() -> None:
    queue: EventQueue[str] = EventQueue()
    with pytest.raises(TimeTravelError):
        queue.push(-1e-9, EventClass.JOB_SUBMIT, "before zero")
    assert len(queue) == 0


def test_an_event_pushed_at_now_forms_a_new_instant_at_the_same_time() -> None:
    queue: EventQueue[str] = EventQueue()
    queue.push(5.0, EventClass.CALL, "first")
    assert queue.pop_instant() == [(EventClass.CALL, "first")]
    queue.push(5.0, EventClass.JOB_END, "zero-length job ends")
    assert queue.next_time() == 5.0
    assert queue.pop_instant() == [(EventClass.JOB_END, "zero-length job ends")]
    assert queue.now == 5.0


def test_insertion_order_breaks_ties_even_across_pops() -> None:
    queue: EventQueue[int] = EventQueue()
    for i in range(50):
        queue.push(1.0, EventClass.JOB_SUBMIT, i)
    queue.push(0.5, EventClass.CALL, -1)
    assert queue.pop_instant() == [(EventClass.CALL, -1)]
    assert [payload for _, payload in queue.pop_instant()] == list(range(50))
