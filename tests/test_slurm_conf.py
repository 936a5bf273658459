"""The slurm.conf subset: hostlists, Slurm time formats, node and partition lines, the platform they make."""

from __future__ import annotations

from pathlib import Path

import pytest

from clustersim.errors import InputError
from clustersim.platform.model import Unit
from clustersim.policies.slurm.conf import (
    expand_hostlist,
    format_minutes,
    parse_slurm_conf,
    parse_time,
    platform_from_conf,
    read_slurm_conf,
)
from clustersim.slurm.cluster import loopback_conf

CONF = """
# a comment
ClusterName=test
SchedulerParameters=bf_interval=15,bf_resolution=30,bf_continue
PriorityType=priority/multifactor   # trailing comment
PriorityMaxAge=1-0
NodeName=DEFAULT RealMemory=2000
NodeName=n[1-3] CPUs=4 Port=17001-17003
NodeName=big CPUs=16 RealMemory=64000
PartitionName=DEFAULT MaxTime=30
PartitionName=small Nodes=n[1-3] Default=YES PriorityJobFactor=10
PartitionName=all Nodes=ALL MaxTime=2-0 DefaultTime=1:00:00 PriorityTier=2
"""


def test_hostlists_expand_ranges_lists_and_zero_padding() -> None:
    assert expand_hostlist("n[1-3,7],login") == ["n1", "n2", "n3", "n7", "login"]
    assert expand_hostlist("c[08-10]") == ["c08", "c09", "c10"]
    with pytest.raises(InputError):
        expand_hostlist("n[a-b]")


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("30", 1800.0), ("1:30", 90.0), ("2:00:00", 7200.0), ("7-0", 604800.0), ("1-2:03", 93780.0),
     ("1-0:0:5", 86405.0), ("INFINITE", None), ("UNLIMITED", None)],
)
def test_slurm_times_are_minutes_based(text: str, seconds: float | None) -> None:
    assert parse_time(text) == seconds


def test_time_limits_are_written_in_whole_minutes_rounded_up() -> None:
    assert [format_minutes(s) for s in (1, 60, 61, 3600, None)] == ["1", "1", "2", "60", "INFINITE"]


def test_nodes_partitions_and_settings_are_read() -> None:
    conf = parse_slurm_conf(CONF)
    assert [(n.name, n.cpus, n.real_memory, n.port) for n in conf.nodes] == [
        ("n1", 4, 2000, 17001), ("n2", 4, 2000, 17002), ("n3", 4, 2000, 17003), ("big", 16, 64000, None),
    ]
    small, everything = conf.partitions
    assert small.nodes == ("n1", "n2", "n3") and small.default and small.max_time == 1800.0
    assert small.priority_job_factor == 10 and small.priority_tier == 1
    assert everything.nodes == ("n1", "n2", "n3", "big") and everything.max_time == 172800.0
    assert everything.default_time == 3600.0 and everything.priority_tier == 2
    assert conf.default_partition is small
    assert conf.scheduler_parameters == {"bf_interval": "15", "bf_resolution": "30", "bf_continue": ""}
    assert conf.time("PriorityMaxAge", None) == 86400.0
    assert conf.get("prioritytype") == "priority/multifactor"


def test_the_platform_has_one_core_unit_per_cpu_numbered_node_by_node() -> None:
    platform = platform_from_conf(parse_slurm_conf(CONF))
    assert platform.unit is Unit.CORE and platform.nb_resources == 28
    assert platform.node_of(11).name == "n3" and platform.node_of(12).name == "big"
    assert platform.nodes[3].memory == 64000 * 2**20


def test_errors_name_the_file_and_line() -> None:
    with pytest.raises(InputError, match="line 2"):
        parse_slurm_conf("NodeName=n1 CPUs=4\nNodeName=n1 CPUs=2\n", source="x.conf")
    with pytest.raises(InputError, match="unknown nodes"):
        parse_slurm_conf("NodeName=n1\nPartitionName=p Nodes=n9\n")
    with pytest.raises(InputError, match="no NodeName"):
        parse_slurm_conf("ClusterName=x\n")
    with pytest.raises(InputError, match="CPUs"):
        parse_slurm_conf("NodeName=n1 CPUs=zero\n")


def test_included_files_are_read(tmp_path: Path) -> None:
    (tmp_path / "nodes.conf").write_text("NodeName=a CPUs=2\n")
    (tmp_path / "slurm.conf").write_text("Include nodes.conf\nPartitionName=p Nodes=a Default=YES\n")
    conf = read_slurm_conf(tmp_path / "slurm.conf")
    assert [n.name for n in conf.nodes] == ["a"] and conf.partitions[0].nodes == ("a",)


def test_the_loopback_conf_keeps_scheduling_and_replaces_plumbing(tmp_path: Path) -> None:
    conf = parse_slurm_conf(CONF + "AuthType=auth/munge\nMessageTimeout=5\n")
    text = loopback_conf(conf, tmp_path, [7000, 7001, 7002, 7003, 7004], speedup=20)
    assert "SchedulerParameters=bf_interval=15,bf_resolution=30,bf_continue" in text
    assert "AuthType=auth/none" in text and "auth/munge" not in text
    assert "MessageTimeout=200" in text and "SlurmdTimeout=6000" in text
    assert "NodeName=big NodeHostname=localhost NodeAddr=127.0.0.1 Port=7004 CPUs=16 RealMemory=64000" in text
    assert "PartitionName=all Nodes=n1,n2,n3,big Default=NO MaxTime=2880" in text
    assert "SlurmdParameters=config_overrides" in text and "ProctrackType=proctrack/pgid" in text
