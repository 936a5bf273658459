"""The CLI's exit codes, one table for every command, so that a code means one thing whichever command ran."""

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_BAD_INPUT = 2
"""A bad file, key, option or name: the message names it."""
EXIT_REFUSED_DECISION = 3
"""A scheduler's decision was refused by the core (it would over-allocate, or names an unknown job...)."""
EXIT_UNFINISHED = 4
"""The run ended with jobs never started."""
EXIT_RUNS_FAILED = 5
"""`sweep`: some runs of the campaign failed (recorded in its results)."""
EXIT_PROTOCOL = 6
"""An external scheduler broke the Batsim protocol."""
EXIT_NO_ANSWER = 7
"""An external scheduler did not answer in time, or died."""
EXIT_DEADLOCK = 8
"""`serve-k8s`: pods pending, none running, and the scheduler silent for the deadlock timeout."""
EXIT_UNAVAILABLE = 9
"""`slurm-replay`: Slurm cannot be installed or started here."""
EXIT_INTERRUPTED = 130

MEANINGS = {
    EXIT_OK: "ok",
    EXIT_INTERNAL: "internal error",
    EXIT_BAD_INPUT: "bad input (the message names the file, line or field)",
    EXIT_REFUSED_DECISION: "a scheduler's decision was refused",
    EXIT_UNFINISHED: "jobs left unfinished",
    EXIT_RUNS_FAILED: "sweep: some runs failed",
    EXIT_PROTOCOL: "an external scheduler broke the Batsim protocol",
    EXIT_NO_ANSWER: "an external scheduler (or the API server) did not answer",
    EXIT_DEADLOCK: "serve-k8s: deadlock",
    EXIT_UNAVAILABLE: "slurm-replay: Slurm unavailable here",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C); outputs so far kept, marked partial in extra_metrics.csv",
}
"""Every exit code with what it means: the top-level --help lists them all from here."""
