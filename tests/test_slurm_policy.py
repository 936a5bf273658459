"""The `slurm` policy on hand-computed cases: polling, priority order, the main pass, backfill, partitions.

Unless said otherwise: slurmctld started 600 s before t=0, so its full-queue passes fall at 0, 60, 120... and
its backfill cycles every 30 s once something changed; the background loop serves a request at once
(sched_latency and submit_latency 0); bf_resolution is 60 s.
"""

from __future__ import annotations

import pytest

from clustersim.core.events import FinalState
from clustersim.errors import InputError, UnknownNameError
from clustersim.policies.registry import create_policy, parse_policy_options
from clustersim.policies.slurm.conf import parse_slurm_conf, platform_from_conf
from clustersim.policies.slurm.policy import UnmodelledSlurmSettings
from clustersim.policies.slurm.priority import JobFactors, MultifactorPriority
from clustersim.runner import simulate
from clustersim.workload.job import Job
from clustersim.workload.profiles import Delay
from clustersim.workload.stream import Workload
from conftest import Collector

TWO_NODES = "NodeName=n[1-2] CPUs=4\nPartitionName=main Nodes=n[1-2] Default=YES\n"
ONE_NODE = "NodeName=n1 CPUs=4\nPartitionName=main Nodes=n1 Default=YES\n"


def job(job_id: int, submit: float, cpus: int, runtime: float, walltime: float | None, **fields: str) -> Job:
    return Job(str(job_id), submit, cpus, Delay(runtime), walltime=walltime, **fields)  # type: ignore[arg-type]


def run(conf_text: str, jobs: list[Job], **options: object) -> Collector:
    """Simulate; the cases are worked out for select/cons_tres with CR_CPU, which a conf naming neither gets here
    (Slurm 22.05's own defaults are select/linear, and CR_Core_Memory for cons_tres: tests/test_slurm_shapes.py)."""
    if "SelectType=" not in conf_text:
        conf_text = "SelectType=select/cons_tres\n" + conf_text
        if "SelectTypeParameters=" not in conf_text:
            conf_text = "SelectTypeParameters=CR_CPU\n" + conf_text
    conf = parse_slurm_conf(conf_text)
    options = {"ctld_start": -600.0, "sched_latency": 0.0, "submit_latency": 0.0, "epilog_delay": 0.0, **options}
    collector = Collector()
    policy = create_policy("slurm", conf=conf, **options)
    simulate(platform_from_conf(conf), Workload.from_jobs(jobs), policy, extra_sinks=[collector])
    return collector


def starts(collector: Collector) -> dict[str, float | None]:
    return {k: o.start for k, o in sorted(collector.outcomes.items())}


# -- polling ------------------------------------------------------------------------------------------------


# Here slurmctld started at -600.25: the backfill thread's one-second checks fall at .75, after the ticks.


def test_a_submission_waits_for_the_next_tick_and_batch_sched_delay() -> None:
    jobs = [job(1, 7, 1, 10, 60), job(2, 8, 1, 10, 60)]
    result = run(ONE_NODE, jobs, submit_latency=0.5, ctld_start=-600.25)
    # 1 is served by the tick after its submission; 2 by the first tick 3 s after that pass.
    assert starts(result) == {"1": 7.5, "2": 10.5}


def test_batch_sched_delay_is_whole_seconds_tested_at_the_loops_ticks() -> None:
    # sched/builtin: no backfill cycle. The pass that starts 1 comes at its submission (latencies 0); Slurm lets
    # the next one run at the first tick (loop_period apart) whose whole second is 3 past that pass's second.
    fifo = "SchedulerType=sched/builtin\n" + ONE_NODE
    for submit, period, held in ((10.0, 1.02, 13.06), (10.97, 1.02, 13.01), (10.0, 1.0, 13.0), (10.97, 1.0, 13.97)):
        jobs = [job(1, submit, 1, 10, 60), job(2, submit + 0.2, 1, 10, 60)]
        # At 10.0, ticks 11.02, 12.04, 13.06: the third is the first in second 13. At 10.97 the second tick, 13.01,
        # already is (2 s after the pass). A loop of exactly 1 s keeps 3 s.
        assert starts(run(fifo, jobs, loop_period=period)) == pytest.approx({"1": submit, "2": held})


def test_the_loop_period_is_positive() -> None:
    with pytest.raises(InputError, match="loop_period"):
        create_policy("slurm", loop_period="0")


