"""The subset of slurm.conf the model reads, so one file drives both the simulation and the real cluster.

The reader accepts any slurm.conf: keys the model does not interpret are kept verbatim (the real daemons need
them). What it interprets:

- `NodeName=` lines (hostlists such as `n[1-4]`, `DEFAULT` lines): `CPUs`, `RealMemory`, `Weight`, `Gres` (any names),
  `Port`, `NodeAddr`, `NodeHostname`, `State`; the nodes are numbered in file order, as slurmctld numbers them;
- `PartitionName=` lines: `Nodes` (hostlist or `ALL`), `Default`, `MaxTime`, `MaxNodes`, `DefaultTime`,
  `PriorityJobFactor`, `PriorityTier` (and the older `Priority`, which sets both), `State`, `DefCpuPerGPU`,
  `DefMemPerGPU` (both also global: a partition's own value wins);
- global keys: `SchedulerType`, `SchedulerParameters`, `SelectType`, `SelectTypeParameters`, `DefMemPerCPU`,
  `DefCpuPerGPU`, `DefMemPerGPU`,
  `PriorityType`, `PriorityWeight*`, `PriorityMaxAge`, `PriorityFavorSmall`, `PriorityCalcPeriod`,
  `PriorityDecayHalfLife`, `PriorityFlags`, `AccountingStorageType`, `EnforcePartLimits`, `GresTypes` (every
  name of the nodes' `Gres=` must be in it).

Times use Slurm's formats (`minutes`, `minutes:seconds`, `hours:minutes:seconds`, `days-hours[:minutes[:seconds]]`,
`INFINITE`/`UNLIMITED`) and are returned in seconds, None meaning unlimited.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from clustersim.errors import InputError
from clustersim.limits import MAX_NODES, MAX_UNITS
from clustersim.platform.model import Node, Platform, Unit
from clustersim.workload.sbatch import parse_time

_UNLIMITED = ("infinite", "unlimited", "-1")
_HOSTLIST = re.compile(r"([^\[,]*)(?:\[([^\]]*)\])?([^,]*)")


def format_minutes(seconds: float | None) -> str:
    """A time limit as Slurm stores it: whole minutes, rounded up (INFINITE when unlimited)."""
    if seconds is None:
        return "INFINITE"
    return str(max(1, -int(-seconds // 60)))


def expand_hostlist(text: str, source: str = "slurm.conf") -> list[str]:
    """`n[1-3,7],login` -> n1 n2 n3 n7 login; zero padding is kept (`n[01-03]` -> n01 n02 n03)."""
    names: list[str] = []
    for token in _split_top(text):
        match = _HOSTLIST.fullmatch(token)
        if match is None or not token:
            raise InputError(source, f"'{text}' is not a hostlist such as n[1-4]")
        prefix, ranges, suffix = match.groups()
        if ranges is None:
            names.append(token)
            continue
        for part in ranges.split(","):
            lo, dash, hi = part.partition("-")
            if not _digits(lo) or (dash and not _digits(hi)):
                raise InputError(source, f"'{text}' is not a hostlist such as n[1-4]")
            width = len(lo)
            first, last = int(lo), int(hi if dash else lo)
            if len(names) + last - first + 1 > MAX_NODES:
                raise InputError(source, f"'{text}' names more than {MAX_NODES} nodes (the limit in docs/limits.md)")
            for number in range(first, last + 1):
                names.append(f"{prefix}{number:0{width}d}{suffix}")
    return names


def _digits(text: str) -> bool:
    """ASCII digits only (`str.isdigit` also accepts '²', which `int` refuses)."""
    return text.isascii() and text.isdigit()


def _split_top(text: str) -> list[str]:
    """Split on commas outside brackets."""
    parts, depth, current = [], 0, ""
    for char in text:
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [p for p in parts if p]


@dataclass(frozen=True, slots=True)
class NodeConf:
    """One `NodeName=` entry: what the model needs, and what the loopback cluster needs to run it."""

    name: str
    cpus: int = 1
    real_memory: int = 1
    """MiB, as slurm.conf gives it."""
    weight: int = 1
    gres: tuple[tuple[str, int], ...] = ()
    """`Gres=gpu:2,bandwidth:100` (types `gpu:a100:2` summed per name): the node's generic resources."""
    gres_types: tuple[tuple[str, int], ...] = ()
    """The typed ones as `name:type` (`gpu:a100`), in the order `Gres=` gives them: a request naming a type takes
    from its count (and from the name's), one naming none from the types in this order."""
    port: int | None = None
    addr: str | None = None
    hostname: str | None = None
    state: str = "UNKNOWN"

    @property
    def gpus(self) -> int:
        return dict(self.gres).get("gpu", 0)


