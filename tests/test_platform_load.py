"""Recognising platform formats: SimGrid XML or cluster descriptions."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from clustersim.errors import InputError
from clustersim.platform.load import load_platform, platform_format

XML = (
    '<?xml version="1.0"?>\n'
    '<platform version="4.1"><zone id="z" routing="None"><host id="a" speed="1Gf"/></zone></platform>'
)
YAML = "name: c\nnodes:\n  - count: 3\n"


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("p.xml", XML, "simgrid"),
        ("p.txt", XML, "simgrid"),
        ("c.yaml", YAML, "cluster"),
        ("c.yml", YAML, "cluster"),
        ("c.json", '{"nodes": [{"count": 1}]}', "cluster"),
        ("c.conf", YAML, "cluster"),
        ("c.conf", "# a comment\n---\nnodes: []\n", "cluster"),
    ],
)
def test_platform_format(tmp_path: Path, name: str, content: str, expected: str) -> None:
    path = tmp_path / name
    path.write_text(content)
    assert platform_format(path) == expected


def test_load_platform_reads_both_formats(tmp_path: Path) -> None:
    (tmp_path / "p.xml").write_text(XML)
    (tmp_path / "c.yaml").write_text(YAML)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_platform(tmp_path / "p.xml").nodes[0].name == "a"
    assert len(load_platform(tmp_path / "c.yaml").nodes) == 3


def test_unknown_platform_format_lists_the_supported_ones(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("just some words\n")
    with pytest.raises(InputError, match="unrecognised platform format; supported: SimGrid"):
        load_platform(path)


def test_host_order_by_name_as_batsim_numbers_simgrid_hosts(tmp_path: Path) -> None:
    hosts = "".join(f'<host id="n{i}" speed="1f" core="1"/>' for i in range(11))
    (tmp_path / "p.xml").write_text(f'<?xml version="1.0"?>\n<platform version="4.1"><zone id="z" routing="Full">'
                                    f"{hosts}</zone></platform>\n")
    assert [n.name for n in load_platform(tmp_path / "p.xml").nodes][:3] == ["n0", "n1", "n2"]
    assert [n.name for n in load_platform(tmp_path / "p.xml", host_order="name").nodes][:3] == ["n0", "n1", "n10"]
    assert load_platform(tmp_path / "p.xml", host_order="name").nodes[2].id == 2
