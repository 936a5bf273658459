"""Jobs, their profiles, and the readers that stream them from workload files."""

from clustersim.workload.job import Job, id_order
from clustersim.workload.profiles import Composed, Delay, Parallel, ParallelHomogeneous, Profile

__all__ = ["Composed", "Delay", "Job", "Parallel", "ParallelHomogeneous", "Profile", "id_order"]
