"""Where the runs of a campaign execute: local processes, or a Dask cluster.

Both run the same function (`execute.execute`) on the same picklable tasks and only differ in who calls it, so
they give the same outputs. Results are yielded as runs finish, in any order: the campaign builds its tables
from the run directories, in plan order, never from the order of completion.

A Dask cluster's workers write into the campaign directory themselves, so on a multi-machine cluster it (and
the input files) must be on a file system shared under the same path by every worker, with clustersim
installed on the workers.
"""

from __future__ import annotations

import os
import sys
import threading
import uuid
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from multiprocessing import get_all_start_methods, get_context
from typing import Any, Protocol

from clustersim._io.extras import require
from clustersim._io.system import alive
from clustersim.experiments.execute import RunRecord, RunTask, execute


def machine_workers() -> int:
    """How many processes the machine (or the CPU set this process may use) runs at once."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class Backend(Protocol):
    """Executes runs and yields their records as they finish."""

    def run(self, tasks: Sequence[RunTask]) -> Iterator[RunRecord]: ...

    def describe(self) -> str: ...


def _lost(task: RunTask, error: BaseException) -> RunRecord:
    """The record of a run whose worker died or could not be reached (the run itself did not report)."""
    return RunRecord(task.name, "failed", f"the worker running it failed: {type(error).__name__}: {error}")


def start_method() -> str:
    """How to start worker processes: `fork` when it is safe, else `forkserver` (or `spawn`).

    `fork` starts a worker in milliseconds with clustersim already imported, where the others pay an
    interpreter start and the imports (about a second): that is most of the overhead of a campaign of short runs.
    But forking a process that runs other threads (a Dask client, a user's threads) can deadlock the child, and
    macOS frameworks do not survive it, so `fork` is used only on Linux by a single-threaded process.
    """
    methods = get_all_start_methods()
    if sys.platform == "linux" and "fork" in methods and threading.active_count() == 1:
        return "fork"
    return "forkserver" if "forkserver" in methods else "spawn"


def _follow_parent(parent: int) -> None:
    """Pool initializer: the worker exits when the campaign's process is gone.

    A ProcessPoolExecutor's workers wait on their queue forever: after `kill -9` of `sweep` they would finish
    their run and then sleep as orphans. A daemon thread checks every half second that the parent still runs.
    """

    def watch() -> None:
        while alive(parent):
            threading.Event().wait(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


class LocalBackend:
    """A pool of local processes, one run per process at a time; `workers` defaults to the machine's cores.

    With `forkserver` or `spawn` (see `start_method`), workers import the main module again: a script that
    runs a campaign needs the usual `if __name__ == "__main__":` guard.
    """

    def __init__(self, workers: int | None = None):
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.workers = workers or machine_workers()

    def describe(self) -> str:
        return f"{self.workers} local process{'es' if self.workers > 1 else ''}"

    def run(self, tasks: Sequence[RunTask]) -> Iterator[RunRecord]:
        if not tasks:
            return
        context = get_context(start_method())
        pool = ProcessPoolExecutor(
            max_workers=min(self.workers, len(tasks)), mp_context=context, initializer=_follow_parent,
            initargs=(os.getpid(),),
        )
        try:
            futures: dict[Future[RunRecord], RunTask] = {pool.submit(execute, task): task for task in tasks}
            for future in as_completed(futures):
                error = future.exception()
                yield future.result() if error is None else _lost(futures[future], error)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


class DaskBackend:
    """Runs on a Dask distributed cluster: an existing scheduler (`address`) or a `LocalCluster` started here.

    The local cluster has `workers` single-threaded worker processes (`processes=False`: threads in this
    process, which tests use to start fast; simulations hold the GIL, so they then run one at a time).
    """

    def __init__(self, address: str | None = None, workers: int | None = None, *, processes: bool = True):
        self.address = address
        self.workers = workers or machine_workers()
        self.processes = processes

    def describe(self) -> str:
        if self.address:
            return f"the Dask scheduler at {self.address}"
        return f"a Dask LocalCluster of {self.workers} worker{'s' if self.workers > 1 else ''}"

    def run(self, tasks: Sequence[RunTask]) -> Iterator[RunRecord]:
        if not tasks:
            return
        distributed: Any = require("distributed", "dask", "running a campaign on Dask")  # untyped: used via Any
        cluster: Any = None
        if self.address:
            client = distributed.Client(self.address)
        else:
            cluster = distributed.LocalCluster(
                n_workers=min(self.workers, len(tasks)),
                threads_per_worker=1,
                processes=self.processes,
                dashboard_address=None,
            )
            client = distributed.Client(cluster)
        try:
            futures = {
                client.submit(execute, task, key=f"clustersim-run-{task.name}-{uuid.uuid4().hex[:8]}"): task
                for task in tasks
            }
            for future in distributed.as_completed(futures):
                try:
                    record = future.result()
                except Exception as error:  # the worker died or the task was lost, not the run's own error
                    record = _lost(futures[future], error)
                yield record
            # Futures are released by the client when it closes.
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
