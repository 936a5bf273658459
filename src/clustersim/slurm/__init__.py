"""Slurm tools: validate the `slurm` policy (`clustersim.policies.slurm`) against a real Slurm on loopback.

- `cluster`, `replay`: a real slurmctld + slurmd cluster on 127.0.0.1 under an accelerated clock;
- `compare`: real vs simulated schedules, job by job;
- `commands`: the `clustersim slurm ...` commands.
"""
