"""API throughput of the facade: bindings/s with W concurrent pod watchers, and watch events/s delivered.

The facade serves N pending pods (1 cpu each, N nodes of 1 cpu); B client threads in a separate process bind
them over keep-alive HTTP while W watchers (same process as the clients) stream the pods. Usage:
python this.py [pods watchers binders]
"""

from __future__ import annotations

import http.client
import json
import multiprocessing
import socket
import sys
import tempfile
import threading
import time

from clustersim.kubernetes import KubeSession, PodWorkload, TimeControl, batkube_platform, batkube_pods
from clustersim.workload.stream import Workload


def _watch(port: int, counts: list[int], index: int, stop: threading.Event) -> None:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(b"GET /api/v1/pods?watch=true&resourceVersion=0 HTTP/1.1\r\nHost: x\r\n\r\n")
    sock.settimeout(1.0)
    while not stop.is_set():
        try:
            data = sock.recv(1 << 20)
        except TimeoutError:
            continue
        if not data:
            break
        counts[index] += data.count(b"}\n")  # one JSON line per event
    sock.close()


def _bind(port: int, names: list[str], done: list[int]) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port)
    for name in names:
        body = json.dumps({"metadata": {"name": name}, "target": {"name": f"node{name.split('-')[1]}"}})
        connection.request("POST", f"/api/v1/namespaces/default/pods/{name}/binding", body,
                           {"Content-Type": "application/json"})
        answer = connection.getresponse()
        answer.read()
        if answer.status == 201:
            done[0] += 1


def clients(port: int, nb_pods: int, nb_watchers: int, nb_binders: int, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    stop = threading.Event()
    counts = [0] * nb_watchers
    watchers = [threading.Thread(target=_watch, args=(port, counts, i, stop), daemon=True) for i in range(nb_watchers)]
    for w in watchers:
        w.start()
    time.sleep(1.0)
    before = sum(counts)
    names = [f"pod-{i}" for i in range(nb_pods)]
    done = [0]
    binders = [threading.Thread(target=_bind, args=(port, names[i::nb_binders], done)) for i in range(nb_binders)]
    start = time.perf_counter()
    for b in binders:
        b.start()
    for b in binders:
        b.join()
    elapsed = time.perf_counter() - start
    time.sleep(1.0)
    stop.set()
    out.put((done[0], elapsed, sum(counts) - before))


def main() -> None:
    nb_pods = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    nb_watchers = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    nb_binders = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    pods = PodWorkload(Workload.from_jobs(batkube_pods("burst", count=nb_pods, duration=1e6)))
    with tempfile.TemporaryDirectory() as tmp:
        session = KubeSession(batkube_platform(nodes=nb_pods), pods, tmp, TimeControl(deadlock_timeout=120), port=0)
        session.start()
        cpu = time.process_time()
        try:
            queue: multiprocessing.Queue = multiprocessing.Queue()  # type: ignore[type-arg]
            process = multiprocessing.Process(target=clients, args=(session.server.port, nb_pods, nb_watchers,
                                                                   nb_binders, queue))
            process.start()
            bound, elapsed, events = queue.get(timeout=600)
            process.join(30)
        finally:
            cpu = time.process_time() - cpu
            session.stop()
    print(f"facade API: {bound} bindings in {elapsed:.2f} s = {bound / elapsed:.0f} bindings/s with {nb_watchers} "
          f"pod watchers and {nb_binders} binding clients; {events} watch events delivered = "
          f"{events / elapsed:.0f} events/s; server CPU {cpu:.2f} s ({bound / max(cpu, 1e-9):.0f} bindings per "
          f"server CPU second)")


if __name__ == "__main__":
    main()
