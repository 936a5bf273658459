"""Reader of SimGrid platform files, the XML Batsim takes: compute hosts, their speeds, cores and properties.

Read: `<host id speed core pstate>` and `<cluster>`/`<cabinet>` (`prefix`, `suffix`, `radical="0-99,200-210"`,
`speed`, `core`) expanded into hosts `prefix + N + suffix`, at any depth of `<zone>`/`<AS>`. A host's `<prop>`
children become `Node.properties`; a cluster's apply to each of its hosts. The `memory` property (a
Kubernetes quantity such as `8G`) also sets `Node.memory`.

Hosts with the Batsim role `master` or `storage` are not compute resources and are left out. The others are
numbered 0..N-1 in document order; `order="name"` numbers them by name instead, which is what Batsim itself
does on SimGrid >= 3.25, whose host list is sorted by name (Batsim's own sort by name does not stick).

A speed may be a power-state list (`100Mf, 50Mf, 20Mf`): the node runs at the state given by the host's
`pstate` attribute (the first one by default) and the whole list is kept in the `speeds` property (flop/s,
comma-separated) for the energy model.

Links, routes, backbones and other elements are parsed and left out of the `Platform`: the fast platform
model ignores them, the simgrid one (clustersim.core.simgrid_execution) hands the file itself to SimGrid. The
reader emits exactly one `IgnoredPlatformElements` warning per file that lists what it left out.
Errors name the line and, for a bad or missing attribute, the element and the attribute.
"""

from __future__ import annotations

import warnings
import xml.parsers.expat
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NoReturn

from clustersim._io.quantities import parse_bytes, parse_speeds
from clustersim._io.textfile import StrPath, open_binary
from clustersim.errors import InputError
from clustersim.limits import MAX_NODES
from clustersim.platform.model import Node, Platform, Unit
from clustersim.platform.power_model import from_batsim_properties

NON_COMPUTE_ROLES = frozenset({"master", "storage"})
_STRUCTURE = frozenset({"platform", "zone", "AS", "host", "cluster", "cabinet", "prop"})


class IgnoredPlatformElements(UserWarning):
    """A platform file holds elements clustersim does not simulate (links, routes...)."""


@dataclass
class _Host:
    name: str
    speeds: tuple[float, ...]
    speed: float
    cores: int
    line: int
    properties: dict[str, str] = field(default_factory=dict)
    memory: int = 0


@dataclass
class _Group:
    """A `<cluster>` or `<cabinet>` being read: its hosts get the properties met until its end tag."""

    hosts: list[_Host]
    properties: dict[str, str] = field(default_factory=dict)
    memory: int | None = None


def read_simgrid_platform(path: StrPath, *, order: Literal["document", "name"] = "document") -> Platform:
    """Read the compute hosts of a SimGrid platform file (plain or gzipped) as a platform of whole hosts."""
    source = str(path)
    reader = _Reader(source)
    try:
        with open_binary(path) as data:
            reader.parser.ParseFile(data)
    except xml.parsers.expat.ExpatError as error:
        message = xml.parsers.expat.errors.messages.get(error.code, str(error))
        raise InputError(
            source, f"malformed XML: {message} (column {error.offset + 1})", line=error.lineno
        ) from None
    except RecursionError:
        raise InputError(source, "malformed XML: nested too deeply") from None
    except (OSError, EOFError, zlib.error) as error:
        raise InputError(source, f"cannot read the file: {error}") from None
    if not reader.seen_root:
        raise InputError(source, "malformed XML: no <platform> element")
    if reader.ignored:
        listed = ", ".join(f"{count} <{tag}>" for tag, count in sorted(reader.ignored.items()))
        warnings.warn(
            f"{source}: ignored {listed} (the fast platform model reads hosts only; "
            "--platform-model simgrid simulates the network)",
            IgnoredPlatformElements,
            stacklevel=2,
        )
    return _platform(reader.hosts, source, order, Path(path).name.split(".")[0] or "platform")


def _platform(hosts: list[_Host], source: str, order: str, name: str) -> Platform:
    compute = [h for h in hosts if not NON_COMPUTE_ROLES & _roles(h.properties)]
    if not compute:
        raise InputError(
            source, "no compute host (hosts with the role master or storage are not compute hosts)"
        )
    if order == "name":
        compute.sort(key=lambda h: h.name)
    elif order != "document":
        raise InputError(source, f"unknown host order '{order}'; valid: document, name")
    nodes = []
    for index, host in enumerate(compute):
        if host.speed <= 0:
            raise InputError(
                source, f"compute host '{host.name}' has speed {host.speed:g}; it must be > 0", line=host.line
            )
        power = from_batsim_properties(host.properties, host.speeds, host.speed, source, host.name)
        nodes.append(
            Node(index, host.name, host.cores, host.speed, host.memory, properties=host.properties, power=power)
        )
    storage = tuple(h.name for h in hosts if "storage" in _roles(h.properties))
    return Platform(nodes, Unit.HOST, name=name, storage_hosts=storage)


def _roles(properties: dict[str, str]) -> set[str]:
    return {role.strip() for role in properties.get("role", "").split(",")}


