"""Built-in policies, one file each; importing this package registers them all."""

from clustersim.scheduling.policies import conservative, easy, fcfs, kube, sjf, slurm

__all__ = ["conservative", "easy", "fcfs", "kube", "sjf", "slurm"]
