"""The Vertical Pod Autoscaler: each rule against the upstream tests' and docs' numbers, the percentile against a
direct computation, and the three scenarios end to end."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from clustersim.autoscaling.run import run_scenario
from clustersim.autoscaling.scenario import load_scenario, parse_scenario
from clustersim.autoscaling.vpa import (
    DAY,
    MAX_AMOUNT,
    ContainerPolicy,
    ContainerState,
    EvictionRestriction,
    Histogram,
    PodRequests,
    Recommendation,
    Resources,
    apply_policy,
    confidence_multiplier,
    cpu_histogram,
    memory_histogram,
    recommend,
    scale,
    update_candidates,
)
from clustersim.errors import InputError

EXAMPLES = Path(__file__).resolve().parents[1] / "src" / "clustersim" / "examples"


def test_bucket_layout_is_upstreams() -> None:
    # histogram_options.go: bucket n starts at first * (ratio^n - 1) / (ratio - 1); the last start >= max
    h = cpu_histogram()
    assert h.bucket_start(0) == 0 and h.bucket_start(1) == pytest.approx(0.01)
    assert h.bucket_start(2) == pytest.approx(0.01 + 0.0105)
    assert h.bucket_start(h.nb_buckets - 1) >= 1000 > h.bucket_start(h.nb_buckets - 2)
    assert h.find_bucket(0.005) == 0 and h.find_bucket(0.021) == 2 and h.find_bucket(1e9) == h.nb_buckets - 1


def test_percentile_estimator_matches_upstream_test() -> None:
    # estimator_test.go TestPercentileEstimator: samples 1, 2, 3 cores -> p20 ~ 1.0; 1e9, 2e9, 3e9 -> p50 ~ 2e9
    cpu, memory = cpu_histogram(), memory_histogram()
    for value in (1.0, 2.0, 3.0):
        cpu.add(value, 1.0, 0.0)
        memory.add(value * 1e9, 1.0, 0.0)
    assert cpu.percentile(0.2) == pytest.approx(1.0, rel=0.05)
    assert memory.percentile(0.5) == pytest.approx(2e9, rel=0.05)


@given(st.lists(st.tuples(st.floats(0.001, 50.0), st.floats(0.1, 5.0)), min_size=1, max_size=60),
       st.sampled_from([0.5, 0.9, 0.95]))
def test_percentile_is_the_end_of_the_bucket_holding_the_weighted_percentile(
        samples: list[tuple[float, float]], p: float) -> None:
    """Direct computation: sort the samples, take the first whose cumulative weight reaches p of the total;
    the histogram answers the end of that sample's bucket (within float rounding at bucket edges)."""
    h = cpu_histogram()
    for value, weight in samples:
        h.add(value, weight, 0.0)
    ordered = sorted(samples)
    total = sum(w for _, w in ordered)
    cumulative = np.cumsum([w for _, w in ordered])
    index = int(np.searchsorted(cumulative, p * total - 1e-9 * total))
    value = ordered[min(index, len(ordered) - 1)][0]
    expected = h.bucket_start(h.find_bucket(value) + 1)
    assert h.percentile(p) == pytest.approx(expected, rel=1e-9)
    assert value <= h.percentile(p) <= value * 1.06 + 0.0105


def test_decay_halves_a_sample_a_day_later() -> None:
    h = Histogram(1000.0, 0.01)
    h.add(1.0, 1.0, 0.0)
    h.add(2.0, 1.0, DAY)  # the newer sample weighs twice the older
    assert h.weights[h.find_bucket(2.0)] == pytest.approx(2 * h.weights[h.find_bucket(1.0)])
    assert h.percentile(0.34) == pytest.approx(h.bucket_start(h.find_bucket(2.0) + 1))
    h.add(3.0, 1.0, 200 * DAY)  # renormalised, still 2^200 times the first
    assert h.percentile(0.5) == pytest.approx(h.bucket_start(h.find_bucket(3.0) + 1))


def test_confidence_multiplier_matches_upstream_test() -> None:
    # TestConfidenceMultiplier: 9 CPU samples 2 minutes apart -> confidence 9 / 1440 = 0.00625;
    # 3.14 cores x (1 + 0.1 / 0.00625)^2 = 907.46 cores; 3.14e9 bytes -> 9.0746e11
    state = ContainerState()
    for i in range(9):
        state.add_cpu(1000, 0, 120.0 * i)
    assert state.confidence() == 0.00625
    assert confidence_multiplier(3140, 0.1, 2.0, state.confidence()) == 907460
    assert confidence_multiplier(3_140_000_000, 0.1, 2.0, state.confidence()) == 907_460_000_000
    # TestConfidenceMultiplierWithCustomInterval: interval 18 min -> confidence 0.5; 3.14 x 1.44 = 4.521 (truncated)
    assert state.confidence(18 * 60) == 0.5
    assert confidence_multiplier(3140, 0.1, 2.0, 0.5) == 4521
    # no history: +inf (MaxResourceAmount) or 0, by the exponent's sign
    empty = ContainerState()
    assert confidence_multiplier(3140, 1.0, 1.0, empty.confidence()) == MAX_AMOUNT
    assert confidence_multiplier(3140, 1.0, -1.0, empty.confidence()) == 0


