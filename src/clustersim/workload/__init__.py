"""Jobs, their profiles, and the readers that stream them from workload files."""

from clustersim.workload.batsim_json import read_batsim_workload
from clustersim.workload.batsim_writer import write_batsim_workload
from clustersim.workload.job import Job, id_order
from clustersim.workload.load import load_workload
from clustersim.workload.profiles import Composed, Delay, Parallel, ParallelHomogeneous, Profile
from clustersim.workload.stream import SkipReport, Workload
from clustersim.workload.swf import read_swf

__all__ = ["Composed", "Delay", "Job", "Parallel", "ParallelHomogeneous", "Profile", "id_order"]
__all__ += [
    "SkipReport",
    "Workload",
    "load_workload",
    "read_batsim_workload",
    "read_swf",
    "write_batsim_workload",
]
