"""How fast `clustersim view` opens a run in headless Chromium: page build time, then, over several loads, the time
from navigation to the page drawn (wall) and the CPU time of the page's main thread (a shared machine inflates
wall time, much less this).

Target: the full HPC2N run (202,871 jobs) opens in under 3 s.
Run: clustersim run --workload ../shared/traces/HPC2N-2002-2.2-cln.swf.gz --policy easy -o /tmp/hpc2n
     python benchmarks/viewer.py /tmp/hpc2n [--workload ../shared/traces/HPC2N-2002-2.2-cln.swf.gz] [--loads 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from clustersim.view.browser import ARGS, ensure_chromium
from clustersim.view.command import serve_in_background
from clustersim.view.page import build_page
from clustersim.view.runs import read_run, with_owners


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directories", type=Path, nargs="+")
    parser.add_argument("--workload", type=Path)
    parser.add_argument("--loads", type=int, default=5)
    args = parser.parse_args()
    started, cpu = time.perf_counter(), time.process_time()
    runs = [read_run(d) for d in args.directories]
    if args.workload is not None:
        from clustersim.workload.load import load_workload

        owners = {job.id: job.user for job in load_workload(args.workload).jobs}
        runs = [with_owners(run, owners) for run in runs]
    html = build_page(runs).encode()
    print(f"page built in {time.perf_counter() - started:.1f} s wall, {time.process_time() - cpu:.1f} s CPU: "
          f"{len(html) / 1e6:.1f} MB")
    server, url = serve_in_background(html)
    from playwright.sync_api import sync_playwright

    ready, busy = [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=ensure_chromium(), args=list(ARGS))
        for _ in range(args.loads):
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            session = page.context.new_cdp_session(page)
            session.send("Performance.enable")
            page.goto(url)
            page.wait_for_function("window.clustersimViewer !== undefined", timeout=120_000)
            page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
            ready.append(page.evaluate("window.clustersimViewer.ready") / 1000)
            metrics = {m["name"]: m["value"] for m in session.send("Performance.getMetrics")["metrics"]}
            busy.append(metrics["ThreadTime"])
            page.close()
        browser.close()
    server.shutdown()
    print(f"drawn after {statistics.median(ready):.2f} s (median of {args.loads}; min {min(ready):.2f}, "
          f"max {max(ready):.2f}); main thread CPU {statistics.median(busy):.2f} s (min {min(busy):.2f})")


if __name__ == "__main__":
    main()
