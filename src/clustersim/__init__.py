"""clustersim: a deterministic discrete-event simulator of compute clusters and of the schedulers that run them.

The public API is what this module exports (`__all__`); everything else may change without notice.

    import clustersim

    platform = clustersim.load_platform("platform.yaml")
    workload = clustersim.load_workload("workload.json")
    result = clustersim.simulate(platform, workload, clustersim.create_policy("easy"), "out/")

A policy is any `DecisionProcess` (see docs/writing-a-policy.md): register it with `register_policy`, or name
it `package.module:Class` wherever a policy name is expected.
"""

from clustersim._io.formats import FileFormat
from clustersim._version import __version__
from clustersim.core.decisions import (
    CallMeLater,
    Decision,
    KillJob,
    RejectJob,
    SetJobMetadata,
    SetPState,
    StartJob,
    SubmitJob,
    SwitchOff,
    SwitchOn,
)
from clustersim.core.energy_meter import EnergySummary
from clustersim.core.events import (
    Event,
    FinalState,
    JobCompleted,
    JobSubmitted,
    NodesSwitched,
    NoMoreJobs,
    RequestedCall,
)
from clustersim.core.interface import DecisionProcess
from clustersim.core.outcome import JobOutcome, OutcomeSink
from clustersim.core.simulation import RunSummary
from clustersim.core.state import ClusterView, RunningJob
from clustersim.errors import (
    ClusterSimError,
    DecisionError,
    DuplicateNameError,
    InputError,
    PluginError,
    UnknownNameError,
)
from clustersim.intervals import IntervalSet
from clustersim.platform.load import load_platform
from clustersim.platform.model import Node, Platform, Unit
from clustersim.plugins import Registry
from clustersim.policies.base import Policy
from clustersim.policies.registry import RejectNeverFitting, create_policy, policy_names, register_policy
from clustersim.records.metrics import ScheduleMetrics
from clustersim.runner import RunResult, simulate
from clustersim.workload.job import Job
from clustersim.workload.load import load_workload
from clustersim.workload.profiles import Composed, Delay, Parallel, ParallelHomogeneous, Profile
from clustersim.workload.stream import Workload

__all__ = [
    "CallMeLater",
    "ClusterSimError",
    "ClusterView",
    "Composed",
    "Decision",
    "DecisionError",
    "DecisionProcess",
    "Delay",
    "DuplicateNameError",
    "EnergySummary",
    "Event",
    "FileFormat",
    "FinalState",
    "InputError",
    "IntervalSet",
    "Job",
    "JobCompleted",
    "JobOutcome",
    "JobSubmitted",
    "KillJob",
    "NoMoreJobs",
    "Node",
    "NodesSwitched",
    "OutcomeSink",
    "Parallel",
    "ParallelHomogeneous",
    "Platform",
    "PluginError",
    "Policy",
    "Profile",
    "Registry",
    "RejectJob",
    "RejectNeverFitting",
    "RequestedCall",
    "RunResult",
    "RunSummary",
    "RunningJob",
    "ScheduleMetrics",
    "SetJobMetadata",
    "SetPState",
    "StartJob",
    "SubmitJob",
    "SwitchOff",
    "SwitchOn",
    "Unit",
    "UnknownNameError",
    "Workload",
    "__version__",
    "create_policy",
    "load_platform",
    "load_workload",
    "policy_names",
    "register_policy",
    "simulate",
]
