"""Slurm: a model of Slurm 22.05's scheduler, and the tools that validate it against a real Slurm on loopback.

- `conf`: the slurm.conf subset both the model and the real cluster read;
- `priority`, `select`, `backfill`: the pieces of the `slurm` policy (scheduling/policies/slurm.py);
- `cluster`, `replay`: a real slurmctld + slurmd cluster on 127.0.0.1 under an accelerated clock;
- `compare`: real vs simulated schedules, job by job.
"""