def test_margin_and_minimum_match_upstream_tests() -> None:
    # TestMarginEstimator: 10% margin on 3.14 cores and 3.14e9 bytes
    assert scale(3140, 1.1) == 3454 and scale(3_140_000_000, 1.1) == 3_454_000_000
    # recommender.go's documented multipliers of the upper bound: 24 h history x2, 12 h x3, a week x1.14
    assert confidence_multiplier(1000, 1.0, 1.0, 1.0) == 2000
    assert confidence_multiplier(1000, 1.0, 1.0, 0.5) == 3000
    assert confidence_multiplier(1000, 1.0, 1.0, 7.0) == 1142
    # and of the lower bound: 5 min x0.6, 30 min x0.9, 60 min x0.95
    assert confidence_multiplier(1000, 0.001, -2.0, 5 / 1440) == 602
    assert confidence_multiplier(1000, 0.001, -2.0, 30 / 1440) == 910
    assert confidence_multiplier(1000, 0.001, -2.0, 60 / 1440) == 953


def test_recommendation_is_p90_with_margin_and_bounds_with_confidence() -> None:
    state = ContainerState()
    for minute in range(2 * 1440):  # two days of one sample a minute: 200m, every tenth 400m
        t = 60.0 * minute
        state.add_cpu(400 if minute % 10 == 0 else 200, 500, t)
        state.add_memory("pod", 300 * 2**20, t)
    r = recommend(state)
    p90 = state.cpu.percentile(0.9)
    assert r.target.cpu == int(int(p90 * 1000) * 1.15)
    conf = state.confidence()
    assert conf == pytest.approx((2 * 1440 - 1) / 1440)
    assert r.upper.cpu == scale(int(int(state.cpu.percentile(0.95) * 1000) * 1.15), 1 + 1 / conf)
    assert r.lower.cpu == scale(int(int(state.cpu.percentile(0.5) * 1000) * 1.15), (1 + 0.001 / conf) ** -2)
    assert r.lower.memory >= 250 * 2**20  # the 250 MiB pod minimum
    small = ContainerState()
    small.add_cpu(1, 100, 0.0)
    assert recommend(small).target.cpu == 25  # the 25 millicores pod minimum


def test_memory_keeps_each_pods_peak_per_day() -> None:
    state = ContainerState()
    state.add_memory("a", 100e6, 0.0)
    state.add_memory("a", 300e6, 60.0)  # replaces the window's peak
    state.add_memory("a", 200e6, 120.0)  # below the peak: nothing
    assert state.memory.total == pytest.approx(2 ** (60 / DAY))
    state.add_memory("a", 150e6, DAY + 61)  # a new window: a second peak
    assert state.memory.total == pytest.approx(2 ** (60 / DAY) + 2 ** ((DAY + 61) / DAY))


def test_policy_caps_target_and_bounds_and_leaves_uncontrolled_resources() -> None:
    r = Recommendation(Resources(800, 900), Resources(100, 100), Resources(5000, 5000))
    policy = ContainerPolicy(min_allowed=Resources(200, 0), max_allowed=Resources(600, 0), controlled=("cpu",))
    capped = apply_policy(r, policy, Resources(500, 123))
    assert capped.target == Resources(600, 123) and capped.lower == Resources(200, 123)
    assert capped.upper == Resources(600, 123)


def test_updater_evicts_outside_bounds_first_and_old_pods_far_from_target() -> None:
    rec = Recommendation(Resources(300, 300), Resources(200, 200), Resources(400, 400))
    pods = [PodRequests("inside", Resources(250, 250), 0.0, True),
            PodRequests("low", Resources(100, 300), 0.0, True),
            PodRequests("old", Resources(390, 300), -13 * 3600.0, True),
            PodRequests("young", Resources(390, 300), -11 * 3600.0, True)]
    chosen = update_candidates(pods, rec, ("cpu", "memory"), 0.0)
    assert [p.name for p in chosen] == ["low", "old"]  # |300-390|/390 = 0.23 >= 0.1 after 12 h


