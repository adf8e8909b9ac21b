"""The Fabric: switches, their ports, the links between them and the hosts hanging off them.

Built from an inventory's explicit wiring or from a topology generator, and checked for the
wiring mistakes an operator makes: unknown or reused ports, self-loops, parallel links, islands.
"""

from __future__ import annotations

import ipaddress
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fatpaths_cfg.errors import ErrorCollector
from fatpaths_cfg.ifnames import all_kernel_names_unchanged, kernel_ifname
from fatpaths_cfg.inventory.paths import PathKey, format_path
from fatpaths_cfg.inventory.rules import ENDPOINT, parse_speed_gbps
from fatpaths_cfg.support.memory import collector_paused
from fatpaths_cfg.support.stable_hash import name_keys, natural_key
from fatpaths_cfg.topologies.base import island_labels

if TYPE_CHECKING:
    import scipy.sparse as sp

    from fatpaths_cfg.inventory.load import LoadedInventory
    from fatpaths_cfg.inventory.schema import InventorySpec

    # The YAML loader (PyYAML with it) is for building a fabric from an inventory; reading a
    # compiled one back needs only the model.
    from fatpaths_cfg.inventory.yaml_source import SourceMap


@dataclass(frozen=True)
class Switch:
    index: int
    name: str
    platform: str
    role: str
    ports: tuple[str, ...]
    mgmt: str | None = None
    plane: int = 0  # the parallel dataplane (0-based) this switch belongs to


@dataclass(frozen=True)
class Link:
    index: int
    a: int
    a_port: str
    b: int
    b_port: str
    speed_gbps: float


@dataclass(frozen=True)
class Uplink:
    """A host's cable into one plane: the switch and port it plugs into."""

    plane: int
    switch: int
    port: str


@dataclass(frozen=True)
class Host:
    """A host with one uplink per plane, ordered by plane.

    `switch` and `port` name the plane-0 uplink, so single-plane code reads them unchanged;
    a host built without `uplinks` has just that one.
    """

    index: int
    name: str
    switch: int
    port: str
    speed_gbps: float
    pacing_gbps: float | None = None  # host traffic shaped to this rate on the uplink
    uplinks: tuple[Uplink, ...] = ()

    def __post_init__(self) -> None:
        if not self.uplinks:
            object.__setattr__(self, "uplinks", (Uplink(0, self.switch, self.port),))
        first = self.uplinks[0]
        if (first.switch, first.port) != (self.switch, self.port):
            raise ValueError(f"host {self.name}: switch/port differ from its first uplink")
        if [u.plane for u in self.uplinks] != list(range(len(self.uplinks))):
            raise ValueError(f"host {self.name}: uplinks must be one per plane, by plane")

    def uplink_of_plane(self, plane: int) -> Uplink:
        return self.uplinks[plane]


