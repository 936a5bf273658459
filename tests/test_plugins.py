"""One plugin mechanism: a registry refuses duplicates, lists valid names on a miss, and loads third-party
plugins from `package.module:Name` and from installed entry points."""

from __future__ import annotations

from pathlib import Path

import pytest

import clustersim
from clustersim import DuplicateNameError, PluginError, Registry, UnknownNameError


def test_a_name_registered_twice_is_refused_naming_the_first_owner() -> None:
    shapes: Registry[type] = Registry("shape")
    shapes.add("square", int)
    with pytest.raises(DuplicateNameError, match="shape 'square' is already registered \\(by int\\)"):
        shapes.add("square", float)


def test_an_unknown_name_lists_the_valid_ones() -> None:
    shapes: Registry[type] = Registry("shape")
    shapes.add("square", int)
    shapes.add("circle", float)
    with pytest.raises(UnknownNameError, match="unknown shape 'triangle'; valid: circle, square"):
        shapes.get("triangle")


def test_a_dotted_path_loads_without_registration() -> None:
    shapes: Registry[object] = Registry("shape")
    assert shapes.get("clustersim:IntervalSet") is clustersim.IntervalSet
    with pytest.raises(PluginError, match=r"cannot import module 'no\.such'"):
        shapes.get("no.such:Thing")


def test_built_in_policy_names_cannot_be_taken_again() -> None:
    assert "easy" in clustersim.policy_names()
    with pytest.raises(DuplicateNameError, match="policy 'easy' is already registered"):
        clustersim.register_policy("easy")(type("Mine", (), {}))


def test_an_installed_entry_point_is_a_policy_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A distribution on sys.path declaring `[clustersim.policies] lifo = ...` (as `pip install` would)."""
    (tmp_path / "lifo_plugin.py").write_text(
        "from clustersim import StartJob\n\n"
        "class Lifo:\n"
        "    def __init__(self, tag: str = ''):\n        self.tag = tag\n"
        "    def begin(self, view): pass\n"
        "    def end(self, view): pass\n"
        "    def decide(self, now, events, view):\n"
        "        for job in reversed(list(view.pending.values())):\n"
        "            if job.nb_res <= len(view.free):\n"
        "                yield StartJob(job.key, view.free.lowest(job.nb_res))\n"
    )
    info = tmp_path / "lifo_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lifo-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[clustersim.policies]\nlifo = lifo_plugin:Lifo\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from clustersim.policies.registry import POLICIES

    POLICIES.names()  # the built-ins registered, then forget 'lifo' (loaded below) when the test ends
    monkeypatch.setattr(POLICIES, "_entries", dict(POLICIES._entries))
    assert "lifo" in clustersim.policy_names()
    process = clustersim.create_policy("lifo", tag="x")
    assert isinstance(process, clustersim.RejectNeverFitting)
    with pytest.raises(UnknownNameError, match="option of policy 'lifo': 'colour'; valid: tag"):
        clustersim.create_policy("lifo", colour="red")
