"""SimGrid platforms: hosts and clusters in nested zones, roles, pstates, properties, one warning, errors."""

from __future__ import annotations

import contextlib
import gzip
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clustersim.errors import InputError
from clustersim.platform.model import Unit
from clustersim.platform.simgrid import IgnoredPlatformElements, read_simgrid_platform

PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <config id="General">
    <prop id="maxmin/precision" value="1e-9"/>
  </config>
  <zone id="AS0" routing="Full">
    <host id="master_host" speed="100Mf">
      <prop id="role" value="master"/>
    </host>
    <host id="h0" speed="100Mf, 50Mf, 20Mf" core="4">
      <prop id="memory" value="8G"/>
      <prop id="watt_per_state" value="100:200, 90:150, 80:100"/>
    </host>
    <zone id="inner" routing="Full">
      <host id="h1" speed="1Gf" pstate="0"/>
      <host id="store" speed="1Gf"><prop id="role" value="storage"/></host>
    </zone>
    <link id="l0" bandwidth="10GBps" latency="0us"/>
    <link id="l1" bandwidth="10GBps" latency="0us"/>
    <route src="h0" dst="h1"><link_ctn id="l0"/><link_ctn id="l1"/></route>
    <backbone id="bb" bandwidth="1GBps" latency="1us"/>
  </zone>
</platform>
"""


def zone(hosts: str, newline: bool = False) -> str:
    """A platform with one zone holding `hosts`; with `newline`, the hosts start on line 2."""
    separator = "\n" if newline else ""
    return f'<platform version="4.1">{separator}<zone id="z" routing="Full">{hosts}</zone></platform>'


def write(tmp_path: Path, text: str, name: str = "platform.xml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def read_quietly(path: Path) -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IgnoredPlatformElements)
        return read_simgrid_platform(path)


def test_compute_hosts_in_document_order_without_master_and_storage(tmp_path: Path) -> None:
    with pytest.warns(IgnoredPlatformElements):
        platform = read_simgrid_platform(write(tmp_path, PLATFORM))
    assert platform.unit is Unit.HOST
    assert platform.name == "platform"
    assert [(n.id, n.name) for n in platform.nodes] == [(0, "h0"), (1, "h1")]
    h0, h1 = platform.nodes
    assert (h0.speed, h0.cores, h0.memory) == (1e8, 4, 8 * 10**9)
    assert h0.properties["speeds"] == "100000000.0, 50000000.0, 20000000.0"
    assert h0.properties["watt_per_state"] == "100:200, 90:150, 80:100"
    assert (h1.speed, h1.cores, h1.memory) == (1e9, 1, 0)
    assert "speeds" not in h1.properties


def test_exactly_one_warning_lists_the_ignored_elements(tmp_path: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        read_simgrid_platform(write(tmp_path, PLATFORM))
    assert len(caught) == 1
    assert caught[0].category is IgnoredPlatformElements
    message = str(caught[0].message)
    assert "1 <backbone>, 1 <config>, 2 <link>, 1 <route>" in message
    assert "link_ctn" not in message  # children of ignored elements are not listed again


def test_no_warning_without_ignored_elements(tmp_path: Path) -> None:
    text = '<platform version="4.1"><zone id="z" routing="None"><host id="a" speed="1f"/></zone></platform>'
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(read_simgrid_platform(write(tmp_path, text)).nodes) == 1


def test_pstate_attribute_selects_the_node_speed(tmp_path: Path) -> None:
    text = zone('<host id="a" speed="100Mf, 50Mf" pstate="1"/>')
    assert read_quietly(write(tmp_path, text)).nodes[0].speed == 5e7  # type: ignore[attr-defined]


def test_clusters_expand_radicals_with_prefix_and_suffix(tmp_path: Path) -> None:
    text = """<platform version="4.1">
  <zone id="world" routing="Full">
    <host id="master" speed="1Gf"><prop id="role" value="master"/></host>
    <cluster id="c" prefix="node-" suffix=".lan" radical="0-2,10,20-21" speed="2Gf" core="8" bw="1GBps">
      <prop id="memory" value="64Gi"/>
      <prop id="rack" value="r1"/>
    </cluster>
  </zone>
