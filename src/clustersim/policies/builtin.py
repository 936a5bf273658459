"""The built-in scheduling policies; importing this module registers them all by name."""

from clustersim.policies import kube
from clustersim.policies.batch import conservative, easy, fcfs, sjf
from clustersim.policies.slurm import policy as slurm

__all__ = ["conservative", "easy", "fcfs", "kube", "sjf", "slurm"]