class _Reader:
    """Expat callbacks: keeps the open elements, the hosts read so far and the counts of ignored elements."""

    def __init__(self, source: str):
        self.source = source
        self.parser = xml.parsers.expat.ParserCreate()
        self.parser.StartElementHandler = self.start
        self.parser.EndElementHandler = self.end
        self.parser.EntityDeclHandler = self.entity
        self.hosts: list[_Host] = []
        self.names: dict[str, int] = {}
        self.ignored: Counter[str] = Counter()
        self.seen_root = False
        self._open: list[str] = []
        self._ignoring = 0  # depth inside an ignored element: its children are not counted again
        self._host: _Host | None = None
        self._group: _Group | None = None

    def fail(self, message: str) -> NoReturn:
        raise InputError(self.source, message, line=self.parser.CurrentLineNumber)

    def entity(self, name: str, *_: object) -> None:
        """Platform files never declare entities: refused, so no external file is read (XXE) and no entity
        expands exponentially (billion laughs)."""
        self.fail(f"the document declares the entity '{name}'; entity declarations are not allowed")

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        parent = self._open[-1] if self._open else None
        self._open.append(tag)
        if parent is None:
            if tag != "platform":
                self.fail(f"the root element is <{tag}>; a SimGrid platform file has a <platform> root")
            self.seen_root = True
            return
        if self._ignoring or tag not in _STRUCTURE:
            if not self._ignoring:
                self.ignored[tag] += 1
            self._ignoring += 1
        elif tag == "host":
            self._host = self._new_host(
                attrs.get("id") or self._missing(tag, attrs, "id", "a host name"), attrs, tag
            )
        elif tag in ("cluster", "cabinet"):
            self._group = _Group(self._expand(tag, attrs))
        elif tag == "prop" and parent in ("host", "cluster", "cabinet"):
            self._prop(attrs)

    def end(self, tag: str) -> None:
        self._open.pop()
        if self._ignoring:
            self._ignoring -= 1
        elif tag == "host" and self._host is not None:
            self._host = None
        elif tag in ("cluster", "cabinet") and self._group is not None:
            for host in self._group.hosts:
                host.properties.update(self._group.properties)
                if self._group.memory is not None:
                    host.memory = self._group.memory
            self._group = None

    def _missing(self, tag: str, attrs: dict[str, str], attribute: str, what: str) -> NoReturn:
        self.fail(f"element <{tag}{_ident(attrs)}> has no '{attribute}' attribute (expected {what})")

    def _bad(self, tag: str, attrs: dict[str, str], attribute: str, message: str) -> NoReturn:
        self.fail(f"element <{tag}{_ident(attrs)}>, attribute '{attribute}': {message}")

    def _new_host(self, name: str, attrs: dict[str, str], tag: str) -> _Host:
        if name in self.names:
            self.fail(f"host '{name}' is defined twice (first on line {self.names[name]})")
        line = self.parser.CurrentLineNumber
        self.names[name] = line
        speed_attr = "speed" if "speed" in attrs or "power" not in attrs else "power"  # `power`: SimGrid 3
        speed_text = attrs.get(speed_attr) or self._missing(tag, attrs, "speed", "a speed such as '1Gf'")
        try:
            speeds = parse_speeds(speed_text)
        except ValueError as error:
            self._bad(tag, attrs, speed_attr, str(error))
        cores = self._count(tag, attrs, "core", minimum=1, what="a number of cores >= 1")
        pstate = self._count(tag, attrs, "pstate", minimum=0, what="a power state index >= 0")
        if pstate >= len(speeds):
            self._bad(tag, attrs, "pstate", f"{pstate} is not one of the {len(speeds)} speed(s) given")
        host = _Host(name, speeds, speeds[pstate], cores, line)
        if len(speeds) > 1:
            host.properties["speeds"] = ", ".join(repr(s) for s in speeds)
        if len(self.hosts) >= MAX_NODES:
            self.fail(f"more than {MAX_NODES} hosts")
        self.hosts.append(host)
        return host

    def _count(self, tag: str, attrs: dict[str, str], attribute: str, *, minimum: int, what: str) -> int:
        """An integer attribute, `minimum` (SimGrid's default) when absent."""
        text = attrs.get(attribute)
        if text is None:
            return minimum
        try:
            value = int(text)
        except ValueError:
            value = -1
        if value < minimum:
            self._bad(tag, attrs, attribute, f"'{text}' is not {what}")
        return value

    def _expand(self, tag: str, attrs: dict[str, str]) -> list[_Host]:
        """The hosts of a cluster: `prefix + N + suffix` for each N of the radical, in radical order."""
        radical = attrs.get("radical") or self._missing(tag, attrs, "radical", "ids such as '0-99,200-210'")
        prefix, suffix = attrs.get("prefix", ""), attrs.get("suffix", "")
        numbers: list[int] = []
        for part in radical.split(","):
            low_text, dash, high_text = part.strip().partition("-")
            try:
                low = int(low_text)
                high = int(high_text) if dash else low
            except ValueError:
                self._bad(
                    tag, attrs, "radical", f"'{part.strip()}' is not a number or a range such as '0-99'"
                )
            if low < 0 or high < low:
                self._bad(
                    tag, attrs, "radical", f"'{part.strip()}' is not a range low-high with 0 <= low <= high"
                )
            if len(numbers) + high - low >= MAX_NODES:
                self.fail(f"more than {MAX_NODES} hosts")
            numbers.extend(range(low, high + 1))
        return [self._new_host(f"{prefix}{n}{suffix}", attrs, tag) for n in numbers]

    def _prop(self, attrs: dict[str, str]) -> None:
        key = attrs.get("id") or self._missing("prop", attrs, "id", "a property name")
        if "value" not in attrs:
            self._missing("prop", attrs, "value", "the property's value")
        value = attrs["value"]
        memory = None
        if key == "memory":
            try:
                memory = parse_bytes(value)
            except ValueError as error:
                self._bad("prop", attrs, "value", str(error))
        if self._group is not None:
            self._group.properties[key] = value
            self._group.memory = memory if memory is not None else self._group.memory
        elif self._host is not None:
            self._host.properties[key] = value
            if memory is not None:
                self._host.memory = memory


def _ident(attrs: dict[str, str]) -> str:
    """` id='h0'` to show which element an error is about."""
    return f" id={attrs['id']!r}" if "id" in attrs else ""