@dataclass
class Fabric:
    name: str
    switches: list[Switch]
    links: list[Link]
    hosts: list[Host]
    origin: dict[str, Any] = field(default_factory=dict)
    # The `switches:` entry of each switch in the inventory (its index is its place in name
    # order, see `canonical_order`); empty when the fabric was not built from an inventory.
    switch_entries: tuple[int, ...] = ()

    @property
    def nr(self) -> int:
        return len(self.switches)

    @cached_property
    def planes(self) -> int:
        """How many parallel dataplanes: 1 for a classic single-plane fabric."""
        return 1 + max((s.plane for s in self.switches), default=0)

    def switches_of_plane(self, plane: int) -> list[int]:
        return [s.index for s in self.switches if s.plane == plane]

    @cached_property
    def plane_of_switch(self) -> np.ndarray:
        """(nr,) int: each switch's plane."""
        return np.array([s.plane for s in self.switches], dtype=np.int64)

    @cached_property
    def switch_keys(self) -> np.ndarray:
        """(nr,) uint64: a hash of each switch's name, for choices that must follow names."""
        return name_keys(s.name for s in self.switches)

    @cached_property
    def link_keys(self) -> np.ndarray:
        """(E,) uint64: a hash of each cable's name, its two `switch:port` ends sorted, so a
        cable keeps its key whatever else is cabled and wherever the inventory lists it."""
        names = self.switches
        return name_keys(
            "|".join(sorted((f"{names[c.a].name}:{c.a_port}", f"{names[c.b].name}:{c.b_port}")))
            for c in self.links
        )

    def cable_name(self, link: int) -> str:
        one = self.links[link]
        a = f"{self.switches[one.a].name}:{one.a_port}"
        b = f"{self.switches[one.b].name}:{one.b_port}"
        return f"{a} - {b}"

    @cached_property
    def edges(self) -> np.ndarray:
        """(E, 2) int32 switch-index pairs, one row per link, smaller index first."""
        if not self.links:
            return np.zeros((0, 2), dtype=np.int32)
        pairs = np.array([(link.a, link.b) for link in self.links], dtype=np.int32)
        return np.sort(pairs, axis=1)

    @cached_property
    def adjacency(self) -> sp.csr_matrix:
        import scipy.sparse as sp  # only the analyses use it: loading a fabric need not pay

        e = self.edges
        data = np.ones(2 * len(e), dtype=np.int8)
        rows = np.concatenate([e[:, 0], e[:, 1]])
        cols = np.concatenate([e[:, 1], e[:, 0]])
        return sp.csr_matrix((data, (rows, cols)), shape=(self.nr, self.nr))

    @cached_property
    def link_between(self) -> dict[tuple[int, int], int]:
        """(switch, switch) -> link index, in both orientations."""
        table: dict[tuple[int, int], int] = {}
        for link in self.links:
            table[(link.a, link.b)] = link.index
            table[(link.b, link.a)] = link.index
        return table

    @cached_property
    def switch_index(self) -> dict[str, int]:
        return {s.name: s.index for s in self.switches}

    @cached_property
    def hosts_of_switch(self) -> list[list[int]]:
        """Per switch, the hosts cabled to it; a host counts under its switch in every plane."""
        table: list[list[int]] = [[] for _ in self.switches]
        for host in self.hosts:
            for uplink in host.uplinks:
                table[uplink.switch].append(host.index)
        return table

    def port_towards(self, switch: int, neighbour: int) -> str:
        link = self.links[self.link_between[(switch, neighbour)]]
        return link.a_port if link.a == switch else link.b_port

    @property
    def network_radix(self) -> int:
        """k': the largest number of switch-switch ports in use on one switch."""
        degrees = np.bincount(self.edges.ravel(), minlength=self.nr)
        return int(degrees.max()) if self.nr else 0


def _declared_ports(spec_ports: int | list[str] | None, prefix: str) -> tuple[str, ...] | None:
    if spec_ports is None:
        return None
    if isinstance(spec_ports, int):
        return _numbered_ports(prefix, spec_ports)
    return tuple(spec_ports)


@cache
def _numbered_ports(prefix: str, count: int) -> tuple[str, ...]:
    # Switches that give a count mostly give the same one: they share one tuple of names.
    return tuple([f"{prefix}{i}" for i in range(1, count + 1)])


