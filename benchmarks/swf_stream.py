"""Time streaming a whole SWF trace through `read_swf` (no simulation): the reader's own speed in jobs/s.

Usage: python benchmarks/swf_stream.py ../shared/traces/HPC2N-2002-2.2-cln.swf.gz

Reports the best of 3 runs, in wall-clock and CPU time (CPU time is steadier on a busy machine).
"""

from __future__ import annotations

import sys
import time

from clustersim.workload.swf import read_swf


def main(path: str) -> None:
    best_wall = best_cpu = float("inf")
    for _ in range(3):
        wall, cpu = time.perf_counter(), time.process_time()
        workload = read_swf(path)
        count = sum(1 for _ in workload.jobs)
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    print(f"{path}: {count} jobs")
    print(f"  wall {best_wall:.3f} s = {count / best_wall:,.0f} jobs/s")
    print(f"  cpu  {best_cpu:.3f} s = {count / best_cpu:,.0f} jobs/s")
    for line in workload.skips.lines():
        print("  " + line)


if __name__ == "__main__":
    main(sys.argv[1])
