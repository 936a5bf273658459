"""The one table of limits: how much any reader or command will build before refusing with a clear error.

A typo (`count: 1e12`, `NodeName=n[1-100000000]`, `machines: 1000000000000`) or a hostile input must give an
`InputError` naming the field and the limit, checked before anything of that size is allocated, never exhaust
memory or run for days. Every limit is far above what a real study needs; docs/limits.md lists them and
`LIMITS` is the table it is checked against.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_NODES = 1_000_000
"""Nodes (hosts, machines) of one platform, whatever the reader: cluster file, SimGrid XML, slurm.conf, SWF
header, Kubernetes Node manifests, the architectures' cell."""
MAX_UNITS = 10_000_000
"""Allocation units (hosts or cores) of one platform, and the cores (CPUs) of one node."""
MAX_JOBS = 10_000_000
"""Jobs (or pods) one input may describe up front: a Batsim JSON workload, Kubernetes manifests (replicas and
completions included), an autoscaling scenario's replicas and background pods. SWF traces are streamed and are
not bounded."""
MAX_RUNS = 100_000
"""Runs one experiment file may expand to (base x axes x runs), counted before any run is planned."""
MAX_SECONDS = 1e10
"""Simulated seconds any duration, time or walltime may have (about 317 years)."""
MAX_STEPS = 100_000_000
"""Time steps a stepped simulation may take (an autoscaling scenario's duration over its smallest step)."""
MAX_REQUESTS = 1_000_000_000
"""Requests an autoscaling run simulates one by one (per-request mode: the traffic's peak rate times the
duration), and requests per second of any traffic rate (the aggregate mode's arithmetic stays finite)."""
MAX_BODY_BYTES = 16 * 1024 * 1024
"""Bytes of one request body `serve-k8s` reads (kube-apiserver's default limit is 3 MiB per object)."""
MAX_HEADER_BYTES = 64 * 1024
"""Bytes of one request line and of its headers together in `serve-k8s`."""
MAX_JSON_DEPTH = 100
"""Nesting depth of a JSON request body in `serve-k8s` (deeper is refused with 400)."""
MAX_CONNECTIONS = 400
"""Connections `serve-k8s` serves at once (kube-apiserver's --max-requests-inflight); beyond it a new connection
is answered 429 with `Retry-After: 1`. kube-scheduler posts each event on a goroutine (and a connection) of its
own: 64 was exceeded by its bursts of FailedScheduling events."""
HEADER_TIMEOUT = 10.0
"""Seconds `serve-k8s` waits for a whole request line and headers (a slowloris client is dropped after it)."""
IDLE_TIMEOUT = 60.0
"""Seconds a `serve-k8s` keep-alive connection may stay idle between requests (watches are not idle)."""


@dataclass(frozen=True)
class Limit:
    name: str
    value: float
    what: str


LIMITS = (
    Limit("MAX_NODES", MAX_NODES, "nodes of one platform"),
    Limit("MAX_UNITS", MAX_UNITS, "allocation units (hosts or cores) of one platform; cores of one node"),
    Limit("MAX_JOBS", MAX_JOBS,
          "jobs or pods one input describes up front (Batsim JSON, Kubernetes manifests, autoscaling replicas)"),
    Limit("MAX_RUNS", MAX_RUNS, "runs of one experiment file"),
    Limit("MAX_SECONDS", MAX_SECONDS, "simulated seconds of any duration, time or walltime"),
    Limit("MAX_STEPS", MAX_STEPS, "time steps of a stepped simulation (autoscaling: duration / smallest step)"),
    Limit("MAX_REQUESTS", MAX_REQUESTS,
          "requests of one per-request autoscaling run (peak rate x duration); requests/s of any traffic rate"),
    Limit("MAX_BODY_BYTES", MAX_BODY_BYTES, "bytes of one serve-k8s request body (413 beyond)"),
    Limit("MAX_HEADER_BYTES", MAX_HEADER_BYTES, "bytes of one serve-k8s request line plus headers (431 beyond)"),
    Limit("MAX_JSON_DEPTH", MAX_JSON_DEPTH, "nesting depth of a serve-k8s JSON body (400 beyond)"),
    Limit("MAX_CONNECTIONS", MAX_CONNECTIONS, "serve-k8s connections served at once (429 with Retry-After: 1 beyond)"),
    Limit("HEADER_TIMEOUT", HEADER_TIMEOUT, "seconds serve-k8s waits for a request's line and headers"),
    Limit("IDLE_TIMEOUT", IDLE_TIMEOUT, "seconds a serve-k8s connection may stay idle between requests"),
)
"""The table docs/limits.md shows (tests/test_limits.py checks that the document matches it)."""