</platform>"""
    platform = read_quietly(write(tmp_path, text))
    names = [n.name for n in platform.nodes]  # type: ignore[attr-defined]
    assert names == ["node-0.lan", "node-1.lan", "node-2.lan", "node-10.lan", "node-20.lan", "node-21.lan"]
    node = platform.nodes[3]  # type: ignore[attr-defined]
    assert (node.id, node.speed, node.cores, node.memory) == (3, 2e9, 8, 64 * 2**30)
    assert node.properties == {"memory": "64Gi", "rack": "r1"}


def test_name_order_numbers_hosts_as_simgrid_lists_them(tmp_path: Path) -> None:
    text = zone('<cluster id="c" prefix="n" suffix="" radical="0-10" speed="1f"/>')
    path = write(tmp_path, text)
    by_name = [n.name for n in read_simgrid_platform(path, order="name").nodes]
    assert by_name[:4] == ["n0", "n1", "n10", "n2"]


def test_batsim_3_platforms_with_as_and_power(tmp_path: Path) -> None:
    text = '<platform version="3"><AS id="a" routing="Full"><host id="h" power="1E9"/></AS></platform>'
    assert read_quietly(write(tmp_path, text)).nodes[0].speed == 1e9  # type: ignore[attr-defined]


def test_gzipped_platform(tmp_path: Path) -> None:
    path = tmp_path / "p.xml.gz"
    path.write_bytes(gzip.compress(PLATFORM.encode()))
    assert len(read_quietly(path).nodes) == 2  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("element", "expected"),
    [
        ('<host speed="1Gf"/>', "line 3: element <host> has no 'id' attribute"),
        (
            '<host id="h9"/>',
            "line 3: element <host id='h9'> has no 'speed' attribute (expected a speed such as '1Gf')",
        ),
        (
            '<host id="h9" speed="fast"/>',
            "line 3: element <host id='h9'>, attribute 'speed': 'fast' is not a speed",
        ),
        ('<host id="h9" speed="1Gf" core="0"/>', "attribute 'core': '0' is not a number of cores >= 1"),
        (
            '<host id="h9" speed="1Gf" pstate="2"/>',
            "attribute 'pstate': 2 is not one of the 1 speed(s) given",
        ),
        (
            '<host id="h9" speed="1Gf"><prop id="memory" value="lots"/></host>',
            "element <prop id='memory'>, attribute 'value': 'lots' is not a quantity",
        ),
        ('<host id="h9" speed="1Gf"><prop value="x"/></host>', "element <prop> has no 'id' attribute"),
        ('<host id="h0" speed="1Gf"/>', "line 3: host 'h0' is defined twice (first on line 2)"),
        ('<cluster id="c" prefix="n" speed="1f"/>', "element <cluster id='c'> has no 'radical' attribute"),
        (
            '<cluster id="c" prefix="n" radical="5-2" speed="1f"/>',
            "attribute 'radical': '5-2' is not a range",
        ),
        (
            '<cluster id="c" prefix="n" radical="a-b" speed="1f"/>',
            "attribute 'radical': 'a-b' is not a number",
        ),
        ('<host id="z" speed="0f"/>', "compute host 'z' has speed 0; it must be > 0"),
    ],
)
def test_bad_elements_name_line_element_and_attribute(tmp_path: Path, element: str, expected: str) -> None:
    text = zone(f'<host id="h0" speed="1Gf"/>\n{element}\n', newline=True)
    with pytest.raises(InputError) as error:
        read_quietly(write(tmp_path, text))
    assert expected in str(error.value)
    assert str(error.value).startswith(str(tmp_path / "platform.xml"))


def test_malformed_xml_gives_the_line(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"platform.xml, line 3: malformed XML: mismatched tag") as error:
        read_simgrid_platform(write(tmp_path, '<platform version="4.1">\n<zone id="z">\n</platform>\n'))
    assert error.value.line == 3


def test_wrong_root_and_no_compute_host(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="the root element is <zone>"):
        read_simgrid_platform(write(tmp_path, '<zone id="z"/>'))
    only_master = (
        '<platform version="4.1"><host id="m" speed="1f"><prop id="role" value="master"/></host></platform>'
    )
    with pytest.raises(InputError, match="no compute host"):
        read_simgrid_platform(write(tmp_path, only_master))


xmlish = st.lists(
    st.sampled_from(
        [
            '<platform version="4.1">',
            "</platform>",
            '<zone id="z" routing="Full">',
            "</zone>",
            '<host id="a" speed="1Gf">',
            '<host id="b" speed="x" core="-1">',
            "</host>",
            '<prop id="role" value="master"/>',
            '<prop id="memory" value="1Gi"/>',
            '<cluster id="c" prefix="n" radical="0-3" speed="1Gf">',
            "</cluster>",
            '<link id="l"/>',
            "<",
            ">",
            '"',
            "&",
            "<!--",
        ]
    )
    | st.text(max_size=10),
    max_size=15,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(xmlish)
def test_random_xmlish_text_is_read_or_refused_with_an_input_error(tmp_path: Path, parts: list[str]) -> None:
    path = tmp_path / "fuzz.xml"
    path.write_text("".join(parts))
    with contextlib.suppress(InputError):
        read_quietly(path)

