"""Slurm's priority plugins: priority/basic (FIFO) and priority/multifactor with fair-share.

Both follow Slurm 22.05 (src/plugins/priority/): priorities are unsigned integers, larger runs first.

- basic: each new job gets the previous job's priority minus one, starting below 0xffff0000: submit order.
- multifactor: the weighted sum of the age, fair-share, job size, partition and QOS factors (each in [0, 1]),
  truncated to an integer, at least 1. Without slurmdbd (AccountingStorageType other than
  accounting_storage/slurmdbd) Slurm ignores the age and fair-share weights and never recalculates priorities
  (its decay thread does not run): the model does the same, so that one slurm.conf means one behaviour.
  With slurmdbd, priorities are recalculated every PriorityCalcPeriod from usage decayed with
  PriorityDecayHalfLife, as Slurm's decay thread does.

Fair-share works on an association tree built from the jobs: root -> account (the job's group) -> user, every
association with one share. Fair Tree (the 22.05 default) ranks users by level fair-share; with
PriorityFlags=NO_FAIR_TREE the classic factor 2^(-effective usage / normalised shares) is used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from clustersim.policies.slurm.conf import SlurmConf

TOP_PRIORITY = 0xFFFF0000
"""priority/basic's first job gets TOP_PRIORITY - 1 (slurmctld's initial `lowest_prio`)."""
MAX_PRIORITY = 0xFFFFFFFF


@dataclass(slots=True)
class JobFactors:
    """What the multifactor plugin reads of a pending job."""

    cpus: int
    min_nodes: int
    eligible: float
    user: str
    account: str
    partition_factor: float
    """The partition's PriorityJobFactor normalised by the largest one (Slurm's norm_priority)."""
    time_limit_minutes: float | None = None
    qos: str = "normal"


class BasicPriority:
    """priority/basic: strictly decreasing priorities in submit order."""

    recalculates = False

    def __init__(self) -> None:
        self._lowest = TOP_PRIORITY

    def initial(self, job: JobFactors, now: float) -> int:
        self._lowest = self._lowest - 1 if self._lowest >= 2 else 1
        return self._lowest

    def recalculate(self, job: JobFactors, now: float) -> int:  # pragma: no cover - never called
        raise AssertionError("priority/basic never recalculates")


@dataclass
class _Assoc:
    """One association's decayed usage (CPU-seconds)."""

    usage: float = 0.0
    children: dict[str, _Assoc] = field(default_factory=dict)
    fs_factor: float = 0.0


class FairShare:
    """Decayed usage of accounts and users, and the fair-share factor it yields.

    Usage is CPU-seconds decayed with Slurm's per-second factor `1 - 0.693 / half_life`, accumulated as its
    decay thread does: at each calculation period, existing usage is decayed over the period, then every
    running job adds `run_delta * decay^run_delta * cpus` for the part of the period it ran.
    """

    def __init__(self, half_life: float | None, fair_tree: bool = True, dampening: float = 1.0):
        self.decay_factor = 1.0 - 0.693 / half_life if half_life else 1.0
        self.fair_tree = fair_tree
        self.dampening = dampening
        self.root = _Assoc()

    def _user(self, account: str, user: str) -> tuple[_Assoc, _Assoc]:
        acct = self.root.children.setdefault(account, _Assoc())
        return acct, acct.children.setdefault(user, _Assoc())

    def register(self, user: str, account: str) -> None:
        """Make the association exist (Slurm's associations exist before any job runs)."""
        self._user(account, user)

    def decay(self, seconds: float) -> None:
        if seconds <= 0 or self.decay_factor == 1.0:
            return
        factor = max(self.decay_factor**seconds, 2.2250738585072014e-308)
        self.root.usage *= factor
        for acct in self.root.children.values():
            acct.usage *= factor
            for user in acct.children.values():
                user.usage *= factor

    def charge(self, user: str, account: str, cpus: int, seconds: float) -> None:
        """Add a running job's usage over `seconds` (decayed as Slurm's `_apply_new_usage` does)."""
        if seconds <= 0:
            return
        amount = seconds * self.decay_factor**seconds * cpus
        acct, assoc = self._user(account, user)
        for target in (self.root, acct, assoc):
            target.usage += amount

    def usage(self, user: str, account: str) -> float:
        return self._user(account, user)[1].usage

    def update_factors(self) -> None:
        """Recompute every user's fair-share factor from the current usage."""
        if self.fair_tree:
            self._fair_tree()
        else:
            self._classic()

    def factor(self, user: str, account: str) -> float:
        return self._user(account, user)[1].fs_factor

    def _classic(self) -> None:
        root = self.root.usage
        accounts = self.root.children
        for acct in accounts.values():
            acct_share = 1.0 / len(accounts)
            acct_efctv = acct.usage / root if root else 0.0
            for user in acct.children.values():
                share = acct_share / len(acct.children)
                norm = user.usage / root if root else 0.0
                efctv = norm + (acct_efctv - norm) * (1.0 / len(acct.children))
                user.fs_factor = 2.0 ** (-(efctv / share) / self.dampening)

    def _fair_tree(self) -> None:
        """Slurm's fair_tree.c on the two-level tree: rank users depth-first by level fair-share."""
        users = sum(len(acct.children) for acct in self.root.children.values())
        counters = [users, users]  # Slurm's `rank` and `rnt`

        def level_fs(parent: _Assoc, child: _Assoc) -> float:
            usage = child.usage / parent.usage if parent.usage else 0.0
            return math.inf if usage == 0 else (1.0 / len(parent.children)) / usage

        def visit(siblings: list[tuple[_Assoc, _Assoc]], tied_parent: bool) -> None:
            ranked = sorted(
                ((level_fs(parent, child), bool(child.children), parent, child) for parent, child in siblings),
                key=lambda entry: (-entry[0], entry[1]),
            )
            previous: float | None = None
            i = 0
            while i < len(ranked):
                value, is_account, _, child = ranked[i]
                tied = tied_parent if i == 0 else previous == value
                if not is_account:
                    if not tied:
                        counters[0] = counters[1]
                    child.fs_factor = counters[0] / users
                    counters[1] -= 1
                    i += 1
                else:
                    merged = [child]
                    i += 1
                    while i < len(ranked) and ranked[i][1] and ranked[i][0] == value:
                        merged.append(ranked[i][3])
                        i += 1
                    visit([(acct, user) for acct in merged for user in acct.children.values()], tied)
                previous = value

        if users:
            visit([(self.root, acct) for acct in self.root.children.values()], False)


