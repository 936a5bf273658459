"""API throughput of the facade: bindings/s with W concurrent pod watchers, and watch events/s delivered.

The facade serves N pending pods (1 cpu each, N nodes of 1 cpu); B client threads in one process bind them over
keep-alive HTTP while W watch streams, read by one selector loop in another process, follow the pods. Server CPU
(user + system) is measured over the binding window only. Usage: python this.py [pods watchers binders]
"""

from __future__ import annotations

import http.client
import json
import multiprocessing
import os
import resource
import selectors
import socket
import sys
import tempfile
import threading
import time
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event

from clustersim.kubernetes import KubeSession, PodWorkload, TimeControl, batkube_platform, batkube_pods
from clustersim.workload.stream import Workload


def watchers(port: int, nb_watchers: int, initial: int, listed: Event, stop: Event,
             out: Queue) -> None:  # type: ignore[type-arg]
    """All watch streams in one thread (a selector loop), in their own process: they cost the binders no GIL."""
    chooser = selectors.DefaultSelector()
    for _ in range(nb_watchers):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(b"GET /api/v1/pods?watch=true&resourceVersion=0 HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.setblocking(False)
        chooser.register(sock, selectors.EVENT_READ)
    count = 0
    last: dict[object, bytes] = {}
    while not stop.is_set():
        if count >= initial:  # every stream has its initial list: binding may start
            listed.set()
        for key, _ in chooser.select(0.1):
            data = key.fileobj.recv(1 << 20)  # type: ignore[union-attr]
            if not data:
                chooser.unregister(key.fileobj)
                continue
            # One JSON line per event ends with "}\n", which a read may split.
            count += data.count(b"}\n") + (last.get(key.fd, b"") + data[:1] == b"}\n")
            last[key.fd] = data[-1:]
    out.put(count - initial)


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


def clients(port: int, nb_pods: int, nb_binders: int, out: Queue) -> None:  # type: ignore[type-arg]
    names = [f"pod-{i}" for i in range(nb_pods)]
    done = [0]
    binders = [threading.Thread(target=_bind, args=(port, names[i::nb_binders], done)) for i in range(nb_binders)]
    start = time.perf_counter()
    for b in binders:
        b.start()
    for b in binders:
        b.join()
    out.put((done[0], time.perf_counter() - start))


def main() -> None:
    nb_pods = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    nb_watchers = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    nb_binders = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    # One pod more than the benchmark binds, and no timeout: it stays pending, so simulated time stands still and
    # the only watch events are the bindings (no completions).
    pods = PodWorkload(Workload.from_jobs(batkube_pods("burst", count=nb_pods + 1, duration=1e6)))
    control = TimeControl(timeout=0, deadlock_timeout=600)
    with tempfile.TemporaryDirectory() as tmp:
        session = KubeSession(batkube_platform(nodes=nb_pods), pods, tmp, control, port=0)
        session.start()
        try:
            spawn = multiprocessing.get_context("spawn")  # forking a process full of server threads can deadlock
            results: Queue = spawn.Queue()  # type: ignore[type-arg]
            listed, stop = spawn.Event(), spawn.Event()
            initial = (nb_pods + 1) * nb_watchers
            watching = spawn.Process(target=watchers, args=(session.server.port, nb_watchers, initial, listed, stop,
                                                            results))
            watching.start()
            listed.wait(600)
            time.sleep(0.2)
            before = os.times()
            binding = spawn.Process(target=clients, args=(session.server.port, nb_pods, nb_binders, results))
            binding.start()
            bound, elapsed = results.get(timeout=600)
            after = os.times()
            user, system = after.user - before.user, after.system - before.system
            cpu = user + system
            time.sleep(1.0)
            stop.set()
            events = results.get(timeout=60)
            binding.join(30)
            watching.join(30)
        finally:
            session.stop()
    print(f"facade API: {bound} bindings in {elapsed:.2f} s = {bound / elapsed:.0f} bindings/s with {nb_watchers} "
          f"pod watchers and {nb_binders} binding clients; {events} watch events delivered = "
          f"{events / elapsed:.0f} events/s; server CPU {cpu:.2f} s while binding "
          f"({user:.2f} user + {system:.2f} system) "
          f"({bound / max(cpu, 1e-9):.0f} bindings per server CPU second); server peak RSS "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