@dataclass(frozen=True, slots=True)
class PartitionConf:
    """One `PartitionName=` entry. Times in seconds, None for unlimited."""

    name: str
    nodes: tuple[str, ...]
    default: bool = False
    max_time: float | None = None
    default_time: float | None = None
    priority_job_factor: int = 1
    priority_tier: int = 1
    up: bool = True
    max_nodes: int | None = None
    """MaxNodes: a job asking more nodes (`-N`) stays pending (PartitionNodeLimit); None: unlimited."""
    def_cpu_per_gpu: int | None = None
    """DefCpuPerGPU of the partition, else the global one (None: neither): the CPUs per GPU of a job asking GPUs
    without `-c` or `--cpus-per-gpu`."""
    def_mem_per_gpu: int | None = None
    """DefMemPerGPU (MiB) likewise, for a job asking GPUs and no memory (it wins over DefMemPerCPU: measured)."""


@dataclass(frozen=True)
class SlurmConf:
    """A parsed slurm.conf: global settings (keys lower-cased), nodes in file order, partitions."""

    source: str
    settings: Mapping[str, str]
    nodes: tuple[NodeConf, ...]
    partitions: tuple[PartitionConf, ...]
    original_keys: Mapping[str, str] = field(default_factory=dict)
    """Lower-cased key -> the spelling the file used, to write the file back."""
    line_keys: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """'nodename' and 'partitionname' -> the (lower-cased) keys their lines use, to name those not modelled."""

    def get(self, key: str, default: str = "") -> str:
        return self.settings.get(key.lower(), default)

    def time(self, key: str, default: float | None) -> float | None:
        """A global time setting in seconds (Slurm minutes-based format)."""
        text = self.settings.get(key.lower())
        return default if text is None else parse_time(text, self.source)

    def integer(self, key: str, default: int) -> int:
        text = self.settings.get(key.lower())
        if text is None:
            return default
        try:
            return int(text)
        except ValueError:
            raise InputError(self.source, f"'{key}={text}' is not an integer", field=key) from None

    def flag(self, key: str) -> bool:
        return self.get(key).lower() in ("yes", "true", "1")

    @property
    def scheduler_parameters(self) -> dict[str, str]:
        """`SchedulerParameters=a=1,b` as {'a': '1', 'b': ''} (lower-cased names)."""
        return _options(self.get("SchedulerParameters"))

    @property
    def priority_flags(self) -> set[str]:
        return {flag.strip().upper() for flag in self.get("PriorityFlags").split(",") if flag.strip()}

    @property
    def default_partition(self) -> PartitionConf:
        for partition in self.partitions:
            if partition.default:
                return partition
        return self.partitions[0]

    def node_index(self) -> dict[str, int]:
        return {node.name: i for i, node in enumerate(self.nodes)}


def _options(text: str) -> dict[str, str]:
    options: dict[str, str] = {}
    for item in text.split(","):
        name, _, value = item.strip().partition("=")
        if name:
            options[name.lower()] = value
    return options


PLUGIN_CHOICES = {
    "SchedulerType": ("sched/backfill", "sched/builtin"),
    "PriorityType": ("priority/basic", "priority/multifactor"),
}
"""Plugin keys whose value changes the model: any other plugin is refused, never silently run as the default."""

