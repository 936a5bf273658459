"""Queueing formulas the simulation is checked against.

With random routing, Poisson traffic splits into independent Poisson streams, so each of `c` replicas is an
M/G/1 processor-sharing queue, whose mean response time `S / (1 - rho)` does not depend on the distribution of
the work (it is insensitive). Erlang C is given for comparison: it is the M/M/c FIFO queue (one shared queue, one
request per server at a time), which is not how replicas serve requests here.
"""

from __future__ import annotations

import math


def ps_mean_response(arrival_rate: float, service_time: float, servers: int = 1) -> float:
    """Mean response time of `servers` M/G/1-PS queues fed by an evenly split Poisson stream."""
    rho = arrival_rate * service_time / servers
    if rho >= 1:
        return math.inf
    return service_time / (1 - rho)


def erlang_c(arrival_rate: float, service_time: float, servers: int) -> float:
    """Probability that a request waits in an M/M/c FIFO queue."""
    load = arrival_rate * service_time
    rho = load / servers
    if rho >= 1:
        return 1.0
    term = 1.0
    total = 1.0
    for k in range(1, servers):
        term *= load / k
        total += term
    top = term * load / servers / (1 - rho)
    return top / (total + top)


def mmc_mean_response(arrival_rate: float, service_time: float, servers: int) -> float:
    """Mean response time of an M/M/c FIFO queue: Erlang C wait plus service."""
    rho = arrival_rate * service_time / servers
    if rho >= 1:
        return math.inf
    wait = erlang_c(arrival_rate, service_time, servers) * service_time / (servers * (1 - rho))
    return wait + service_time
