"""Policies: the decision processes the core asks, each registered by name.

- `base.Policy`, `registry`: the base class of the built-in batch policies and the registry of policies;
- `batch`: fcfs, sjf, easy and conservative backfilling;
- `kube`: kube-scheduler's framework (queue sort, filters, scores);
- `slurm`: a model of Slurm 22.05's scheduler (slurm.conf, priority, select, backfill);
- `power`: power policies (which nodes to switch off and on) and their composition with a scheduler.

`builtin` imports them all (and so registers them); importing this package alone registers nothing.
"""