MAX_INCLUDE_DEPTH = 16
"""`Include` lines nested deeper (a file including itself) are refused."""


def read_slurm_conf(path: str | Path) -> SlurmConf:
    """Read a slurm.conf (and the files it `Include`s)."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        raise InputError(source, f"cannot read the file: {error.strerror or error}") from None
    return parse_slurm_conf(text, source=source, base=Path(path).parent)


def parse_slurm_conf(text: str, *, source: str = "slurm.conf", base: Path | None = None) -> SlurmConf:
    """Parse slurm.conf text; `base` resolves relative `Include` paths."""
    settings: dict[str, str] = {}
    original: dict[str, str] = {}
    node_lines: list[tuple[int, dict[str, str]]] = []
    part_lines: list[tuple[int, dict[str, str]]] = []
    for number, line in _lines(text, source, base or Path(".")):
        pairs = _pairs(line, source, number)
        if not pairs:
            continue
        first = next(iter(pairs))
        if first == "nodename":
            node_lines.append((number, pairs))
        elif first == "partitionname":
            part_lines.append((number, pairs))
        else:
            for key, value in pairs.items():
                settings[key] = value
            original.update({key.lower(): key for key in _raw_keys(line)})
    for key, choices in PLUGIN_CHOICES.items():
        if key.lower() in settings and settings[key.lower()].lower() not in choices:
            raise InputError(source, f"'{key}={settings[key.lower()]}' is not modelled; expected one of "
                             f"{', '.join(choices)}", field=key)
    nodes = _nodes(node_lines, source)
    if not nodes:
        raise InputError(source, "no NodeName= line: the cluster has no node")
    if "grestypes" in settings:
        declared = {name.strip() for name in settings["grestypes"].split(",")}
        undeclared = sorted({name for node in nodes for name, _ in node.gres} - declared)
        if undeclared:
            raise InputError(source, f"Gres= names {', '.join(undeclared)} not in GresTypes={settings['grestypes']} "
                             "(slurmctld refuses to start)", field="GresTypes")
    partitions = _partitions(part_lines, nodes, source, settings)
    line_keys = {
        kind: frozenset(key for _, pairs in lines for key in pairs)
        for kind, lines in (("nodename", node_lines), ("partitionname", part_lines))
    }
    return SlurmConf(source, settings, tuple(nodes), tuple(partitions), original, line_keys)


def _lines(text: str, source: str, base: Path, depth: int = 0) -> Iterator[tuple[int, str]]:
    if depth > MAX_INCLUDE_DEPTH:
        raise InputError(source, f"Include nested more than {MAX_INCLUDE_DEPTH} deep (does a file include itself?)")
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        keyword, _, rest = line.partition(" ")
        if keyword.lower() == "include" and "=" not in keyword:
            included = Path(rest.strip())
            path = included if included.is_absolute() else base / included
            try:
                inner = path.read_text(encoding="utf-8", errors="replace")
            except (OSError, ValueError) as error:  # ValueError: a NUL byte in the path
                raise InputError(source, f"cannot read included file {path}: {error}", line=number) from None
            yield from _lines(inner, str(path), path.parent, depth + 1)
            continue
        yield number, line


def _raw_keys(line: str) -> list[str]:
    return [token.split("=", 1)[0] for token in line.split() if "=" in token]


def _pairs(line: str, source: str, number: int) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for token in re.findall(r'(?:[^\s"]|"[^"]*")+', line):
        key, eq, value = token.partition("=")
        if not eq:
            raise InputError(source, f"'{token}' is not a Key=Value pair", line=number)
        pairs[key.lower()] = value.strip('"')
    return pairs


def _nodes(lines: list[tuple[int, dict[str, str]]], source: str) -> list[NodeConf]:
    defaults: dict[str, str] = {}
    nodes: list[NodeConf] = []
    seen: set[str] = set()
    cores = 0
    for number, pairs in lines:
        if pairs["nodename"].upper() == "DEFAULT":
            defaults.update({k: v for k, v in pairs.items() if k != "nodename"})
            continue
        values = {**defaults, **pairs}
        names = expand_hostlist(values["nodename"], source)
        ports = _ports(values.get("port"), len(names), source, number)
        addrs = _per_node(values.get("nodeaddr"), names, source)
        hostnames = _per_node(values.get("nodehostname"), names, source)
        cpus = _positive(values.get("cpus", "1"), "CPUs", source, number, MAX_UNITS)
        cores += cpus * len(names)
        if len(nodes) + len(names) > MAX_NODES or cores > MAX_UNITS:
            raise InputError(source, f"the cluster would have more than {MAX_NODES} nodes or {MAX_UNITS} CPUs "
                             "(the limits in docs/limits.md)", line=number)
        for i, name in enumerate(names):
            if name in seen:
                raise InputError(source, f"node '{name}' is defined twice", line=number)
            seen.add(name)
            nodes.append(NodeConf(
                name,
                cpus=cpus,
                real_memory=_positive(values.get("realmemory", "1"), "RealMemory", source, number),
                weight=_positive(values.get("weight", "1"), "Weight", source, number),
                gres=_gres(values.get("gres", ""), source, number),
                gres_types=_gres_types(values.get("gres", ""), source, number),
                port=ports[i],
                addr=addrs[i],
                hostname=hostnames[i],
                state=values.get("state", "UNKNOWN"),
            ))
    return nodes


def _ports(text: str | None, count: int, source: str, number: int) -> list[int | None]:
    if text is None:
        return [None] * count
    ports = _port_range(text, source, number)
    if len(ports) == 1:
        return [ports[0]] * count
    if len(ports) != count:
        raise InputError(source, f"Port={text} gives {len(ports)} ports for {count} nodes", line=number)
    return list(ports)


def _port_range(text: str, source: str, number: int) -> list[int]:
    ports: list[int] = []
    for part in text.split(","):
        lo, dash, hi = part.partition("-")
        if not _digits(lo) or (dash and not _digits(hi)) or int(hi if dash else lo) > 65535:
            raise InputError(source, f"'Port={text}' is not a port or a port range", line=number)
        ports.extend(range(int(lo), int(hi if dash else lo) + 1))
    return ports


def _per_node(text: str | None, names: list[str], source: str) -> list[str | None]:
    if text is None:
        return [None] * len(names)
    values = expand_hostlist(text, source)
    if len(values) == 1:
        return [values[0]] * len(names)
    if len(values) != len(names):
        raise InputError(source, f"'{text}' does not give one address per node of {names[0]}...")
    return list(values)


def _positive(text: str, key: str, source: str, number: int, maximum: int | None = None) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise InputError(source, f"'{key}={text}' is not a positive integer", line=number, field=key)
    if maximum is not None and value > maximum:
        raise InputError(source, f"'{key}={text}' is over the limit of {maximum} (docs/limits.md)", line=number,
                         field=key)
    return value


def _partitions(
    lines: list[tuple[int, dict[str, str]]], nodes: list[NodeConf], source: str, settings: Mapping[str, str]
) -> list[PartitionConf]:
    known = {node.name for node in nodes}
    defaults: dict[str, str] = {}
    partitions: list[PartitionConf] = []
    for number, pairs in lines:
        if pairs["partitionname"].upper() == "DEFAULT":
            defaults.update({k: v for k, v in pairs.items() if k != "partitionname"})
            continue
        values = {**defaults, **pairs}
        node_text = values.get("nodes", "")
        members = [n.name for n in nodes] if node_text.upper() == "ALL" else expand_hostlist(node_text, source)
        unknown = [n for n in members if n not in known]
        if unknown:
            raise InputError(source, f"partition '{values['partitionname']}' names unknown nodes {unknown}",
                             line=number)
        order = {n.name: i for i, n in enumerate(nodes)}
        tier = values.get("prioritytier", values.get("priority", "1"))
        factor = values.get("priorityjobfactor", values.get("priority", "1"))
        partitions.append(PartitionConf(
            values["partitionname"],
            tuple(sorted(dict.fromkeys(members), key=order.__getitem__)),
            default=values.get("default", "no").lower() == "yes",
            max_time=parse_time(values.get("maxtime", "INFINITE"), source),
            default_time=parse_time(values["defaulttime"], source) if "defaulttime" in values else None,
            priority_job_factor=_non_negative(factor, "PriorityJobFactor", source, number),
            priority_tier=_non_negative(tier, "PriorityTier", source, number),
            up=values.get("state", "UP").upper() == "UP",
            max_nodes=_max_nodes(values.get("maxnodes", "UNLIMITED"), source, number),
            def_cpu_per_gpu=_per_gpu("DefCpuPerGPU", values, settings, source, number),
            def_mem_per_gpu=_per_gpu("DefMemPerGPU", values, settings, source, number),
        ))
    if not partitions:
        partitions.append(PartitionConf("default", tuple(n.name for n in nodes), default=True,
                                        def_cpu_per_gpu=_per_gpu("DefCpuPerGPU", {}, settings, source, None),
                                        def_mem_per_gpu=_per_gpu("DefMemPerGPU", {}, settings, source, None)))
    return partitions


def _per_gpu(key: str, values: Mapping[str, str], settings: Mapping[str, str], source: str,
             number: int | None) -> int | None:
    """DefCpuPerGPU or DefMemPerGPU of a partition line (`values`), else the global one; None when neither."""
    own = key.lower() in values
    text = values[key.lower()] if own else settings.get(key.lower())
    if text is None:
        return None
    value = int(text) if text.isascii() and text.isdigit() and len(text) <= 9 else 0
    if value < 1:
        raise InputError(source, f"'{key}={text}' is not a positive integer", line=number if own else None,
                         field=key)
    return value


def _gres(text: str, source: str, number: int) -> tuple[tuple[str, int], ...]:
    """A node's `Gres=` (`gpu:2`, `gpu:a100:2,gpu:v100:1,bandwidth:100`): the count of each name."""
    counts: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        fields = item.split(":")
        count = fields[-1] if len(fields) > 1 else "1"
        if not _digits(count) or len(fields) > 3 or not fields[0]:
            raise InputError(source, f"'Gres={text}' is not a GRES list such as gpu:2, gpu:a100:2 or bandwidth:100",
                             line=number)
        counts[fields[0]] = counts.get(fields[0], 0) + int(count)
    return tuple(counts.items())


