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
