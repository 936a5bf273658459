"""How long Batsim's 1-byte messages take on a SimGrid platform, where that time can be told from the file alone,
by the sending actor's host (the step platform model needs it, core/step_execution.py).

Batsim's actors send their messages to the server on the master host: from the master itself or from a job's first
host. Under SimGrid's ptask_L07 model a message alone on its route goes at the route's smallest bandwidth after its
links' latencies. That time is read here only for platforms whose every route is known to give it:

- every host is in a `<cluster>` (no `<host>`, `<route>`, `<router>` or `<backbone>` elements, no other topology
  than the flat one, no loopback or limiter link), so a message leaves its host on its cluster's private link and
  reaches the master on the master cluster's, with the same bandwidth `bw` in every cluster;
- every latency (`lat`, `bb_lat`, the links' `latency`) is 0, and every other bandwidth (`bb_bw`, the links' of the
  `zoneRoute`s between clusters) is at least `bw`.

Then every message goes at `bw` bytes per second and takes 1 / `bw` seconds: 8 ns on the reference corpus's ties,
energy and dynamic platforms, as measured in SimGrid 3.32 (`message_bandwidth`).

`message_rates` also reads platforms of `<host>`s with explicit routes in one zone of `Full` routing (the corpus's
profiles platforms): one host with the Batsim role `master`, every link of zero latency, a `<route>` between each
other host and the master (symmetrical unless it says otherwise). A message from a host goes at the smallest
bandwidth of its route's links; one from the master to itself on SimGrid's loopback link (`network/loopback-bw`,
10 GB/s, when no route is declared): 0.8 ns from a compute host and 0.1 ns on the master host over 10 Gbps links.
"""

from __future__ import annotations

import re
import xml.parsers.expat
import zlib
from collections.abc import Callable, Mapping
from typing import NamedTuple

from clustersim._io.textfile import StrPath, open_binary

_ELEMENTS = frozenset({"platform", "zone", "AS", "cluster", "link", "zoneRoute", "ASroute", "link_ctn", "prop"})
_CLUSTER_ATTRIBUTES = frozenset({"id", "prefix", "suffix", "radical", "speed", "core", "bw", "lat", "bb_bw",
                                 "bb_lat", "bb_sharing_policy", "sharing_policy"})
