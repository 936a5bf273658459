"""Reader of clustersim's own cluster description: groups of identical nodes, in YAML or JSON.

```yaml
name: small
unit: host          # or core: what one requested resource of a job means
nodes:
  - count: 4
    prefix: node    # node0..node3; ids are global, 0..N-1 in file order
    cores: 8
    speed: 1Gf      # flop/s per core: a number or a SimGrid speed (100Mf, 1.5Gf)
    memory: 64Gi    # a Kubernetes quantity; plain integers are bytes
    gpus: 0
    extras: {fpga: 1}
    properties: {rack: a}
```

Every key is checked: a misspelt key is an error listing the valid ones, never a silently ignored setting.
Node names continue across groups with the same prefix (a second `node` group starts where the first ended).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from clustersim._io.documents import load_document
from clustersim._io.fields import Checker, child, describe, item
from clustersim._io.quantities import parse_bytes, parse_speed
from clustersim._io.textfile import StrPath
from clustersim.platform.model import MAX_NODES, MAX_UNITS, Node, Platform, Unit
from clustersim.platform.power_model import PowerModel, SleepState, Transition

TOP_KEYS = ("name", "unit", "nodes")
GROUP_KEYS = ("count", "prefix", "cores", "speed", "memory", "gpus", "extras", "properties", "power")
POWER_KEYS = ("idle", "full", "sleep")
SLEEP_KEYS = ("watts", "switch_off", "switch_on")
TRANSITION_KEYS = ("seconds", "joules")


def read_cluster_file(path: StrPath) -> Platform:
    """Read a cluster description (YAML, or JSON which is read as JSON for exact error positions)."""
    source = str(path)
    document = load_document(path)
    return parse_cluster(document, source=source, default_name=Path(path).name.split(".")[0] or "cluster")


def parse_cluster(document: object, *, source: str = "<memory>", default_name: str = "cluster") -> Platform:
    """Build a platform from a decoded cluster description."""
    check = Checker(source)
    if not isinstance(document, Mapping):
        check.fail(
            "", f"expected a mapping with 'nodes' (and optionally 'name', 'unit'), got {describe(document)}"
        )
    top = check.mapping(document, "")
    check.known_keys(top, "", TOP_KEYS)
    name = check.string(top["name"], "name") if "name" in top else default_name
    unit_text = top.get("unit", "host")
    units = {u.value: u for u in Unit}
    if not isinstance(unit_text, str) or unit_text not in units:
        check.expected("unit", f"one of {', '.join(units)}", unit_text)
    groups = check.sequence(check.required(top, "nodes", ""), "nodes")
    if not groups:
        check.fail("nodes", "expected at least one group of nodes")
    nodes: list[Node] = []
    next_index: dict[str, int] = {}
    names: set[str] = set()
    for index, group in enumerate(groups):
        for node in _group(group, item("nodes", index), len(nodes), next_index, check):
            if node.name in names:
                check.fail(child(item("nodes", index), "prefix"), f"node name '{node.name}' is used twice")
            names.add(node.name)
            nodes.append(node)
    return Platform(nodes, units[unit_text], name=name)


def _group(
    group: object, field: str, first_id: int, next_index: dict[str, int], check: Checker
) -> list[Node]:
    spec = check.mapping(group, field)
    check.known_keys(spec, field, GROUP_KEYS)
    count = check.integer(spec.get("count", 1), child(field, "count"), 1)
    if first_id + count > MAX_NODES:
        check.fail(child(field, "count"), f"the platform would have more than {MAX_NODES} nodes")
    prefix = spec.get("prefix", "node")
    if not isinstance(prefix, str):
        check.expected(child(field, "prefix"), "a string", prefix)
    cores = check.integer(spec.get("cores", 1), child(field, "cores"), 1)
    if count * cores > MAX_UNITS:
        check.fail(child(field, "cores"), f"{count} nodes of {cores} cores are more than {MAX_UNITS} cores")
    speed = _speed(spec.get("speed", 1.0), child(field, "speed"), check)
    memory = _bytes(spec.get("memory", 0), child(field, "memory"), check)
    gpus = check.integer(spec.get("gpus", 0), child(field, "gpus"), 0)
    extras_field = child(field, "extras")
    extras = {
        key: check.integer(value, child(extras_field, key), 0)
        for key, value in check.mapping(spec.get("extras", {}), extras_field).items()
    }
    properties_field = child(field, "properties")
    properties = {
        key: _text(value, child(properties_field, key), check)
        for key, value in check.mapping(spec.get("properties", {}), properties_field).items()
    }
    power = _power(spec["power"], child(field, "power"), check) if "power" in spec else None
    start = next_index.get(prefix, 0)
    next_index[prefix] = start + count
    return [
        Node(first_id + i, f"{prefix}{start + i}", cores, speed, memory, gpus, extras, properties, power)
        for i in range(count)
    ]


def _power(value: object, field: str, check: Checker) -> PowerModel:
    """`power: {idle: W, full: W, sleep: {watts: W, switch_off: {seconds, joules}, switch_on: {...}}}`."""
    spec = check.mapping(value, field)
    check.known_keys(spec, field, POWER_KEYS)
    idle = check.number(check.required(spec, "idle", field), child(field, "idle"), 0)
    full = check.number(check.required(spec, "full", field), child(field, "full"), idle)
    sleep_states: tuple[SleepState, ...] = ()
    if "sleep" in spec:
        sleep_field = child(field, "sleep")
        sleep = check.mapping(spec["sleep"], sleep_field)
        check.known_keys(sleep, sleep_field, SLEEP_KEYS)
        watts = check.number(check.required(sleep, "watts", sleep_field), child(sleep_field, "watts"), 0)
        switches = []
        for key in ("switch_off", "switch_on"):
            switch_field = child(sleep_field, key)
            switch = check.mapping(check.required(sleep, key, sleep_field), switch_field)
            check.known_keys(switch, switch_field, TRANSITION_KEYS)
            seconds = check.number(check.required(switch, "seconds", switch_field), child(switch_field, "seconds"), 0)
            joules = check.number(check.required(switch, "joules", switch_field), child(switch_field, "joules"), 0)
            switches.append(Transition(seconds, joules))
        sleep_states = (SleepState(watts, switches[0], switches[1]),)
    return PowerModel(idle, full, sleep_states)


def _speed(value: object, field: str, check: Checker) -> float:
    if isinstance(value, str):
        try:
            speed = parse_speed(value)
        except ValueError as error:
            check.fail(field, str(error))
    else:
        speed = check.number(value, field)
    if speed <= 0:
        check.expected(field, "a positive speed in flop/s (such as 1e9 or '1Gf')", value)
    return speed


def _bytes(value: object, field: str, check: Checker) -> int:
    return check.quantity(value, field, parse_bytes, "a memory size such as 64Gi, 500Mi or a number of bytes")


def _text(value: object, field: str, check: Checker) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    check.expected(field, "a string or a number", value)
