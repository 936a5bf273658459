"""Cluster descriptions: node groups expanded into numbered nodes; every key and type checked by path."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clustersim.errors import InputError
from clustersim.platform.cluster_file import parse_cluster, read_cluster_file
from clustersim.platform.model import Unit

SMALL = """\
name: small
unit: host        # or core
nodes:
  - count: 4
    prefix: node
    cores: 8
    speed: 1e9
    memory: 64Gi
    gpus: 0
    extras: {fpga: 1}
    properties: {rack: "a"}
  - count: 2
    prefix: big
    cores: 32
    speed: 2Gf
    memory: 256Gi
    gpus: 4
"""


def write(tmp_path: Path, text: str, name: str = "cluster.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def error_of(document: object) -> InputError:
    with pytest.raises(InputError) as error:
        parse_cluster(document, source="c.yaml")
    return error.value


def test_groups_expand_into_globally_numbered_nodes(tmp_path: Path) -> None:
    platform = read_cluster_file(write(tmp_path, SMALL))
    assert platform.name == "small"
    assert platform.unit is Unit.HOST
    assert [(n.id, n.name) for n in platform.nodes] == [
        (0, "node0"),
        (1, "node1"),
        (2, "node2"),
        (3, "node3"),
        (4, "big0"),
        (5, "big1"),
    ]
    first, big = platform.nodes[0], platform.nodes[4]
    assert (first.cores, first.speed, first.memory, first.gpus) == (8, 1e9, 64 * 2**30, 0)
    assert first.extras == {"fpga": 1}
    assert first.properties == {"rack": "a"}
    assert (big.cores, big.speed, big.memory, big.gpus) == (32, 2e9, 256 * 2**30, 4)
    assert platform.nb_resources == 6


def test_core_unit_counts_cores(tmp_path: Path) -> None:
    platform = read_cluster_file(write(tmp_path, SMALL.replace("unit: host", "unit: core")))
    assert platform.unit is Unit.CORE
    assert platform.nb_resources == 4 * 8 + 2 * 32


def test_defaults_and_name_from_file(tmp_path: Path) -> None:
    platform = read_cluster_file(write(tmp_path, "nodes:\n  - count: 2\n", name="tiny.yml"))
    assert platform.name == "tiny"
    assert [(n.name, n.cores, n.speed, n.memory) for n in platform.nodes] == [
        ("node0", 1, 1.0, 0),
        ("node1", 1, 1.0, 0),
    ]


def test_same_prefix_in_two_groups_continues_the_numbering() -> None:
    platform = parse_cluster({"nodes": [{"count": 2}, {"count": 1, "cores": 4}]})
    assert [n.name for n in platform.nodes] == ["node0", "node1", "node2"]


def test_json_cluster_file(tmp_path: Path) -> None:
    document = {"name": "j", "nodes": [{"count": 1, "memory": "500Mi", "speed": 100}]}
    platform = read_cluster_file(write(tmp_path, json.dumps(document), name="c.json"))
    assert (platform.nodes[0].memory, platform.nodes[0].speed) == (500 * 2**20, 100.0)


def test_unknown_keys_are_named_with_the_valid_ones() -> None:
    error = error_of({"nodes": [{"count": 1, "core": 4}]})
    assert error.field == "nodes[0].core"
    message = str(error)
    assert "unknown key 'core' (did you mean 'cores'?)" in message
    assert "valid keys: cores, count, extras, gpus, memory, power, prefix, properties, speed" in message
    assert "unknown key 'nodess'" in str(error_of({"nodess": []}))


@pytest.mark.parametrize(
    ("group", "field", "expected"),
    [
        ({"cores": "eight"}, "nodes[1].cores", "expected an integer >= 1, got 'eight' (a string)"),
        ({"cores": 0}, "nodes[1].cores", "expected an integer >= 1, got 0"),
        ({"count": 1.5}, "nodes[1].count", "expected an integer >= 1, got 1.5"),
        ({"gpus": -1}, "nodes[1].gpus", "expected an integer >= 0"),
        ({"speed": "fast"}, "nodes[1].speed", "'fast' is not a speed"),
        ({"speed": 0}, "nodes[1].speed", "positive speed"),
        ({"memory": "64GB"}, "nodes[1].memory", "'64GB' is not a quantity"),
        ({"memory": [1]}, "nodes[1].memory", "expected a memory size"),
        ({"extras": {"fpga": "x"}}, "nodes[1].extras.fpga", "expected an integer >= 0"),
        ({"extras": [1]}, "nodes[1].extras", "expected a mapping"),
        ({"properties": {"rack": [1]}}, "nodes[1].properties.rack", "expected a string or a number"),
        ({"prefix": 3}, "nodes[1].prefix", "expected a string"),
    ],
)
def test_wrong_types_name_the_field_path(group: dict[str, object], field: str, expected: str) -> None:
    error = error_of({"nodes": [{"count": 1}, group]})
    assert error.field == field
    assert expected in str(error)
    assert str(error).startswith("c.yaml, field")


def test_structure_errors() -> None:
    assert "expected a mapping with 'nodes'" in str(error_of(["a"]))
    assert "missing key 'nodes'" in str(error_of({"name": "x"}))
    assert "at least one group" in str(error_of({"nodes": []}))
    assert error_of({"unit": "gpu", "nodes": [{}]}).field == "unit"
    assert error_of({"nodes": [{}], "name": 5}).field == "name"


def test_duplicate_node_names_are_refused() -> None:
    error = error_of({"nodes": [{"prefix": "a", "count": 11}, {"prefix": "a1", "count": 1}]})
    assert "node name 'a10' is used twice" in str(error)


def test_yaml_syntax_errors_give_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, "name: x\nnodes:\n  - count: 1\n   cores: [\n")
    with pytest.raises(InputError, match=r"cluster.yaml, line \d+: invalid YAML") as error:
        read_cluster_file(path)
    assert error.value.line is not None and error.value.line >= 3


def test_json_syntax_errors_give_the_line(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"c.json, line 2: invalid JSON"):
        read_cluster_file(write(tmp_path, '{"nodes":\n [}', name="c.json"))


yaml_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=8)
    | st.sampled_from(["1Gi", "1Gf", "host", "core", "node"]),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "name",
                    "unit",
                    "nodes",
                    "count",
                    "prefix",
                    "cores",
                    "speed",
                    "memory",
                    "gpus",
                    "extras",
                    "properties",
                    "x",
                ]
            ),
            children,
            max_size=5,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(yaml_values)
def test_random_documents_are_read_or_refused_with_an_input_error(document: object) -> None:
    for candidate in (document, {"nodes": [document]}, {"nodes": document}):
        with contextlib.suppress(InputError):
            parse_cluster(candidate)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=120) | yaml_values.map(lambda d: yaml.safe_dump(d)))
def test_random_yaml_text_is_read_or_refused_with_an_input_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "fuzz.yaml"
    path.write_text(text)
    with contextlib.suppress(InputError):
        read_cluster_file(path)


def test_a_platform_too_large_to_simulate_is_refused_not_built() -> None:
    assert "more than 1000000 nodes" in str(error_of({"nodes": [{"count": 10**12}]}))
    assert "more than 10000000 cores" in str(error_of({"nodes": [{"count": 1000, "cores": 10**9}]}))
