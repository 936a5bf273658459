"""What a run holds when its memory peaks: the queue's and the running jobs' lengths at each new resident high.

Usage:
    python benchmarks/peak_memory.py ../shared/traces/RICC-2010-2.swf.gz fcfs [--jobs 10000] [--objects-at 48000]
    PYTHONPATH=$(python tests/compiled_build.py) python benchmarks/peak_memory.py ...   # the compiled modules

Replays an SWF trace under a built-in policy (Batsim's delivery, as `clustersim run`) and, at each decision call
where the process's peak resident size has grown by `--step` MB since the last line, prints the call, the time, the
jobs queued and running and the peak; then the longest queue, the most jobs running at once and the final peak.
With `--objects-at N` it also counts the live objects the garbage collector tracks, by type, with their
`sys.getsizeof` bytes, when the queue first holds N jobs (strings and floats are not tracked, so not counted).
"""

from __future__ import annotations

import argparse
import gc
import resource
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import islice

from clustersim.core.decisions import Decision
from clustersim.core.events import Event
from clustersim.core.interface import DecisionProcess
from clustersim.core.simulation import Delivery
from clustersim.core.state import ClusterView
from clustersim.platform.swf_header import platform_from_swf_header
from clustersim.policies.registry import create_policy
from clustersim.runner import simulate
from clustersim.workload.swf import read_swf


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Watch:
    """Passes every call to the policy, and looks at the view first."""

    def __init__(self, inner: DecisionProcess, step: float, objects_at: int) -> None:
        self.inner = inner
        self.step = step
        self.objects_at = objects_at
        self.calls = 0
        self.longest = 0
        self.most_running = 0
        self.printed = 0.0

    def begin(self, view: ClusterView) -> Iterable[Decision] | None:
        return self.inner.begin(view)

    def end(self, view: ClusterView) -> None:
        self.inner.end(view)

    def decide(self, now: float, events: Sequence[Event], view: ClusterView) -> Iterable[Decision]:
        self.calls += 1
        queued, running = len(view.pending), len(view.running)
        self.longest = max(self.longest, queued)
        self.most_running = max(self.most_running, running)
        peak = peak_mb()
        if peak >= self.printed + self.step:
            self.printed = peak
            print(f"call {self.calls:>8}  t={now:>12.0f}  queued {queued:>6}  running {running:>5}  "
                  f"peak {peak:6.1f} MB")
        if self.objects_at and queued >= self.objects_at:
            self.objects_at = 0
            self.count_objects(queued, running)
        return self.inner.decide(now, events, view)

    @staticmethod
    def count_objects(queued: int, running: int) -> None:
        counts: Counter[str] = Counter()
        sizes: Counter[str] = Counter()
        for o in gc.get_objects():
            name = type(o).__name__
            counts[name] += 1
            sizes[name] += sys.getsizeof(o)
        print(f"live tracked objects with {queued} queued and {running} running:")
        for name, size in sizes.most_common(8):
            print(f"  {name:16} {counts[name]:>8}  {size / 1e6:6.2f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trace")
    parser.add_argument("policy")
    parser.add_argument("--jobs", type=int, default=0, help="only the first N jobs (default: all)")
    parser.add_argument("--step", type=float, default=1.0, help="MB of peak growth between lines (default 1)")
    parser.add_argument("--objects-at", type=int, default=0, help="count live objects when N jobs are queued")
    args = parser.parse_args()
    workload = read_swf(args.trace)
    if args.jobs:
        workload.jobs = islice(workload.jobs, args.jobs)
    watch = Watch(create_policy(args.policy), args.step, args.objects_at)
    with tempfile.TemporaryDirectory() as out:
        simulate(platform_from_swf_header(workload.header), workload, watch, out, delivery=Delivery.BATSIM)
    print(f"longest queue {watch.longest}, most running {watch.most_running}, peak {peak_mb():.1f} MB")


if __name__ == "__main__":
    main()
