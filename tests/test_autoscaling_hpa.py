"""Each HPA rule against a worked example of the Kubernetes documentation or a hand-computed case."""

from __future__ import annotations

from clustersim.autoscaling.hpa import (
    HorizontalPodAutoscaler,
    HpaSpec,
    MetricKind,
    PodStatus,
    Sample,
    ScalingPolicy,
    ScalingRules,
    SelectPolicy,
    group_pods,
    recommend,
)

NOW = 1000.0
RPS = HpaSpec(metric=MetricKind.REQUESTS_PER_SECOND, target=100.0, max_replicas=100)


def ready(name: str, request: int = 500) -> PodStatus:
    """A pod Running and Ready for long (past the CPU initialisation period)."""
    return PodStatus(name, "Running", True, ready_since=NOW - 500, start_time=NOW - 600, cpu_request=request)


def sample(value: float) -> Sample:
    return Sample(value, NOW - 5, 10.0)


def pods_with(values: list[float], spec: HpaSpec = RPS) -> int:
    pods = [ready(f"p{i}") for i in range(len(values))]
    proposal = recommend(len(pods), pods, {f"p{i}": sample(v) for i, v in enumerate(values)}, spec, NOW)
    assert proposal is not None
    return proposal.replicas


def test_doc_example_metric_twice_the_target_doubles_the_replicas() -> None:
    # "if the current metric value is 200m, and the desired value is 100m, the number of replicas will be doubled"
    assert pods_with([200, 200, 200]) == 6


def test_doc_example_metric_half_the_target_halves_the_replicas() -> None:
    assert pods_with([50, 50, 50, 50]) == 2


def test_within_tolerance_nothing_changes() -> None:
    assert pods_with([105, 105, 105]) == 3  # ratio 1.05: |1 - 1.05| <= 0.1
    assert pods_with([111, 111, 111]) == 4  # ratio 1.11: ceil(3.33)
    assert pods_with([91, 91, 91, 91, 91, 91, 91, 91, 91, 91]) == 10  # ratio 0.91


def test_cpu_utilisation_is_summed_usage_over_summed_requests_truncated() -> None:
    spec = HpaSpec(target=50.0, max_replicas=100)
    # 3 pods using 400m of 500m: 80% -> ratio 1.6 -> ceil(4.8) = 5
    assert pods_with([400, 400, 400], spec) == 5
    pods = [ready("a"), ready("b")]
    proposal = recommend(2, pods, {"a": sample(333), "b": sample(334)}, spec, NOW)
    assert proposal is not None and proposal.metric == 66.0  # 667 * 100 // 1000


def test_missing_metrics_count_as_100_percent_on_scale_down() -> None:
    spec = HpaSpec(target=50.0)
    pods = [ready("a"), ready("b"), ready("c"), ready("d")]
    metrics = {"a": sample(50), "b": sample(50), "c": sample(50)}  # 10% each; d has no metric
    # ratio 0.2 -> with d at 100% of its request: (150 + 500) / 2000 = 32% -> 0.64 -> ceil(2.56) = 3
    proposal = recommend(4, pods, metrics, spec, NOW)
    assert proposal is not None and proposal.replicas == 3


def test_missing_metrics_that_bring_the_ratio_within_tolerance_stop_the_scale_down() -> None:
    spec = HpaSpec(target=50.0)
    pods = [ready("a"), ready("b"), ready("c")]
    # ratio 0.4 -> with c at 100%: 700 / 1500 = 46% -> 0.92, within tolerance: keep 3
    proposal = recommend(3, pods, {"a": sample(100), "b": sample(100)}, spec, NOW)
    assert proposal is not None and proposal.replicas == 3


def test_missing_metrics_count_as_zero_on_scale_up() -> None:
    spec = HpaSpec(target=50.0, max_replicas=100)
    pods = [ready("a"), ready("b"), ready("c")]
    # ratio 2 -> with c at 0: 1000 / 1500 = 66% -> 1.32 -> ceil(3.96) = 4
    proposal = recommend(3, pods, {"a": sample(500), "b": sample(500)}, spec, NOW)
    assert proposal is not None and proposal.replicas == 4


def test_not_yet_ready_pods_count_as_zero_on_scale_up() -> None:
    spec = HpaSpec(target=50.0)
    unready = PodStatus("c", "Running", False, ready_since=NOW - 20, start_time=NOW - 20, cpu_request=500)
    pods = [ready("a"), ready("b"), unready]
    metrics = {"a": sample(400), "b": sample(400), "c": sample(500)}
    # Without c: 80% -> 1.6 -> 4. With c set aside then at 0: 800 / 1500 = 53% -> 1.06: within tolerance, keep 3.
    proposal = recommend(3, pods, metrics, spec, NOW)
    assert proposal is not None and proposal.replicas == 3


def test_a_reversed_direction_after_filling_in_means_no_change() -> None:
    spec = HpaSpec(target=50.0, tolerance=0.0)
    unready = PodStatus("c", "Pending", False, None, None, 500)
    pods = [ready("a"), ready("b"), unready]
    # ready ratio 1.02 > 1; with the pending pod at 0: 510 / 1500 = 34% -> 0.68 < 1: reversed, keep 3
    proposal = recommend(3, pods, {"a": sample(255), "b": sample(255)}, spec, NOW)
    assert proposal is not None and proposal.replicas == 3