class MultifactorPriority:
    """priority/multifactor: a weighted sum of factors, recalculated every PriorityCalcPeriod with slurmdbd."""

    def __init__(self, conf: SlurmConf, cluster_cpus: int, node_count: int, qos_priorities: dict[str, int]):
        self.accounting = conf.get("AccountingStorageType").lower() == "accounting_storage/slurmdbd"
        self.recalculates = self.accounting
        self.weight_age = conf.integer("PriorityWeightAge", 0) if self.accounting else 0
        self.weight_fs = conf.integer("PriorityWeightFairshare", 0) if self.accounting else 0
        self.weight_js = conf.integer("PriorityWeightJobSize", 0)
        self.weight_part = conf.integer("PriorityWeightPartition", 0)
        self.weight_qos = conf.integer("PriorityWeightQOS", 0) if self.accounting else 0
        self.max_age = conf.time("PriorityMaxAge", 7 * 86400.0) or 0.0
        self.favor_small = conf.flag("PriorityFavorSmall")
        flags = conf.priority_flags
        self.size_relative = "SMALL_RELATIVE_TO_TIME" in flags
        self.cluster_cpus = cluster_cpus
        self.node_count = node_count
        top_qos = max(qos_priorities.values(), default=0)
        self.qos_norm = {name: (p / top_qos if top_qos else 0.0) for name, p in qos_priorities.items()}
        self.fairshare = FairShare(
            conf.time("PriorityDecayHalfLife", 7 * 86400.0),
            fair_tree="NO_FAIR_TREE" not in flags,
            dampening=float(conf.integer("FairShareDampeningFactor", 1)),
        )

    def initial(self, job: JobFactors, now: float) -> int:
        if self.accounting:
            self.fairshare.register(job.user, job.account)
        return self._priority(job, now)

    def recalculate(self, job: JobFactors, now: float) -> int:
        return self._priority(job, now)

    def _priority(self, job: JobFactors, now: float) -> int:
        total = 0.0
        if self.weight_age:
            diff = max(0.0, math.floor(now) - math.floor(job.eligible))
            total += self.weight_age * (1.0 if diff >= self.max_age else diff / self.max_age)
        if self.weight_fs:
            total += self.weight_fs * self.fairshare.factor(job.user, job.account)
        if self.weight_js:
            total += self.weight_js * self._size_factor(job)
        if self.weight_part:
            total += self.weight_part * job.partition_factor
        if self.weight_qos:
            total += self.weight_qos * self.qos_norm.get(job.qos, 0.0)
        return int(min(max(total, 1.0), MAX_PRIORITY))

    def _size_factor(self, job: JobFactors) -> float:
        nodes, cpus = self.node_count, self.cluster_cpus
        if self.size_relative:
            size = max(job.min_nodes * cpus / nodes, float(job.cpus))
            size /= job.time_limit_minutes or 1.0
            size /= cpus
            factor = 1.0 - size if self.favor_small else size
        elif self.favor_small:
            factor = ((nodes - job.min_nodes) / nodes + (cpus - job.cpus) / cpus) / 2
        else:
            factor = (job.min_nodes / nodes + job.cpus / cpus) / 2
        return min(max(factor, 0.0), 1.0)


PriorityPlugin = BasicPriority | MultifactorPriority
