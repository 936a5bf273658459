"""The core: event queue, simulation, cluster state, node tracker, power switching, energy meter, and the
decision contract (the decision-process interface, its events and decisions, job outcomes).

It imports only the layers below it (workload, platform, the private `_io`, errors and intervals); nothing in
it knows about a particular policy, reader or front end.
"""