class _WiringChecker:
    """Turns explicit wiring into a Fabric, collecting every mistake with its line."""

    def __init__(
        self, spec: InventorySpec, source: SourceMap, *, locate_ports: bool = True
    ) -> None:
        self.spec = spec
        self.source = source
        # Off for `build_if_clean`, which leaves every message to a full rerun: where a port
        # was declared only ever locates one.
        self.locate_ports = locate_ports
        self.errors = ErrorCollector()
        self.port_users: dict[tuple[int, str], str] = {}
        # Where each port of a switch was first named: its declaration, else its first cable.
        self.port_origin: dict[tuple[int, str], PathKey] = {}
        # Switch index -> (its `plane:`, its `switches:` entry), for switches that give one.
        self.explicit_plane: dict[int, tuple[int, int]] = {}

    def error(
        self, path: tuple[str | int, ...], field_name: str, message: str, hint: str = ""
    ) -> None:
        self.errors.add(self.source.file, self.source.line_of(path), field_name, message, hint)

    def build(self) -> Fabric:
        spec = self.spec
        switches = self._switches()
        index = {s.name: s.index for s in switches}
        declared = {s.index: set(s.ports) for s in switches if s.ports}
        default_speed, host_speed, pacing = self._speeds()
        used_ports: dict[int, list[str]] = {s.index: [] for s in switches}

        links: list[Link] = []
        link_entries: list[int] = []  # the `links:` entry of each Link
        seen_pairs: dict[tuple[int, int], int] = {}
        for i, link in enumerate(spec.links):
            if link.a == link.b:
                self._one_port_loop(i, link.a, index, declared, used_ports)
                continue
            ends = []
            for side in ("a", "b"):
                endpoint = self._endpoint(
                    getattr(link, side),
                    ("links", i, side),
                    f"links[{i}].{side}",
                    index,
                    declared,
                    f"link {i}",
                    used_ports,
                )
                ends.append(endpoint)
            if None in ends:
                continue
            (a, a_port), (b, b_port) = ends  # type: ignore[misc]
            if a == b:
                self.error(
                    ("links", i),
                    f"links[{i}]",
                    f"links switch '{switches[a].name}' to itself",
                    "a link joins two different switches",
                )
                continue
            pair = (min(a, b), max(a, b))
            if pair in seen_pairs:
                self.error(
                    ("links", i),
                    f"links[{i}]",
                    f"second link between '{switches[pair[0]].name}' and "
                    f"'{switches[pair[1]].name}' (first is links[{seen_pairs[pair]}])",
                    "one link per switch pair; parallel links are not supported",
                )
                continue
            seen_pairs[pair] = i
            speed = parse_speed_gbps(link.speed) if link.speed is not None else default_speed
            links.append(Link(len(links), a, a_port, b, b_port, speed))
            link_entries.append(i)

        host_ends = self._host_ends(index, declared, used_ports)

        for switch in switches:
            self._check_kernel_names(switch, switch.ports or tuple(used_ports[switch.index]))
        planes = self._assign_planes(switches, links, link_entries, host_ends)
        hosts = self._hosts(host_ends, planes, host_speed, pacing)
        if not self.errors.errors:
            self._check_connected(switches, links, planes)
        self.errors.raise_if_any()
        finished = [
            replace(
                s,
                ports=s.ports if s.ports else tuple(used_ports[s.index]),
                plane=planes[s.index],
            )
            for s in switches
        ]
        return Fabric(spec.fabric, finished, links, hosts)

    def _speeds(self) -> tuple[float, float, float | None]:
        """The links' default speed, the hosts' speed and their pacing rate."""
        defaults = self.spec.defaults
        link_speed = parse_speed_gbps(defaults.link_speed)
        host_speed = parse_speed_gbps(defaults.host_speed) if defaults.host_speed else link_speed
        return link_speed, host_speed, self._host_pacing(host_speed)

    def build_if_clean(self) -> Fabric | None:
        """The fabric `build` makes, for the usual inventory: one plane (no `plane:`, one uplink
        a host) and nothing wrong. None for any other, without saying why: `build` then runs
        and reports. Nothing is done per link or host that only an error message would use,
        which on a 10k-host Slim Fly halves the time of `build`."""
        switches = self._switches()
        link_speed, host_speed, pacing = self._speeds()
        if self.errors.errors or self.explicit_plane:
            return None
        index = {s.name: s.index for s in switches}
        # Per switch, the declared ports no cable has taken yet, or for a switch that declares
        # none, the ports cables have taken: either way one set operation an endpoint.
        free = {s.index: set(s.ports) for s in switches if s.ports}
        taken: dict[int, set[str]] = {s.index: set() for s in switches if not s.ports}
        undeclared_ports: dict[int, list[str]] = {switch: [] for switch in taken}

        def cable(text: str) -> tuple[int, str]:
            """`_endpoint` without its messages; KeyError or ValueError where it reports."""
            # The schema matched ENDPOINT, whose switch and port hold no ':'. Its '$' also lets
            # a trailing newline through, which the groups leave out and this split would not.
            name, port = text.split(":")
            switch = index[name]
            if switch in free:
                free[switch].remove(port)
            elif port in taken[switch] or port.endswith("\n"):
                raise KeyError(port)
            else:
                taken[switch].add(port)
                undeclared_ports[switch].append(port)
            return switch, port

        links: list[Link] = []
        seen_pairs: set[tuple[int, int]] = set()
        hosts: list[Host] = []
        seen_hosts: set[str] = set()
        try:
            for link in self.spec.links:
                a, a_port = cable(link.a)
                b, b_port = cable(link.b)
                pair = (a, b) if a < b else (b, a)
                if a == b or pair in seen_pairs:
                    return None
                seen_pairs.add(pair)
                speed = link_speed if link.speed is None else parse_speed_gbps(link.speed)
                links.append(Link(len(links), a, a_port, b, b_port, speed))
            for host in self.spec.hosts:
                endpoints = host.endpoints
                if host.name in seen_hosts or host.name in index or len(endpoints) != 1:
                    return None
                seen_hosts.add(host.name)
                switch, port = cable(endpoints[0])
                uplinks = (Uplink(0, switch, port),)
                hosts.append(Host(len(hosts), host.name, switch, port, host_speed, pacing, uplinks))
        except (KeyError, ValueError):
            return None
        ports = [s.ports or tuple(undeclared_ports[s.index]) for s in switches]
        if _kernel_names_clash(ports):
            return None
        finished = [
            Switch(s.index, s.name, s.platform, s.role, own, s.mgmt, 0)
            for s, own in zip(switches, ports, strict=True)
        ]
        fabric = Fabric(self.spec.fabric, finished, links, hosts)
        # Through the fabric's own edge array, which its users then find already made. An
        # island's label is its smallest switch (np.unique would import numpy.ma: 10 ms).
        if island_labels(fabric.nr, fabric.edges).any():
            return None
        return fabric

    def _host_ends(
        self,
        index: dict[str, int],
        declared: dict[int, set[str]],
        used_ports: dict[int, list[str]],
    ) -> list[_HostEnds]:
        """Each well-named host with the cabled ends of its uplinks (bad ends already reported)."""
        result: list[_HostEnds] = []
        switch_names = set(index)
        seen_hosts: dict[str, int] = {}
        for i, host in enumerate(self.spec.hosts):
            if host.name in seen_hosts:
                self.error(
                    ("hosts", i, "name"),
                    f"hosts[{i}].name",
                    f"duplicate host name '{host.name}' (first at hosts[{seen_hosts[host.name]}])",
                    "host names must be unique",
                )
                continue
            if host.name in switch_names:
                self.error(
                    ("hosts", i, "name"),
                    f"hosts[{i}].name",
                    f"'{host.name}' is already a switch name",
                    "names must be unique",
                )
                continue
            seen_hosts[host.name] = i
            ends: list[_UplinkEnd] = []
            for j, text in enumerate(host.endpoints):
                path: PathKey = (
                    ("hosts", i, "uplink")
                    if host.uplink is not None
                    else ("hosts", i, "uplinks", j)
                )
                end = self._endpoint(
                    text,
                    path,
                    format_path(path),
                    index,
                    declared,
                    f"host '{host.name}'",
                    used_ports,
                )
                if end is not None:
                    ends.append(_UplinkEnd(j, end[0], end[1], path))
            if len(ends) == len(host.endpoints):
                result.append(_HostEnds(i, host.name, ends))
        return result

    def _assign_planes(
        self,
        switches: list[Switch],
        links: list[Link],
        link_entries: list[int],
        host_ends: list[_HostEnds],
    ) -> list[int]:
        """Each switch's plane: its own `plane:`, else that of a switch its links reach, else
        the position in `uplinks:` through which hosts reach it (a plane is a physical layer:
        its switches form one island of the cabling)."""
        nr = len(switches)
        if nr == 0:
            return []
        labels = _islands(nr, links)
        island_plane: dict[int, tuple[int, str]] = {}  # island -> (plane, switch that says so)
        cross_links = self._report_cross_plane_links(switches, links, link_entries)
        for i, (plane, entry) in sorted(self.explicit_plane.items()):
            island = int(labels[i])
            first = island_plane.setdefault(island, (plane, switches[i].name))
            if first[0] != plane and not cross_links:
                self.error(
                    ("switches", entry, "plane"),
                    f"switches[{entry}].plane",
                    f"switch '{switches[i].name}' is in plane {plane} but its links reach "
                    f"'{first[1]}' in plane {first[0]}",
                    "a link never joins two planes",
                )
        explicit = set(island_plane)
        for host in host_ends:
            for end in host.ends:
                island = int(labels[end.switch])
                if island in explicit:
                    continue
                first = island_plane.setdefault(island, (end.position, host.name))
                if first[0] != end.position:
                    self.error(
                        end.path,
                        format_path(end.path),
                        f"switch '{switches[end.switch].name}' would be in plane {end.position} "
                        f"here but is in plane {first[0]} through host '{first[1]}'",
                        "a switch is in exactly one plane: list every host's uplinks in the "
                        "same plane order, or give the switches `plane:`",
                    )
        planes = [
            self.explicit_plane[s][0]
            if s in self.explicit_plane
            else island_plane.get(int(labels[s]), (0, ""))[0]
            for s in range(nr)
        ]
        self._check_plane_numbers(switches, planes)
        return planes

    def _report_cross_plane_links(
        self, switches: list[Switch], links: list[Link], link_entries: list[int]
    ) -> bool:
        """Report every link whose ends give different planes; True when there was one."""
        found = False
        for link in links:
            ends = (self._plane_given(link.a), self._plane_given(link.b))
            if None in ends or ends[0] == ends[1]:
                continue
            entry = link_entries[link.index]
            self.error(
                ("links", entry),
                f"links[{entry}]",
                f"joins switch '{switches[link.a].name}' (plane {ends[0]}) and "
                f"'{switches[link.b].name}' (plane {ends[1]})",
                "a link never joins two planes",
            )
            found = True
        return found

    def _plane_given(self, switch: int) -> int | None:
        given = self.explicit_plane.get(switch)
        return None if given is None else given[0]

    def _check_plane_numbers(self, switches: list[Switch], planes: list[int]) -> None:
        used = set(planes)
        for missing in range(max(used) + 1):
            if missing not in used:
                above = next(s for s in range(len(planes)) if planes[s] > missing)
                entry = self.explicit_plane.get(above, (0, above))[1]
                self.error(
                    ("switches", entry),
                    f"switches[{entry}]",
                    f"switch '{switches[above].name}' is in plane {planes[above]} but plane "
                    f"{missing} has no switches",
                    "number the planes 0, 1, 2, ... without gaps",
                )
                return

    def _hosts(
        self,
        host_ends: list[_HostEnds],
        planes: list[int],
        host_speed: float,
        pacing: float | None,
    ) -> list[Host]:
        """Hosts with their uplinks sorted by plane; each must reach every plane exactly once."""
        count = 1 + max(planes, default=0)
        hosts: list[Host] = []
        for host in host_ends:
            by_plane: dict[int, _UplinkEnd] = {}
            for end in host.ends:
                plane = planes[end.switch]
                if plane in by_plane:
                    earlier = by_plane[plane]
                    self.error(
                        end.path,
                        format_path(end.path),
                        f"host '{host.name}' reaches plane {plane} twice "
                        f"(also through {format_path(earlier.path)})",
                        "one uplink per plane",
                    )
                    continue
                by_plane[plane] = end
            missing = [p for p in range(count) if p not in by_plane]
            if missing:
                field_name = "uplinks" if self.spec.hosts[host.entry].uplinks else "uplink"
                path: PathKey = ("hosts", host.entry, field_name)
                self.error(
                    path,
                    format_path(path),
                    f"host '{host.name}' has no uplink into plane {missing[0]} "
                    f"(the fabric has {count} planes)",
                    "list one SWITCH:PORT per plane under `uplinks:`",
                )
                continue
            uplinks = tuple(Uplink(p, by_plane[p].switch, by_plane[p].port) for p in range(count))
            first = uplinks[0]
            hosts.append(
                Host(
                    len(hosts),
                    host.name,
                    first.switch,
                    first.port,
                    host_speed,
                    pacing,
                    uplinks,
                )
            )
        return hosts

    def _switches(self) -> list[Switch]:
        spec = self.spec
        result: list[Switch] = []
        seen: dict[str, int] = {}
        for i, switch in enumerate(spec.switches):
            if switch.name in seen:
                self.error(
                    ("switches", i, "name"),
                    f"switches[{i}].name",
                    f"duplicate switch name '{switch.name}' "
                    f"(first at switches[{seen[switch.name]}])",
                    "switch names must be unique",
                )
                continue
            seen[switch.name] = i
            ports = _declared_ports(switch.ports, spec.defaults.port_prefix)
            listed = isinstance(switch.ports, list)
            if ports is not None and self.locate_ports:
                self._declare(len(result), i, ports, listed)
            if ports is not None and listed:
                # A count numbers its ports 1..n: only a list can repeat one.
                duplicates = [p for p, n in Counter(ports).items() if n > 1]
                if duplicates:
                    self.error(
                        ("switches", i, "ports"),
                        f"switches[{i}].ports",
                        f"port '{duplicates[0]}' listed twice",
                        "port names must be unique",
                    )
            if switch.plane is not None:
                self.explicit_plane[len(result)] = (switch.plane, i)
            result.append(
                Switch(
                    len(result),
                    switch.name,
                    switch.platform or spec.defaults.platform,
                    switch.role or "switch",
                    ports or (),
                    switch.mgmt,
                )
            )
        return self._with_mgmt(result)

    def _with_mgmt(self, switches: list[Switch]) -> list[Switch]:
        """Switches without their own `mgmt:` take the inventory's `mgmt:` map, then pool."""
        spec = self.spec.mgmt
        if spec is None:
            return switches
        names = {s.name for s in switches}
        for name in spec.addresses:
            if name not in names:
                self.error(
                    ("mgmt", "addresses", name),
                    f"mgmt.addresses.{name}",
                    f"no switch named '{name}'",
                    "keys are switch names",
                )
        pool = ipaddress.ip_network(spec.pool).hosts() if spec.pool else iter(())
        finished = []
        for switch in switches:
            address = switch.mgmt or spec.addresses.get(switch.name)
            pooled = next(pool, None)
            if address is None and spec.pool is not None:
                if pooled is None:
                    self.error(
                        ("mgmt", "pool"),
                        "mgmt.pool",
                        f"{spec.pool} has fewer host addresses than the {len(switches)} switches",
                        "give a larger pool",
                    )
                    return switches
                address = str(pooled)
            finished.append(replace(switch, mgmt=address))
        return finished

    def _endpoint(
        self,
        text: str,
        path: tuple[str | int, ...],
        field_name: str,
        index: dict[str, int],
        declared: dict[int, set[str]],
        user: str,
        used_ports: dict[int, list[str]],
    ) -> tuple[int, str] | None:
        match = ENDPOINT.match(text)
        assert match is not None  # the schema already checked the form
        name, port = match["switch"], match["port"]
        if name not in index:
            close = sorted(index)[:5]
            self.error(
                path,
                field_name,
                f"unknown switch '{name}'",
                "known switches: " + ", ".join(close) + (" ..." if len(index) > 5 else ""),
            )
            return None
        switch = index[name]
        if switch in declared and port not in declared[switch]:
            ports = sorted(declared[switch])
            self.error(
                path,
                field_name,
                f"switch '{name}' has no port '{port}'",
                f"declared ports: {ports[0]} .. {ports[-1]}" if ports else "",
            )
            return None
        key = (switch, port)
        if key in self.port_users:
            self.error(
                path,
                field_name,
                f"port {name}:{port} is already used by {self.port_users[key]}",
                "each port takes one cable",
            )
            return None
        self.port_users[key] = user
        self.port_origin.setdefault(key, path)
        used_ports[switch].append(port)
        return switch, port

    def _declare(self, switch: int, entry: int, ports: tuple[str, ...], listed: bool) -> None:
        """Remember where `switches[entry]` declares each port: its list item, else its count."""
        for j, port in enumerate(ports):
            where: PathKey = ("switches", entry, "ports")
            self.port_origin.setdefault((switch, port), (*where, j) if listed else where)

    def _check_kernel_names(self, switch: Switch, ports: tuple[str, ...]) -> None:
        """frr, linux and the lab name interfaces after their ports with '/' replaced and long
        names shortened, so two distinct ports can land on one kernel interface."""
        first: dict[str, str] = {}
        for port in ports:
            ifname = kernel_ifname(port)
            if ifname not in first:
                first[ifname] = port
                continue
            if first[ifname] == port:
                continue
            earlier = self.port_origin[(switch.index, first[ifname])]
            path = self.port_origin[(switch.index, port)]
            self.error(
                path,
                format_path(path),
                f"port '{port}' of switch '{switch.name}' and port '{first[ifname]}' "
                f"({format_path(earlier)}, line {self.source.line_of(earlier)}) are both "
                f"kernel interface '{ifname}'",
                "rename one: frr, linux and the lab name interfaces after ports with '/' "
                "replaced by '_' and names over 15 characters shortened",
            )

    def _host_pacing(self, host_speed: float) -> float | None:
        rate = self.spec.defaults.host_flow_rate
        if rate is None:
            return None
        gbps = parse_speed_gbps(rate)
        if gbps > host_speed:
            path: PathKey = ("defaults", "host_flow_rate")
            self.error(
                path,
                format_path(path),
                f"{rate} is faster than the hosts' own link ({host_speed:g}G)",
                "a pacing rate below the host speed, e.g. half of it",
            )
        return gbps

    def _one_port_loop(
        self,
        i: int,
        endpoint: str,
        index: dict[str, int],
        declared: dict[int, set[str]],
        used_ports: dict[int, list[str]],
    ) -> None:
        """A link whose two ends are one port: a self-loop, not a port reused by another cable.

        The port still counts as cabled, so a later link to it is reported against this one.
        """
        field_name = f"links[{i}].a"
        end = self._endpoint(
            endpoint, ("links", i, "a"), field_name, index, declared, f"link {i}", used_ports
        )
        if end is not None:
            self.error(
                ("links", i),
                f"links[{i}]",
                f"links port {endpoint} to itself",
                "a link joins two different switches",
            )

    def _check_connected(
        self, switches: list[Switch], links: list[Link], planes: list[int]
    ) -> None:
        """Every plane is one island: its switches reach each other without leaving it."""
        nr = len(switches)
        if nr == 0:
            return
        labels = _islands(nr, links)
        for plane in range(1 + max(planes)):
            members = [s for s in range(nr) if planes[s] == plane]
            islands = Counter(int(labels[s]) for s in members)
            if len(islands) < 2:
                continue
            main = islands.most_common(1)[0][0]
            stray = [switches[s].name for s in members if labels[s] != main]
            graph = "the switch graph" if max(planes) == 0 else f"plane {plane}"
            self.error(
                ("links",),
                "links",
                f"{graph} is disconnected ({len(islands)} islands); "
                f"cut off: {', '.join(stray[:6])}{' ...' if len(stray) > 6 else ''}",
                "add links so that every switch reaches every other"
                + (" of its plane" if max(planes) else ""),
            )