def test_cpu_initialisation_period_and_initial_readiness_delay() -> None:
    spec = HpaSpec()
    fresh = PodStatus("fresh", "Running", True, ready_since=NOW - 8, start_time=NOW - 100, cpu_request=500)
    warmed = PodStatus("warmed", "Running", True, ready_since=NOW - 60, start_time=NOW - 100, cpu_request=500)
    never = PodStatus("never", "Running", False, ready_since=NOW - 400, start_time=NOW - 400, cpu_request=500)
    was_ready = PodStatus("was", "Running", False, ready_since=NOW - 100, start_time=NOW - 400, cpu_request=500)
    pending = PodStatus("pending", "Pending", False, None, None, 500)
    deleting = PodStatus("deleting", "Running", True, NOW - 500, NOW - 600, 500, deleting=True)
    pods = [fresh, warmed, never, was_ready, pending, deleting]
    groups = group_pods(pods, {p.name: sample(100) for p in pods}, spec, NOW)
    # fresh: within 300 s of start and its sample (at NOW-5) is within a 10 s window of its readiness -> unready
    # never: unready and went unready within 30 s of its start (never ready) -> unready
    # was: unready, but its last transition is 300 s after start: it was ready before -> its metric counts
    assert groups.unready == {"fresh", "never", "pending"}
    assert groups.ignored == {"deleting"}
    assert groups.ready_count == 2


def test_no_metric_at_all_gives_no_recommendation() -> None:
    assert recommend(2, [ready("a"), ready("b")], {}, HpaSpec(), NOW) is None


def fixed(*, up: ScalingRules | None = None, down: ScalingRules | None = None, **spec: int) -> HorizontalPodAutoscaler:
    base = HpaSpec(min_replicas=spec.get("min_replicas", 1), max_replicas=spec.get("max_replicas", 200))
    return HorizontalPodAutoscaler(HpaSpec(
        min_replicas=base.min_replicas, max_replicas=base.max_replicas,
        scale_up=up or base.scale_up, scale_down=down or base.scale_down,
    ))


def test_default_scale_up_doubles_or_adds_four_whichever_is_more() -> None:
    assert fixed().normalize(0.0, 1, 10) == (5, "ScaleUpLimit")  # max(1 * 2, 1 + 4)
    assert fixed().normalize(0.0, 10, 100)[0] == 20  # max(20, 14)


def test_doc_example_scale_down_percent_policy_rounds_the_removal_up() -> None:
    # behavior.scaleDown: Pods 4 / 60 s, Percent 10 / 60 s (selectPolicy Max): from 80 towards 10, the first step
    # removes 8; the next, at 72, removes 7.2 rounded up to 8.
    rules = ScalingRules(0.0, (ScalingPolicy("Pods", 4, 60.0), ScalingPolicy("Percent", 10, 60.0)))
    hpa = fixed(down=rules)
    assert hpa.normalize(0.0, 80, 10)[0] == 72
    hpa._store_event(0.0, 80, 72)
    assert hpa.normalize(30.0, 72, 10)[0] == 72  # 8 already removed within the 60 s period
    assert hpa.normalize(60.0, 72, 10)[0] == 64  # the period has passed: int(72 * 0.9)


def test_select_policy_min_takes_the_smallest_change_and_disabled_none() -> None:
    policies = (ScalingPolicy("Pods", 4, 60.0), ScalingPolicy("Percent", 10, 60.0))
    assert fixed(down=ScalingRules(0.0, policies, SelectPolicy.MIN)).normalize(0.0, 80, 10)[0] == 76
    assert fixed(down=ScalingRules(0.0, policies, SelectPolicy.DISABLED)).normalize(0.0, 80, 10)[0] == 80


def test_scale_down_stabilisation_keeps_the_highest_recommendation_of_the_window() -> None:
    hpa = fixed()  # default scale-down window: 300 s
    assert hpa.normalize(0.0, 10, 10)[0] == 10
    for t in range(15, 300, 15):
        assert hpa.normalize(float(t), 10, 4)[0] == 10, t
    assert hpa.normalize(300.0, 10, 4)[0] == 4  # the recommendation of t=0 is out of the window


def test_scale_up_stabilisation_keeps_the_lowest_recommendation_of_the_window() -> None:
    hpa = fixed(up=ScalingRules(60.0, (ScalingPolicy("Percent", 100, 15.0),)))
    assert hpa.normalize(0.0, 2, 2)[0] == 2
    assert hpa.normalize(15.0, 2, 8)[0] == 2
    assert hpa.normalize(61.0, 2, 8)[0] == 4  # window now holds only 8s; doubling limit: 4


def test_min_and_max_replicas_bound_the_result() -> None:
    hpa = HorizontalPodAutoscaler(HpaSpec(min_replicas=2, max_replicas=6, metric=MetricKind.REQUESTS_PER_SECOND,
                                          target=100.0))
    pods = [ready(f"p{i}") for i in range(4)]
    result = hpa.sync(0.0, 4, pods, {p.name: sample(1000) for p in pods})
    assert result.desired == 6 and result.proposal == 40
    assert hpa.sync(15.0, 8, pods, {}).desired == 6  # above max: back to max, metrics or not
    assert hpa.sync(30.0, 1, pods[:1], {}).desired == 2  # below min
