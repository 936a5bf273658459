"""Run directory names, derived only from a run's own axis values so a restart finds the same directories.

`policy=easy,load_scale=1.2,seed=3`: keys in axis order, values as written in the experiment file. A value
that is not safe in a file name (a path with slashes, spaces...) is made safe and followed by a short hash of
the exact value, so two values never share a directory; a name too long for a file system is cut likewise.
Adding a value to an axis never renames the existing runs.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping

from clustersim._io.numbers import fmt

_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]")
MAX_VALUE = 40
MAX_NAME = 180


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def value_text(value: object) -> str:
    """How a value reads in names and tables: YAML's spelling for scalars, items joined by `_` for lists."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return fmt(value)
    if isinstance(value, int | str):
        return str(value)
    if isinstance(value, list | tuple):
        return "_".join(value_text(v) for v in value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def value_token(value: object) -> str:
    """A file-name-safe token for a value, unique per value."""
    text = value_text(value)
    safe = _UNSAFE.sub("_", text)
    if isinstance(value, str) and (safe != text or not safe or safe in (".", "..")):
        return f"{safe[:MAX_VALUE]}~{_short_hash(text)}"
    if len(safe) > MAX_VALUE:
        return f"{safe[:MAX_VALUE]}~{_short_hash(json.dumps(value, default=str))}"
    return safe


def run_name(values: Mapping[str, object]) -> str:
    """The directory name of a run from its axis (or explicit run) values, in order; `run` when it has none."""
    if not values:
        return "run"
    name = ",".join(f"{key}={value_token(value)}" for key, value in values.items())
    if len(name) > MAX_NAME:
        name = f"{name[:MAX_NAME]}~{_short_hash(name)}"
    return name
