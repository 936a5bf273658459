"""Batsim's external events file: machines that become unavailable and available again over time.

One JSON object per line (blank lines are skipped), in non-decreasing time order, as Batsim's `--events`:

```
{"timestamp": 10, "type": "machine_unavailable", "resources": "0-2"}
{"timestamp": 50.5, "type": "machine_available", "resources": "0-1 2"}
```

`resources` is an interval set of host ids (the platform's allocation units), written as Batsim writes them.
Other event types (Batsim's generic events) are refused by name: clustersim would have no one to send them to.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from clustersim._io.textfile import StrPath, open_text
from clustersim.errors import InputError
from clustersim.intervals import IntervalSet

EVENT_TYPES = ("machine_unavailable", "machine_available")


@dataclass(frozen=True, slots=True)
class AvailabilityChange:
    """At `time`, `resources` become unavailable (`available` False) or available again."""

    time: float
    resources: IntervalSet
    available: bool


def read_events(path: StrPath, nb_resources: int) -> list[AvailabilityChange]:
    """Read an external events file for a platform of `nb_resources` hosts; errors name the line."""
    source = str(path)
    changes: list[AvailabilityChange] = []
    try:
        with open_text(path) as lines:
            for number, line in enumerate(lines, start=1):
                if line.strip():
                    changes.append(_change(line, source, number, nb_resources, changes))
    except (OSError, UnicodeDecodeError, EOFError) as error:
        raise InputError(source, f"cannot read the events file: {error}") from None
    return changes


def _change(
    line: str, source: str, number: int, nb_resources: int, earlier: list[AvailabilityChange]
) -> AvailabilityChange:
    def fail(message: str) -> InputError:
        return InputError(source, message, line=number)

    try:
        entry = json.loads(line)
    except json.JSONDecodeError as error:
        raise fail(f"not a JSON object: {error.msg} (column {error.colno})") from None
    if not isinstance(entry, dict):
        raise fail("expected a JSON object with 'timestamp', 'type' and 'resources'")
    kind = entry.get("type")
    if kind not in EVENT_TYPES:
        raise fail(f"unsupported event type {kind!r}; supported: {', '.join(EVENT_TYPES)}")
    time = entry.get("timestamp")
    if not isinstance(time, int | float) or isinstance(time, bool) or not 0 <= time < float("inf"):
        raise fail(f"'timestamp' must be a number >= 0, got {time!r}")
    if earlier and time < earlier[-1].time:
        raise fail(f"timestamp {time:g} is before the previous event's ({earlier[-1].time:g}): events go in time order")
    text = entry.get("resources")
    if not isinstance(text, str):
        raise fail(f"'resources' must be an interval set such as '0-2 5', got {text!r}")
    try:
        resources = IntervalSet.parse(text, source)
    except (InputError, ValueError) as error:
        raise fail(f"'resources': {getattr(error, 'reason', error)}") from None
    if resources and resources.intervals[-1][1] >= nb_resources:
        raise fail(f"'resources' {text!r} names hosts beyond the platform's {nb_resources} (ids 0-{nb_resources - 1})")
    return AvailabilityChange(float(time), resources, kind == "machine_available")