@dataclass(frozen=True)
class _UplinkEnd:
    position: int  # in the host's `uplinks:` list
    switch: int
    port: str
    path: PathKey


@dataclass(frozen=True)
class _HostEnds:
    entry: int  # in `hosts:`
    name: str
    ends: list[_UplinkEnd]


def _islands(nr: int, links: list[Link]) -> np.ndarray:
    """Connected-component label of every switch."""
    ends = np.array([(link.a, link.b) for link in links], dtype=np.int64).reshape(-1, 2)
    return island_labels(nr, ends)


def _kernel_names_clash(ports_of_switches: list[tuple[str, ...]]) -> bool:
    """Whether two ports of one switch land on one kernel interface (`_check_kernel_names`)."""
    if all_kernel_names_unchanged([port for ports in ports_of_switches for port in ports]):
        return False
    for ports in ports_of_switches:
        distinct = set(ports)
        if len({kernel_ifname(port) for port in distinct}) < len(distinct):
            return True
    return False


def _checked_fabric(spec: InventorySpec, source: SourceMap) -> Fabric:
    """The fabric, or every mistake with its line: a mistaken inventory is checked twice, and
    only the second check locates its mistakes."""
    clean = _WiringChecker(spec, source, locate_ports=False).build_if_clean()
    return canonical_order(clean if clean is not None else _WiringChecker(spec, source).build())