def test_eviction_restriction_follows_min_replicas_and_tolerance() -> None:
    pod = PodRequests("p", Resources(1, 1), 0.0, True)
    # 4 configured, tolerance 50% -> 2 evictions per loop
    four = EvictionRestriction(configured=4, running=4)
    assert [four.evict(pod) for _ in range(3)] == [True, True, False]
    # fewer than min_replicas (2): never
    assert not EvictionRestriction(configured=1, running=1).evict(pod)
    # 3 configured: tolerance int(1.5) = 1 -> one eviction
    three = EvictionRestriction(configured=3, running=3)
    assert [three.evict(pod) for _ in range(2)] == [True, False]
    # tolerance 0 with every pod running: one eviction still allowed
    strict = EvictionRestriction(configured=2, running=2, tolerance=0.1)
    assert [strict.evict(pod) for _ in range(2)] == [True, False]
    # a pod not running (Pending) can always go
    assert EvictionRestriction(configured=2, running=0, tolerance=0.0).evict(PodRequests("q", pod.requests, None,
                                                                                         False))


def test_scenario_errors_name_the_field() -> None:
    base = {"duration": 10, "deployment": {}, "traffic": {"pattern": "poisson", "rate": 1},
            "cluster": {"nodes": [{"count": 1, "cores": 1, "memory": "1Gi"}]}}
    with pytest.raises(InputError, match=r"field 'vpa.mode'.*one of Off, Initial, Recreate"):
        parse_scenario({**base, "vpa": {"mode": "Sometimes"}})
    with pytest.raises(InputError, match=r"field 'vpa.container_policy.controlled_resources'"):
        parse_scenario({**base, "vpa": {"container_policy": {"controlled_resources": ["gpu"]}}})


def _columns(rows: list[object], name: str) -> list[float]:
    return [getattr(r, name) for r in rows]


def test_vpa_alone_recreates_pods_with_the_target_and_one_no_longer_fits() -> None:
    rows = run_scenario(load_scenario(EXAMPLES / "vpa.yaml")).rows
    assert sum(_columns(rows, "vpa_evictions")) >= 4
    assert max(_columns(rows, "vpa_evictions")) <= 2  # tolerance: 2 of 4 at a time
    last = rows[-1]
    assert last.memory_request_mi > 250 and last.memory_request_mi == pytest.approx(last.memory_target_mi, rel=0.1)
    assert last.replicas_pending == 1  # 3 nodes of 512Mi hold one ~330Mi pod each


def test_modes_off_and_initial_do_not_evict() -> None:
    for mode in ("Off", "Initial"):
        scenario = load_scenario(EXAMPLES / "vpa.yaml")
        document = {"duration": 900, "seed": 11, "deployment": {"replicas": 4, "requests": {
            "cpu": "500m", "memory": "128Mi"}}, "traffic": {"pattern": "poisson", "rate": 40},
            "vpa": {"mode": mode, "memory_usage": {"base": "200Mi"}},
            "cluster": {"nodes": [{"count": 3, "cores": 4, "memory": "512Mi"}]}}
        scenario = parse_scenario(document)
        rows = run_scenario(scenario).rows
        assert sum(_columns(rows, "vpa_evictions")) == 0
        assert rows[-1].memory_request_mi == 128
        assert not math.isnan(rows[-1].memory_target_mi)


def test_in_place_resizes_what_fits_and_recreates_what_does_not() -> None:
    document = {"duration": 900, "seed": 11, "deployment": {"replicas": 4, "requests": {
        "cpu": "500m", "memory": "128Mi"}}, "traffic": {"pattern": "poisson", "rate": 40},
        "vpa": {"mode": "InPlaceOrRecreate", "memory_usage": {"base": "300Mi"}},
        "cluster": {"nodes": [{"count": 2, "cores": 4, "memory": "512Mi"}]}}
    rows = run_scenario(parse_scenario(document)).rows
    resized, evicted = sum(_columns(rows, "vpa_resizes")), sum(_columns(rows, "vpa_evictions"))
    # 2 pods of 128Mi per 512Mi node, target ~345Mi: one per node grows in place, the other cannot: evicted
    assert (resized, evicted) == (2, 2)
    assert rows[-1].memory_request_mi == pytest.approx(rows[-1].memory_target_mi, rel=0.15)


def test_hpa_and_vpa_on_cpu_drift_to_more_replicas_than_vpa_on_memory() -> None:
    memory = run_scenario(load_scenario(EXAMPLES / "hpa-cpu-vpa-memory.yaml")).rows
    cpu = run_scenario(load_scenario(EXAMPLES / "hpa-vpa-cpu.yaml")).rows
    assert max(_columns(cpu, "desired_replicas")) > max(_columns(memory, "desired_replicas"))
    assert _columns(memory, "cpu_request_m")[-1] == 500  # the HPA's yardstick untouched
    assert min(_columns(cpu, "cpu_request_m")[10:]) < 500  # shrunk under the HPA
