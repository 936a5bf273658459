"""batsched 1.4's energy variants, re-written in Python to drive clustersim over the Batsim protocol.

Each variant does what batsched's C++ source does (oar-team/batsched, src/algo/<variant>.cpp), decision for
decision, so that a case of the reference corpus run with it gives the outputs Batsim + batsched wrote.
`batsched_variants.Batsched` plays batsched's main loop (events gathered per message, one `make_decisions` per message).
"""
