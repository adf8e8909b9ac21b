"""The lab plan: which namespaces, veth pairs, config files and addresses a compiled fabric needs.

Pure data computed from the compiled output directory; nothing here touches the kernel.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from pathlib import Path

from fatpaths_cfg.compiled import AddressRecords, LoadedCompiled, load_compiled
from fatpaths_cfg.errors import ErrorCollector, UserErrors
from fatpaths_cfg.lab.names import host_netns, kernel_ifname, lab_id, switch_netns
from fatpaths_cfg.platforms import PLATFORMS
from fatpaths_cfg.render.hosts import plane_device

# A route line: its prefix and what follows it (next hops, or a device).
_ROUTE_LINE = re.compile(r"^\s*(?:ip|ipv6) route (\S+)[ \t]+([^\n]*)", re.MULTILINE)
_SCRIPT_ROUTE = re.compile(r"ip (?:-[46] )?route (?:replace|add) (\S+)([^\n]*)")
_VIA = re.compile(r"\bvia (\S+)")


@dataclass(frozen=True)
class SwitchNode:
    index: int
    name: str
    platform: str
    netns: str
    # frr: frr.conf + interfaces.sh; linux: one script that also installs the routes.
    setup_script: Path
    frr_conf: Path | None
    routes: frozenset[str]
    # Prefix -> the next-hop addresses its route lines name (none: a route onto a device).
    next_hops: dict[str, frozenset[str]] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class HostPort:
    """A host's uplink into one plane, as the lab cables it."""

    plane: int
    switch: int
    switch_ifname: str
    device: str  # in the host's namespace: eth0 for plane 0, eth1 for plane 1, ...


@dataclass(frozen=True)
class HostNode:
    index: int
    name: str
    switch: int
    switch_ifname: str
    netns: str
    plan: Path
    # Address (no prefix length) per layer id, v4 preferred: what pings and traceroutes target.
    addresses: dict[int, str]
    ports: tuple[HostPort, ...] = ()
    # The same per (plane, layer id); plane 0's are `addresses`.
    plane_addresses: dict[tuple[int, int], str] = field(default_factory=dict)

    def switch_in(self, plane: int) -> int:
        """The switch this host hangs off in a plane (its only one on a single plane)."""
        return self.ports[plane].switch if self.ports else self.switch

    def device_in(self, plane: int) -> str:
        return self.ports[plane].device if self.ports else plane_device(0)


@dataclass(frozen=True)
class VethPair:
    """One link or host uplink: `a_if` in `a_ns`, `b_if` in `b_ns`."""

    link: int | None
    a_ns: str
    a_if: str
    b_ns: str
    b_if: str


@dataclass(frozen=True)
class LabPlan:
    lab: str
    out: Path
    compiled: LoadedCompiled
    switches: list[SwitchNode]
    hosts: list[HostNode]
    links: list[VethPair]
    uplinks: list[VethPair]
    # Every address a switch owns -> switch index: turns traceroute hops into switches.
    switch_of_address: dict[str, int]

    @property
    def name(self) -> str:
        return self.compiled.fabric.name

    @property
    def layer_ids(self) -> list[int]:
        return self.compiled.layer_ids

    @property
    def planes(self) -> int:
        return self.compiled.fabric.planes

    def plane_links(self, plane: int) -> list[int]:
        """Every switch-to-switch link of a plane: what `lab fail --plane` takes down."""
        fabric = self.compiled.fabric
        return [k.index for k in fabric.links if fabric.switches[k.a].plane == plane]

    @property
    def lab_dir(self) -> Path:
        return self.out / "lab"

    @property
    def state_file(self) -> Path:
        return self.lab_dir / "state.json"

    def link_pair(self, index: int) -> VethPair:
        for pair in self.links:
            if pair.link == index:
                return pair
        raise KeyError(index)


def _bare(address: str | None) -> str | None:
    return None if address is None else address.split("/")[0]


def _switch_addresses(addresses: AddressRecords, loaded: LoadedCompiled) -> dict[str, int]:
    owner: dict[str, int] = {}
    for _family, tables in addresses.tables():
        for s, loopback in enumerate(tables.loopbacks):
            owner[str(_bare(loopback))] = s
        for row in tables.gateways or []:
            for s, gateway in enumerate(row):
                owner[str(_bare(gateway))] = s
        for link, sides in zip(loaded.fabric.links, tables.links, strict=True):
            for value, s in zip(sides, (link.a, link.b), strict=True):
                owner[str(ipaddress.ip_interface(value).ip)] = s
    return owner