# Port names repeat on every switch (Ethernet1..Ethernet64): their keys are computed once.
_port_key = cache(natural_key)


def canonical_order(fabric: Fabric) -> Fabric:
    """The fabric with switches, hosts and ports in natural name order and links in the order
    of their ends, each link's `a` end the one first in that order.

    Everything downstream numbers things by these indices (addresses, tables, files), so the
    output depends on the wiring as a set of named switches, cables and hosts, never on the
    order the inventory lists them in: reordering any list gives the same bytes. What is in
    order already (a generated fabric, mostly) is kept as it is, without copies.
    """
    nr = fabric.nr
    order = sorted(range(nr), key=[natural_key(s.name) for s in fabric.switches].__getitem__)
    moved = order != list(range(nr))
    new_index = np.empty(nr, dtype=np.int64)
    new_index[order] = np.arange(nr)
    switches = []
    for new, old in enumerate(order):
        switch = fabric.switches[old]
        ports = tuple(sorted(switch.ports, key=_port_key))
        unchanged = new == old and ports == switch.ports
        switches.append(switch if unchanged else replace(switch, index=new, ports=ports))
    links = fabric.links
    if links:
        a = new_index[np.fromiter((link.a for link in links), dtype=np.int64, count=len(links))]
        b = new_index[np.fromiter((link.b for link in links), dtype=np.int64, count=len(links))]
        # One link per switch pair, so the pair alone orders them.
        by_ends = np.lexsort((np.maximum(a, b), np.minimum(a, b)))
        if moved or (a > b).any() or (by_ends != np.arange(len(links))).any():
            links = []
            for new, old in enumerate(by_ends.tolist()):
                link = fabric.links[old]
                if a[old] < b[old]:
                    ends = (int(a[old]), link.a_port, int(b[old]), link.b_port)
                else:
                    ends = (int(b[old]), link.b_port, int(a[old]), link.a_port)
                links.append(Link(new, *ends, link.speed_gbps))
    host_order = sorted(
        range(len(fabric.hosts)), key=[natural_key(h.name) for h in fabric.hosts].__getitem__
    )
    hosts = fabric.hosts
    if moved or host_order != list(range(len(hosts))):
        hosts = []
        for new, old in enumerate(host_order):
            host = fabric.hosts[old]
            uplinks = tuple(replace(u, switch=int(new_index[u.switch])) for u in host.uplinks)
            first = uplinks[0]
            hosts.append(
                replace(host, index=new, switch=first.switch, port=first.port, uplinks=uplinks)
            )
    return Fabric(fabric.name, switches, list(links), list(hosts), fabric.origin, tuple(order))


