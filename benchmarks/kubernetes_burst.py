"""Wall time of Batkube's `burst` (200 pods, 16 one-cpu nodes) through the facade, driven by the Python-client
scheduler (Batkube: 25-35 s at best). Prints wall and CPU time, makespan and mean wait."""

from __future__ import annotations

import sys
import tempfile
import threading
import time

from kubernetes import config

from clustersim.kubernetes import KubeSession, PodWorkload, batkube_platform, batkube_pods
from clustersim.kubernetes.client_scheduler import ClientScheduler
from clustersim.workload.stream import Workload


def main() -> None:
    kind = sys.argv[1] if len(sys.argv) > 1 else "burst"
    with tempfile.TemporaryDirectory() as out:
        session = KubeSession(batkube_platform(), PodWorkload(Workload.from_jobs(batkube_pods(kind))), out, port=0)
        wall, cpu = time.perf_counter(), time.process_time()
        session.start()
        scheduler = ClientScheduler(config.new_client_from_config(str(session.kubeconfig)))
        thread = threading.Thread(target=scheduler.run, daemon=True)
        thread.start()
        try:
            result = session.wait(600)
        finally:
            scheduler.stop.set()
            session.stop()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    m = result.metrics
    print(f"{kind} through the facade (Python-client scheduler, same process): {wall:.2f} s wall, {cpu:.2f} s CPU "
          f"(facade + scheduler); makespan {m.makespan:g} s, mean wait {m.mean('waiting'):g} s, "
          f"{session.facade.nb_bindings} bindings")


if __name__ == "__main__":
    main()