def test_an_idle_backfill_thread_may_start_a_job_before_the_tick() -> None:
    # With slurmctld started at -600, the backfill thread's checks fall on whole seconds: it sees the
    # submission at 7 and starts job 1 before the background loop's tick at 7.5.
    result = run(ONE_NODE, [job(1, 7, 1, 10, 60)], submit_latency=0.5)
    assert starts(result) == {"1": 7}


def test_a_job_end_asks_for_a_pass_like_a_submission() -> None:
    jobs = [job(1, 5, 4, 20, 60), job(2, 6, 4, 20, 60)]
    result = run(ONE_NODE, jobs, sched_latency=0.5, submit_latency=0.5, ctld_start=-600.25)
    assert starts(result) == {"1": 5.5, "2": 26.0}  # 1 ends at 25.5, the next tick comes 0.5 s later


def test_a_submissions_pass_comes_sooner_than_a_job_ends() -> None:
    # The loop's tick is uniform in a submission's phase: half its period later (submit_latency). A job's end,
    # which comes whole seconds plus its launch after the tick that started it, waits longer on average
    # (sched_latency). 1 is served 0.51 s after its submission and ends at 25.51; 2 waits for the pass 0.63 s
    # after that end.
    jobs = [job(1, 5, 4, 20, 60), job(2, 6, 4, 20, 60)]
    result = run(ONE_NODE, jobs, sched_latency=0.63, submit_latency=0.51, ctld_start=-600.25)
    assert starts(result) == pytest.approx({"1": 5.51, "2": 26.14})


# -- priority order and the main pass ------------------------------------------------------------------


def _blocked_queue() -> list[Job]:
    """One node busy until 100; then a 4-CPU job and a 1-CPU job wait (submitted in that order)."""
    return [job(1, 0, 4, 100, 120), job(2, 10, 4, 50, 60), job(3, 20, 1, 50, 600)]


def test_basic_priority_is_submit_order() -> None:
    assert starts(run(ONE_NODE, _blocked_queue())) == {"1": 0, "2": 100, "3": 150}


def test_multifactor_priorities_are_slurmctlds_on_the_validation_clusters() -> None:
    # InitPrio of slurmctld 22.05's log (`_slurm_rpc_submit_batch_job: JobId=N InitPrio=P`) on replays of the
    # validation's multifactor scenarios (PriorityWeightJobSize=1000, PriorityFavorSmall=YES,
    # PriorityWeightPartition=100, PriorityWeightAge=1000, no slurmdbd), by the job's CPUs: the age weight adds
    # nothing, and -n N asks one node whatever N (four 4-CPU nodes: 5 and 14 CPUs too).
    weights = ("PriorityType=priority/multifactor\nPriorityWeightJobSize=1000\nPriorityFavorSmall=YES\n"
               "PriorityWeightPartition=100\nPriorityWeightAge=1000\n")
    logged = {"NodeName=big CPUs=16\n": {1: 568, 2: 537, 3: 506, 4: 475, 6: 412, 8: 350, 12: 225},
              "NodeName=n[1-4] CPUs=4\n": {1: 943, 2: 912, 3: 881, 5: 818, 14: 537}}
    for nodes, priorities in logged.items():
        conf = parse_slurm_conf(weights + nodes)
        plugin = MultifactorPriority(conf, sum(n.cpus for n in conf.nodes), len(conf.nodes), {})
        assert {cpus: plugin.initial(JobFactors(cpus, 1, 0.0, "u", "a", 1.0), 5000.0) for cpus in priorities} == \
            priorities


def test_multifactor_favor_small_puts_the_small_job_first() -> None:
    conf = ONE_NODE + "PriorityType=priority/multifactor\nPriorityWeightJobSize=1000\nPriorityFavorSmall=YES\n"
    # Job size factor: ((1 - 1/1) + (4 - cpus) / 4) / 2: 0 for 4 CPUs, 375 for 1 CPU.
    assert starts(run(conf, _blocked_queue())) == {"1": 0, "2": 150, "3": 100}


def test_without_slurmdbd_multifactor_ignores_age_and_fairshare_like_slurm() -> None:
    conf = ONE_NODE + "PriorityType=priority/multifactor\nPriorityWeightAge=100000\nPriorityWeightFairshare=1000\n"
    assert starts(run(conf, _blocked_queue())) == {"1": 0, "2": 100, "3": 150}