def build_fabric(
    loaded: LoadedInventory, size_check: Callable[[int, int, int], None] | None = None
) -> Fabric:
    """The inventory's fabric. `size_check(switches, links, hosts)` runs before the fabric is
    built from them (for a generator block, once the generator has sized it): a caller
    refuses there what it cannot afford."""
    with collector_paused():
        return _build_fabric(loaded, size_check)


def _build_fabric(
    loaded: LoadedInventory, size_check: Callable[[int, int, int], None] | None
) -> Fabric:
    spec = loaded.spec
    if spec.generate is not None:
        from fatpaths_cfg.inventory.expand import expand_generator

        spec = expand_generator(loaded, size_check)
        fabric = _checked_fabric(spec, loaded.source)
        fabric.origin = {
            "generate": loaded.spec.generate.model_dump() if loaded.spec.generate else None
        }
        return fabric
    if size_check is not None:
        size_check(len(spec.switches), len(spec.links), len(spec.hosts))
    return _checked_fabric(spec, loaded.source)


def load_fabric(inventory: Path) -> tuple[LoadedInventory, Fabric]:
    """Inventory file -> its validated fabric. Here rather than in `api`, so that commands
    that only look at the cabling (topo show) do not import the renderers and reports."""
    from fatpaths_cfg.inventory.load import load_inventory

    loaded = load_inventory(inventory)
    return loaded, build_fabric(loaded)