def _gres_types(text: str, source: str, number: int) -> tuple[tuple[str, int], ...]:
    """A node's typed GRES (`gpu:a100:2` gives `gpu:a100` 2); a name both typed and untyped is refused (the model
    could not tell which of its units a typed request may take)."""
    items = [item.strip().split(":") for item in text.split(",") if item.strip()]
    typed = {fields[0] for fields in items if len(fields) == 3}
    if any(len(fields) < 3 and fields[0] in typed for fields in items):
        raise InputError(source, f"'Gres={text}' gives {', '.join(sorted(typed))} both with and without a type "
                         "(not modelled: give every unit a type)", line=number)
    return tuple((f"{fields[0]}:{fields[1]}", int(fields[2])) for fields in items if len(fields) == 3)


def _max_nodes(text: str, source: str, number: int) -> int | None:
    if text.lower() in _UNLIMITED:
        return None
    return _positive(text, "MaxNodes", source, number, MAX_NODES)


def _non_negative(text: str, key: str, source: str, number: int) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise InputError(source, f"'{key}={text}' is not an integer >= 0", line=number, field=key)
    return value


def platform_from_conf(conf: SlurmConf) -> Platform:
    """The simulated cluster of a slurm.conf: one node per NodeName, its CPUs as cores (Unit.CORE)."""
    nodes = [
        Node(i, node.name, cores=node.cpus, memory=node.real_memory * 2**20)
        for i, node in enumerate(conf.nodes)
    ]
    return Platform(nodes, Unit.CORE, name=conf.get("ClusterName", "slurm"))
