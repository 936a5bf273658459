"""A model of Slurm 22.05's scheduler, the `slurm` policy.

- `conf`: the slurm.conf subset both the model and a real Slurm cluster read;
- `priority`, `select`, `backfill`: the pieces of the policy (`policy.py`).

The tools that validate the model against a real Slurm on loopback are a front end: `clustersim.slurm`.
"""
