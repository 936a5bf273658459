"""Platforms guessed from an SWF header: one host per processor by default, or multi-core nodes."""

from __future__ import annotations

import pytest

from clustersim.errors import InputError
from clustersim.platform.model import Unit
from clustersim.platform.swf_header import platform_from_swf_header


def test_one_single_core_host_per_processor_by_default() -> None:
    platform = platform_from_swf_header({"MaxProcs": "240", "MaxNodes": "120"}, speed=2e9)
    assert platform.unit is Unit.HOST
    assert platform.nb_resources == 240
    assert {(n.cores, n.speed) for n in platform.nodes} == {(1, 2e9)}
    assert platform.nodes[5].name == "host5"


def test_cores_per_node_splits_processors_among_nodes() -> None:
    platform = platform_from_swf_header({"MaxProcs": "9216", "MaxNodes": "1152"}, cores_per_node=True)
    assert platform.unit is Unit.CORE
    assert len(platform.nodes) == 1152
    assert platform.nodes[0].cores == 8
    assert platform.nb_resources == 9216


def test_header_values_with_comments_use_their_leading_number() -> None:
    assert platform_from_swf_header({"MaxProcs": "338 (batch partition)"}).nb_resources == 338


def test_missing_maxprocs_suggests_a_platform_file() -> None:
    with pytest.raises(InputError, match=r"trace.swf, field 'MaxProcs': .*no 'MaxProcs' header.*--platform"):
        platform_from_swf_header({"MaxNodes": "4"}, source="trace.swf")


@pytest.mark.parametrize("value", ["-1", "0", "many", ""])
def test_unusable_maxprocs(value: str) -> None:
    with pytest.raises(InputError, match="MaxProcs"):
        platform_from_swf_header({"MaxProcs": value})


def test_cores_per_node_needs_maxnodes_dividing_maxprocs() -> None:
    with pytest.raises(InputError, match="no 'MaxNodes' header"):
        platform_from_swf_header({"MaxProcs": "2004"}, cores_per_node=True)
    with pytest.raises(InputError, match=r"MaxProcs \(2004\) is not a multiple of MaxNodes \(151\)"):
        platform_from_swf_header({"MaxProcs": "2004", "MaxNodes": "151"}, cores_per_node=True)


def test_speed_must_be_positive() -> None:
    with pytest.raises(ValueError, match="speed"):
        platform_from_swf_header({"MaxProcs": "4"}, speed=0)


def test_a_header_too_large_to_simulate_is_refused_not_built() -> None:
    with pytest.raises(InputError, match="MaxProcs 1000000000000 is more processors than clustersim simulates"):
        platform_from_swf_header({"MaxProcs": "1000000000000"})