def test_the_higher_partition_tier_goes_first() -> None:
    conf = ("NodeName=n1 CPUs=4\nPartitionName=low Nodes=n1 Default=YES\n"
            "PartitionName=high Nodes=n1 PriorityTier=5\n")
    jobs = [job(1, 0, 4, 100, 120), job(2, 10, 4, 50, 60, queue="low"), job(3, 20, 4, 50, 60, queue="high")]
    assert starts(run(conf, jobs)) == {"1": 0, "2": 150, "3": 100}


# -- backfill: running jobs per CPU, reservations on whole nodes --------------------------------------------


def _two_node_case(p2_walltime: float) -> list[Job]:
    """R1: 3 CPUs of n1 until 120; R2: all of n2 until 240. P1 (2 CPUs) and P2 (1 CPU) wait from t=10."""
    return [
        job(1, 0, 3, 120, 120), job(2, 0, 4, 240, 240),
        job(3, 10, 2, 60, 60), job(4, 10, 1, 50, p2_walltime),
    ]


def test_the_main_pass_stops_at_the_first_blocked_job_and_backfill_starts_the_next_one_later() -> None:
    # At 10 P1 does not fit, so the main pass skips P2 although a CPU of n1 is free; the backfill cycle at
    # 30 starts P2 there: it ends (by its limit) at 90, before P1's reservation on n1 from 120.
    result = run(TWO_NODES, _two_node_case(60))
    assert starts(result) == {"1": 0, "2": 0, "3": 120, "4": 30}
    assert str(result.outcomes["4"].resources) == "3"


def test_a_reservation_takes_the_whole_node_even_the_cpus_the_job_leaves_idle() -> None:
    # P1 is planned on n1 from 120 and needs 2 of its 4 CPUs. A per-CPU plan would let P2 (limit 300) use
    # n1's free CPU now; Slurm's map reserves all of n1 over [120, 180), so P2 waits for the pass at 120.
    result = run(TWO_NODES, _two_node_case(300))
    assert starts(result) == {"1": 0, "2": 0, "3": 120, "4": 120}


def test_without_backfill_the_small_job_waits_for_the_blocked_one() -> None:
    result = run("SchedulerType=sched/builtin\n" + TWO_NODES, _two_node_case(60))
    assert starts(result) == {"1": 0, "2": 0, "3": 120, "4": 120}


def test_running_jobs_end_by_their_limit_in_whole_minutes() -> None:
    # R1 asks 61 s: Slurm keeps 2 minutes, so the backfill plan sees n1 busy until 120, not 61; P2 (limit
    # 60 s, ends at 90) backfills at 30 before P1's reservation from 120. R1 really ends at 61: P1 starts at
    # the first tick 3 s after the full-queue pass at 60.
    jobs = [job(1, 0, 3, 61, 61), job(2, 0, 4, 240, 240), job(3, 10, 2, 60, 60), job(4, 10, 1, 50, 60)]
    assert starts(run(TWO_NODES, jobs)) == {"1": 0, "2": 0, "3": 63, "4": 30}


def test_jobs_span_nodes_on_the_best_fit_node_first() -> None:
    # 1 takes the fuller-fitting node n1 (best fit among equals: the first); 2 (3 CPUs) fits best in n2; 3 needs
    # 2 CPUs where only 1+1 remain: it spans both nodes.
    jobs = [job(1, 0, 3, 100, 120), job(2, 0, 3, 100, 120), job(3, 0, 2, 100, 120)]
    result = run(TWO_NODES, jobs)
    assert {k: str(o.resources) for k, o in result.outcomes.items()} == {"1": "0-2", "2": "4-6", "3": "3 7"}


# -- fair-share, recalculated every PriorityCalcPeriod ----------------------------------------------------


def _fairshare_conf(weight: int) -> str:
    return (ONE_NODE + "AccountingStorageType=accounting_storage/slurmdbd\nPriorityType=priority/multifactor\n"
            f"PriorityWeightFairshare={weight}\nPriorityCalcPeriod=1\nPriorityDecayHalfLife=1:00:00\n")


def _fairshare_jobs() -> list[Job]:
    return [job(1, 0, 4, 100, 120, user="a"), job(2, 30, 4, 10, 60, user="a"), job(3, 30, 4, 10, 60, user="b")]


def test_fairshare_favours_the_user_without_usage_after_the_next_calculation() -> None:
    # At 30 nobody has a factor yet (priorities tie, submit order); at the calculation at 60, a has used the
    # node for 60 s and b nothing: Fair Tree ranks b first (1.0) and a second (0.5).
    assert starts(run(_fairshare_conf(1000), _fairshare_jobs())) == {"1": 0, "2": 110, "3": 100}