_LINK_ATTRIBUTES = frozenset({"id", "bandwidth", "latency", "sharing_policy"})
_BANDWIDTH = re.compile(r"([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([kMGT]i?|Ki)?(Bps|bps)?")
_PREFIXES = {None: 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
             "Ki": 2.0**10, "ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}
_ROUTINGS = ("Full", "Floyd", "Dijkstra", "DijkstraCache")
_ZERO_TIME = re.compile(r"0*\.?0*\s*(s|ms|us|ns|ps)?")
_ROUTE_ELEMENTS = frozenset({"platform", "zone", "AS", "host", "prop", "link", "route", "link_ctn"})
_HOST_ATTRIBUTES = frozenset({"id", "speed", "core", "pstate"})
_ROUTE_ATTRIBUTES = frozenset({"src", "dst", "symmetrical"})
LOOPBACK_BANDWIDTH = 10e9
"""SimGrid's `network/loopback-bw`: a message between two actors of one host with no declared route to itself."""


def _bandwidth(text: str | None) -> float | None:
    """Bytes per second of a SimGrid bandwidth (`125MBps`, `10Gbps`, a bare number of bytes per second)."""
    match = _BANDWIDTH.fullmatch(text.strip()) if text is not None else None
    if match is None or match.group(2) not in _PREFIXES:
        return None
    value = float(match.group(1)) * _PREFIXES[match.group(2)]
    return value / 8 if match.group(3) == "bps" else value


def _is_zero(text: str | None) -> bool:
    return text is not None and _ZERO_TIME.fullmatch(text.strip()) is not None and any(c == "0" for c in text)


def _parsed(path: StrPath, start: Callable[[str, dict[str, str]], None],
            end: Callable[[str], None] | None = None) -> bool:
    """Feed the platform file to the handlers; False when it cannot be read (the platform loader then says why)."""
    parser = xml.parsers.expat.ParserCreate()
    parser.StartElementHandler = start
    if end is not None:
        parser.EndElementHandler = end
    try:
        with open_binary(path) as data:
            parser.ParseFile(data)
    except (xml.parsers.expat.ExpatError, OSError, EOFError, zlib.error, RecursionError):
        return False
    return True


def message_bandwidth(path: StrPath) -> float | None:
    """The bytes per second of every Batsim message on the platform file at `path`, or None when that is not sure."""
    clusters: list[float] = []
    others: list[float] = []
    ok = True

    def start(tag: str, attrs: dict[str, str]) -> None:
        nonlocal ok
        if tag not in _ELEMENTS:
            ok = False
        elif tag == "cluster":
            bw, bb_bw = _bandwidth(attrs.get("bw")), _bandwidth(attrs.get("bb_bw", attrs.get("bw")))
            if (not set(attrs) <= _CLUSTER_ATTRIBUTES or bw is None or bb_bw is None or not _is_zero(attrs.get("lat"))
                    or not _is_zero(attrs.get("bb_lat", "0"))
                    or attrs.get("sharing_policy", "SPLITDUPLEX") not in ("SPLITDUPLEX", "SHARED")
                    or attrs.get("bb_sharing_policy", "SHARED") != "SHARED"):
                ok = False
                return
            clusters.append(bw)
            others.append(bb_bw)
        elif tag == "link":
            bandwidth = _bandwidth(attrs.get("bandwidth"))
            if (not set(attrs) <= _LINK_ATTRIBUTES or bandwidth is None
                    or not _is_zero(attrs.get("latency", "0"))
                    or attrs.get("sharing_policy", "SHARED") not in ("SHARED", "SPLITDUPLEX")):
                ok = False
                return
            others.append(bandwidth)
        elif tag in ("zone", "AS") and attrs.get("routing", "Full") not in _ROUTINGS:
            ok = False

    if not _parsed(path, start):
        return None
    if not ok or not clusters or len(set(clusters)) != 1 or min(others, default=clusters[0]) < clusters[0]:
        return None
    return clusters[0]


class MessageRates(NamedTuple):
    """Bytes per second of a 1-byte message to the master host, by the sender's host: `master` from the master
    host itself, `hosts` from the others by name, `default` from a host not named (None: none other)."""

    master: float
    hosts: Mapping[str, float]
    default: float | None

    def of(self, host: str) -> float | None:
        """The rate of a message from the host of that name (not the master), None when unknown."""
        return self.hosts.get(host, self.default)


def message_rates(path: StrPath) -> MessageRates | None:
    """The bytes per second of Batsim's messages on the platform file at `path`, by sending host, or None when
    they are not sure: a platform of clusters as `message_bandwidth` reads it, or one of hosts and explicit routes."""
    bandwidth = message_bandwidth(path)
    if bandwidth is not None:
        return MessageRates(bandwidth, {}, bandwidth)
    return _route_rates(path)


def _route_rates(path: StrPath) -> MessageRates | None:
    """Hosts and explicit routes of zero latency in one zone of Full routing (the module's docstring)."""
    hosts: list[str] = []
    masters: list[str] = []
    links: dict[str, float] = {}
    routes: dict[tuple[str, str], list[str]] = {}
    route: list[str] | None = None
    zones = 0
    host: str | None = None
    ok = True

    def start(tag: str, attrs: dict[str, str]) -> None:
        nonlocal ok, route, zones, host
        if tag not in _ROUTE_ELEMENTS:
            ok = False
        elif tag in ("zone", "AS"):
            zones += 1
            ok = ok and zones == 1 and attrs.get("routing") == "Full"
        elif tag == "host":
            host = attrs.get("id")
            ok = ok and set(attrs) <= _HOST_ATTRIBUTES and host is not None
            hosts.append(host or "")
        elif tag == "prop":
            if host is not None and attrs.get("id") == "role" and "master" in attrs.get("value", "").split(","):
                masters.append(host)
        elif tag == "link":
            bandwidth = _bandwidth(attrs.get("bandwidth"))
            if (not set(attrs) <= _LINK_ATTRIBUTES or bandwidth is None or "id" not in attrs
                    or not _is_zero(attrs.get("latency", "0"))):
                ok = False
                return
            links[attrs["id"]] = bandwidth
        elif tag == "route":
            src, dst = attrs.get("src"), attrs.get("dst")
            if not set(attrs) <= _ROUTE_ATTRIBUTES or src is None or dst is None:
                ok = False
                return
            route = []
            routes[(src, dst)] = route
            if attrs.get("symmetrical", "YES").upper() != "NO":
                routes.setdefault((dst, src), route)
        elif tag == "link_ctn":
            if route is None or attrs.get("id") not in links:
                ok = False
                return
            route.append(attrs["id"])

    def end(tag: str) -> None:
        nonlocal route, host
        if tag == "route":
            route = None
        elif tag == "host":
            host = None

    if not _parsed(path, start, end):
        return None
    if not ok or len(masters) != 1:
        return None
    (master,) = masters
    rates: dict[str, float] = {}
    for name in hosts:
        path_links = routes.get((name, master), [] if name == master else None)
        if path_links is None or (not path_links and name != master):
            return None
        rates[name] = min((links[link] for link in path_links), default=LOOPBACK_BANDWIDTH)
    return MessageRates(rates.pop(master), rates, None)