def build_plan(out: Path) -> LabPlan:
    """Read OUT and check it can run here; every problem is reported at once as a user error."""
    loaded = load_compiled(out)
    fabric_file = str(out / "fabric.json")
    addressing = loaded.addresses
    if addressing is None:
        raise UserErrors.single(
            fabric_file,
            "addressing",
            "the compiled fabric has no address plan, so there is nothing to run",
            "recompile with a fatpaths that renders configs and host plans",
        )
    if addressing.encoding == "vlan":
        raise UserErrors.single(
            fabric_file,
            "addressing.encoding",
            "the lab cannot run the VLAN encoding: this kernel has no 802.1Q VLAN devices "
            "and no VLAN-filtering bridge",
            "set `addressing: {encoding: prefix}` in the inventory and recompile",
        )
    errors = ErrorCollector()
    lab = lab_id(loaded.fabric.name, out)
    switches: list[SwitchNode] = []
    for s in loaded.fabric.switches:
        node = _switch_node(out, lab, s.index, s.name, s.platform, errors)
        if node is not None:
            switches.append(node)
    # A host's address in each (plane, layer): IPv4's where the plan has it, else IPv6's.
    _family, first = addressing.tables()[0]
    hosts: list[HostNode] = []
    uplinks: list[VethPair] = []
    for h in loaded.fabric.hosts:
        plan_file = out / "hosts" / f"{h.name}.sh"
        if not plan_file.is_file():
            errors.add(str(plan_file), 0, "", "host plan missing", "recompile")
        plane_addresses = {
            place: str(_bare(address))
            for place, address in zip(addressing.host_places, first.hosts[h.index], strict=True)
        }
        addresses = {layer: a for (plane, layer), a in plane_addresses.items() if plane == 0}
        ns = host_netns(lab, h.index)
        ports = tuple(
            HostPort(u.plane, u.switch, kernel_ifname(u.port), plane_device(u.plane))
            for u in h.uplinks
        )
        hosts.append(
            HostNode(
                h.index,
                h.name,
                h.switch,
                ports[0].switch_ifname,
                ns,
                plan_file,
                addresses,
                ports,
                plane_addresses,
            )
        )
        uplinks += [
            VethPair(None, switch_netns(lab, port.switch), port.switch_ifname, ns, port.device)
            for port in ports
        ]
    errors.raise_if_any()
    links = [
        VethPair(
            link.index,
            switch_netns(lab, link.a),
            kernel_ifname(link.a_port),
            switch_netns(lab, link.b),
            kernel_ifname(link.b_port),
        )
        for link in loaded.fabric.links
    ]
    return LabPlan(
        lab, out, loaded, switches, hosts, links, uplinks, _switch_addresses(addressing, loaded)
    )


def lab_platforms() -> list[str]:
    """The platforms the namespace lab runs (a `netns` node in their descriptor)."""
    return [name for name, platform in PLATFORMS.items() if platform.netns is not None]


def _config_files(out: Path, name: str, platform: str) -> tuple[Path, Path | None]:
    """(script, frr.conf) of a switch as a platform renders them."""
    node = PLATFORMS[platform].netns
    assert node is not None, f"the lab cannot run platform {platform}"
    folder = out / "configs" / platform
    frr_conf = None if node.frr_conf is None else folder / node.frr_conf.format(switch=name)
    return folder / node.script.format(switch=name), frr_conf


def _lab_platform(out: Path, name: str, declared: str) -> str:
    """The platform whose rendered files the lab runs for a switch: the inventory's, unless
    `compile --platform` rendered the switch only for another one the lab runs (an eos fabric
    compiled with --platform frr, say). With no runnable files, the declared platform, so the
    error names what is missing."""
    runnable = lab_platforms()
    for platform in (declared, *runnable):
        if platform in runnable:
            script, frr_conf = _config_files(out, name, platform)
            if script.is_file() and (frr_conf is None or frr_conf.is_file()):
                return platform
    return declared


def _switch_node(
    out: Path, lab: str, index: int, name: str, declared: str, errors: ErrorCollector
) -> SwitchNode | None:
    platform = _lab_platform(out, name, declared)
    if platform not in lab_platforms():
        errors.add(
            str(out / "fabric.json"),
            0,
            f"switches[{index}].platform",
            f"switch {name} has platform {platform!r}, which the lab cannot run",
            f"the lab runs {' and '.join(lab_platforms())}; use `fatpaths lab clab` for others",
        )
        return None
    script, frr_conf = _config_files(out, name, platform)
    missing = [p for p in (script, frr_conf) if p is not None and not p.is_file()]
    for path in missing:
        errors.add(str(path), 0, "", f"compiled config of switch {name} missing", "recompile")
    if missing:
        return None
    if frr_conf is not None:
        lines = _ROUTE_LINE.findall(frr_conf.read_text(encoding="utf-8"))
        # frr: `ip route PREFIX NEXTHOP [DISTANCE]`
        hops = [(prefix, rest.split()[:1]) for prefix, rest in lines]
    else:
        lines = _SCRIPT_ROUTE.findall(script.read_text(encoding="utf-8"))
        hops = [(prefix, _VIA.findall(rest)) for prefix, rest in lines]
    next_hops: dict[str, set[str]] = {}
    for prefix, addresses in hops:
        next_hops.setdefault(prefix, set()).update(addresses)
    return SwitchNode(
        index,
        name,
        platform,
        switch_netns(lab, index),
        script,
        frr_conf,
        frozenset(next_hops),
        {prefix: frozenset(found) for prefix, found in next_hops.items()},
    )