def test_without_the_fairshare_weight_submit_order_holds() -> None:
    assert starts(run(_fairshare_conf(0), _fairshare_jobs())) == {"1": 0, "2": 100, "3": 110}


# -- partitions and time limits ------------------------------------------------------------------------


PARTITIONS = ("NodeName=n[1-2] CPUs=4\nPartitionName=short Nodes=n1 Default=YES MaxTime=1 DefaultTime=1\n"
              "PartitionName=long Nodes=n2 MaxTime=INFINITE\n")


def test_a_partition_runs_its_jobs_on_its_own_nodes() -> None:
    result = run(PARTITIONS, [job(1, 0, 4, 30, 60), job(2, 0, 4, 30, 600, queue="long")])
    assert {k: str(o.resources) for k, o in result.outcomes.items()} == {"1": "0-3", "2": "4-7"}


def test_a_job_without_a_limit_gets_the_default_time_and_is_killed_at_the_next_check() -> None:
    result = run(PARTITIONS, [job(1, 5, 1, 100, None)])
    outcome = result.outcomes["1"]
    # Started at 5 with a 60 s limit; slurmctld checks limits every 30 s from its start: at 90.
    assert (outcome.start, outcome.finish, outcome.state) == (5, 90, FinalState.COMPLETED_KILLED)


def test_a_job_longer_than_max_time_stays_pending_unless_limits_are_enforced() -> None:
    jobs = [job(1, 0, 1, 10, 120), job(2, 0, 1, 10, 60)]
    assert starts(run(PARTITIONS, jobs)) == {"2": 0}
    enforced = run("EnforcePartLimits=ALL\n" + PARTITIONS, jobs)
    assert enforced.outcomes["1"].state is FinalState.REJECTED


def test_a_job_larger_than_its_partition_is_rejected() -> None:
    assert run(PARTITIONS, [job(1, 0, 5, 10, 60)]).outcomes["1"].state is FinalState.REJECTED


def test_an_unknown_partition_is_rejected_even_in_a_list() -> None:
    jobs = [job(1, 0, 1, 10, 60, queue="nope"), job(2, 0, 1, 10, 60, queue="long,nope"),
            job(3, 0, 1, 10, 60, queue="long")]
    result = run(PARTITIONS, jobs)
    assert {k: o.state for k, o in result.outcomes.items()} == {
        "1": FinalState.REJECTED, "2": FinalState.REJECTED, "3": FinalState.COMPLETED_SUCCESSFULLY}


def test_a_job_naming_several_partitions_starts_in_the_first_that_can_run_it() -> None:
    # n1 (short) is full until 30; job 2 may use short or long: it starts at once on n2, in long.
    jobs = [job(1, 0, 4, 30, 60), job(2, 0, 4, 30, 60, queue="short,long")]
    result = run(PARTITIONS, jobs)
    assert {k: (o.start, str(o.resources)) for k, o in result.outcomes.items()} == {
        "1": (0, "0-3"), "2": (0, "4-7")}


def test_a_job_is_limited_by_the_max_time_of_each_of_its_partitions() -> None:
    # 2 minutes exceed short's MaxTime: job 2 waits there but runs in long (n2) as soon as it is free.
    jobs = [job(1, 0, 4, 100, 120, queue="long"), job(2, 0, 4, 30, 120, queue="short,long")]
    assert starts(run(PARTITIONS, jobs)) == {"1": 0, "2": 100}


def test_the_lowest_node_weight_is_used_first() -> None:
    conf = "NodeName=n1 CPUs=4 Weight=10\nNodeName=n2 CPUs=4 Weight=1\nPartitionName=main Nodes=ALL Default=YES\n"
    # Equal weights would give n1 (best fit among equals: the first); weight 1 makes it n2, and job 2, larger
    # than what n2 has left (3 CPUs), takes all of them before one CPU of the heavier n1.
    result = run(conf, [job(1, 0, 1, 100, 120), job(2, 0, 4, 100, 120)])
    assert {k: str(o.resources) for k, o in result.outcomes.items()} == {"1": "4", "2": "0 5-7"}


def test_over_time_limit_delays_the_kill_of_a_job_past_its_limit() -> None:
    # DefaultTime 1 minute; OverTimeLimit=1 lets it run one more minute: killed at the check at 150, not 90.
    result = run("OverTimeLimit=1\n" + PARTITIONS, [job(1, 5, 1, 200, None)])
    outcome = result.outcomes["1"]
    assert (outcome.start, outcome.finish, outcome.state) == (5, 150, FinalState.COMPLETED_KILLED)
    unlimited = run("OverTimeLimit=UNLIMITED\n" + PARTITIONS, [job(1, 5, 1, 200, None)]).outcomes["1"]
    assert (unlimited.finish, unlimited.state) == (205, FinalState.COMPLETED_SUCCESSFULLY)


def test_afterany_waits_for_the_end_and_afterok_for_a_success() -> None:
    jobs = [
        job(1, 0, 1, 50, 60),
        job(2, 0, 1, 100, 60),  # killed at its walltime
        job(3, 0, 1, 10, 60, extra={"dependency": "afterany:1"}),  # type: ignore[dict-item]
        job(4, 0, 1, 10, 60, extra={"dependency": "afterok:1"}),  # type: ignore[dict-item]
        job(5, 0, 1, 10, 60, extra={"dependency": "afterany:2"}),  # type: ignore[dict-item]
        job(6, 0, 1, 10, 60, extra={"dependency": "afterok:2"}),  # type: ignore[dict-item]
        job(7, 0, 1, 10, 60, extra={"dependency": "afterok:99"}),  # type: ignore[dict-item]
    ]
    result = run(TWO_NODES, jobs)
    # 3 and 4 are served by the pass after 1 ends at 50 (batch_sched_delay after the one at 0: at once);
    # 6 never runs (DependencyNeverSatisfied); 7 names no job: rejected at submission.
    assert starts(result) == {"1": 0, "2": 0, "3": 50, "4": 50, "5": 60, "7": None}
    assert result.outcomes["7"].state is FinalState.REJECTED


def test_the_swf_preceding_job_is_an_afterany_dependency() -> None:
    jobs = [job(1, 0, 1, 50, 60), job(2, 0, 1, 10, 60, extra={"preceding_job": "1"}),  # type: ignore[dict-item]
            job(3, 0, 1, 10, 60, extra={"preceding_job": "404"})]  # type: ignore[dict-item]
    assert starts(run(TWO_NODES, jobs)) == {"1": 0, "2": 50, "3": 0}


def test_settings_the_model_does_not_model_are_named_in_one_warning() -> None:
    conf = ("SlurmctldPort=6817\nSchedulerParameters=bf_interval=30,bf_max_job_user=10\nPreemptType=preempt/qos\n"
            "SelectTypeParameters=CR_Core_Memory,CR_ONE_TASK_PER_CORE\nNodeName=n1 CPUs=4 Feature=big\n"
            "PartitionName=main Nodes=n1 Default=YES MaxNodes=1 OverSubscribe=YES\n")
    with pytest.warns(UnmodelledSlurmSettings) as caught:
        run(conf, [job(1, 0, 1, 10, 60)])
    assert len(caught) == 1
    message = str(caught[0].message)
    for name in ("PreemptType", "SchedulerParameters bf_max_job_user",
                 "SelectTypeParameters=CR_Core_Memory,CR_ONE_TASK_PER_CORE", "NodeName: feature",
                 "PartitionName: oversubscribe"):
        assert name in message
    assert "SlurmctldPort" not in message and "bf_interval" not in message


# -- configuration -------------------------------------------------------------------------------------


def test_unknown_policy_options_fail_listing_the_valid_ones() -> None:
    with pytest.raises(UnknownNameError, match="ctld_start"):
        create_policy("slurm", bogus=1)
    with pytest.raises(UnknownNameError, match="valid: hosts"):
        create_policy("fcfs", conf="x")
    assert parse_policy_options(["conf=a.conf", "ctld-start=-5"]) == {"conf": "a.conf", "ctld_start": "-5"}
    with pytest.raises(InputError):
        parse_policy_options(["conf"])


def test_the_platform_must_be_the_conf_cluster() -> None:
    conf = parse_slurm_conf(TWO_NODES)
    with pytest.raises(InputError, match=r"not the cluster of this slurm\.conf"):
        simulate(platform_from_conf(parse_slurm_conf(ONE_NODE)), Workload.from_jobs([job(1, 0, 1, 1, 60)]),
                 create_policy("slurm", conf=conf))


def test_without_a_conf_the_platform_is_one_partition_with_defaults() -> None:
    from conftest import hosts

    collector = Collector()
    simulate(hosts(2), Workload.from_jobs([job(1, 0, 2, 10, 60)]),
             create_policy("slurm", sched_latency="0", submit_latency="0"),
             extra_sinks=[collector])
    assert collector.outcomes["1"].start == 0
