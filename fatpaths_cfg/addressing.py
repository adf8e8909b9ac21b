"""The address plan: host subnets per (layer, switch), point-to-point links, loopbacks, VLANs.

Prefix encoding: host address = pool | plane | layer | switch | host, so the destination address
alone names the plane and the layer, and a switch needs one route per (layer, destination switch
of its plane). The switch field numbers switches within their plane; with one plane the plane
field has no bits. A host has one address per (plane, layer), in the subnet of its switch in
that plane. VLAN encoding:
the same numbering, but every layer is one broadcast domain (a VLAN per layer) and the layer is
chosen by the VLAN tag, so host addresses carry the whole layer block as their prefix.

Addresses are kept as integers and formatted once into string tables: renderers index those
tables instead of building `ipaddress` objects per route (a Slim Fly q=19 has 4.7M routes).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fatpaths_cfg.errors import ErrorCollector
from fatpaths_cfg.fabric import Fabric

if TYPE_CHECKING:
    # Annotations only: reading a compiled fabric back needs no pydantic models.
    from fatpaths_cfg.inventory.schema import AddressingSpec

MAX_VLAN = 4094
V6_SUBNET_PREFIX = 64
# Locally administered, unicast: bit 1 of the first octet set, bit 0 clear.
MAC_PREFIX = 0x02FA_0000_0000

Locate = Callable[[tuple[str | int, ...]], int]
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
POOL_FIELDS = {
    "ipv4": ("host_pool_v4", "link_pool_v4", "loopback_pool_v4"),
    "ipv6": ("host_pool_v6", "link_pool_v6", "loopback_pool_v6"),
}


@dataclass(frozen=True)
class SwitchNumbers:
    """Where each switch sits in the address plan: `number` places its loopback and the link
    slots of its ports, `local` (its number within its plane) its host subnets.

    A fresh compile numbers switches densely in name order; `compile --keep-layers OLD` keeps
    every switch's numbers of OLD and gives a new switch the lowest free ones, so that adding or
    removing a switch moves no other switch's addresses.
    """

    number: list[int]
    local: list[int]

    @property
    def span(self) -> int:
        """Numbers in use, gaps included."""
        return max(self.number, default=-1) + 1

    @property
    def local_span(self) -> int:
        return max(self.local, default=-1) + 1


def dense_numbers(fabric: Fabric) -> SwitchNumbers:
    local = [0] * fabric.nr
    for plane in range(fabric.planes):
        for number, switch in enumerate(fabric.switches_of_plane(plane)):
            local[switch] = number
    return SwitchNumbers(list(range(fabric.nr)), local)


def kept_numbers(fabric: Fabric, earlier: dict[str, tuple[int, int]]) -> SwitchNumbers:
    """Numbers of the switches an earlier plan numbered (name -> (number, local)) kept; the
    others, in name order, take the lowest numbers free (globally, and in their plane)."""
    number = [-1] * fabric.nr
    local = [-1] * fabric.nr
    for switch in fabric.switches:
        if switch.name in earlier:
            number[switch.index], local[switch.index] = earlier[switch.name]
    used = set(number)
    used_local = {(fabric.switches[s].plane, n) for s, n in enumerate(local) if n >= 0}
    free, free_local = 0, dict.fromkeys(range(fabric.planes), 0)
    for switch in fabric.switches:
        if number[switch.index] >= 0:
            continue
        while free in used:
            free += 1
        number[switch.index] = free
        used.add(free)
        plane = switch.plane
        while (plane, free_local[plane]) in used_local:
            free_local[plane] += 1
        local[switch.index] = free_local[plane]
        used_local.add((plane, free_local[plane]))
    return SwitchNumbers(number, local)


def _no_line(_: tuple[str | int, ...]) -> int:
    return 0


def v4_text(value: int) -> str:
    return f"{value >> 24}.{(value >> 16) & 255}.{(value >> 8) & 255}.{value & 255}"


def v6_text(value: int) -> str:
    return ipaddress.IPv6Address(value).compressed


def host_mac(host_index: int) -> str:
    """A deterministic locally administered MAC per host (shared by its layer VLANs)."""
    value = MAC_PREFIX | host_index
    return ":".join(f"{(value >> shift) & 255:02x}" for shift in range(40, -8, -8))


def bits_for(count: int) -> int:
    """Bits needed to number `count` things 0..count-1."""
    return max(count - 1, 0).bit_length()


@dataclass(frozen=True)
class FieldWidths:
    layer_bits: int
    switch_bits: int
    host_bits: int  # IPv4 only; IPv6 subnets are always /64
    plane_bits: int = 0

    @property
    def v4_bits(self) -> int:
        return self.plane_bits + self.layer_bits + self.switch_bits + self.host_bits


def field_widths(
    layer_count: int, nr: int, max_hosts: int, planes: int = 1, plane_size: int | None = None
) -> FieldWidths:
    # A subnet holds its hosts, the switch gateway, the network and the broadcast address.
    return FieldWidths(
        bits_for(layer_count),
        bits_for(nr if plane_size is None else plane_size),
        (max_hosts + 2).bit_length(),
        bits_for(planes),
    )


@dataclass
class FamilyTables:
    """Formatted addresses of one family; index [layer][switch] or [layer][host]."""

    subnets: list[list[str]]  # "10.0.8.0/29"
    gateways: list[list[str]]  # "10.0.8.1" (switch side of each host subnet)
    hosts: list[list[str]]  # "10.0.8.2" (no prefix length); plane 0's, as plane_hosts[0]
    host_prefix_len: int  # prefix length hosts put on their addresses
    subnet_prefix_len: int
    links: list[tuple[str, str]]  # ("172.16.0.0", "172.16.0.1") per link: a side, b side
    link_prefix_len: int
    loopbacks: list[str]  # "192.168.0.1"
    loopback_prefix_len: int
    pools: list[str] = field(default_factory=list)  # host pools a host routes via its switch
    # [plane][layer][host]: a host's address in each plane (one plane: [hosts]).
    plane_hosts: list[list[list[str]]] = field(default_factory=list)
    # Per plane, the block of every address in it ("10.0.0.0/9"): a host reaches a plane's
    # addresses through its uplink into that plane.
    plane_pools: list[str] = field(default_factory=list)

    def host_address(self, plane: int, layer: int, host: int) -> str:
        return self.plane_hosts[plane][layer][host]


@dataclass
class AddressPlan:
    encoding: str
    family: str
    layer_count: int
    widths: FieldWidths
    v4: FamilyTables | None
    v6: FamilyTables | None
    vlans: list[int]  # VLAN id per layer (VLAN encoding), else []
    host_macs: list[str]  # per host (VLAN encoding), else []
    layout: dict[str, Any]
    numbers: SwitchNumbers | None = None  # None: dense (read back from an older output)

    @property
    def families(self) -> list[FamilyTables]:
        return [t for t in (self.v4, self.v6) if t is not None]

    def to_json(self, fabric: Fabric) -> dict[str, Any]:
        return {
            "encoding": self.encoding,
            "family": self.family,
            "layout": self.layout,
            "switches": [self._switch_json(s.index, s.name) for s in fabric.switches],
            "links": [self._link_json(i) for i in range(len(fabric.links))],
            "hosts": [
                self._host_json(h.index, h.name, fabric.switches[h.switch].name)
                for h in fabric.hosts
            ],
            "vlans": [{"layer": i + 1, "vlan": v} for i, v in enumerate(self.vlans)],
        }

    def _switch_json(self, index: int, name: str) -> dict[str, Any]:
        v4, v6 = self.v4, self.v6
        gateways = self.encoding == "prefix"
        numbers = self.numbers
        return {
            "name": name,
            # Kept by `compile --keep-layers`, so that a change moves no other switch.
            "number": numbers.number[index] if numbers else index,
            "local": numbers.local[index] if numbers else None,
            "loopback_v4": f"{v4.loopbacks[index]}/32" if v4 else None,
            "loopback_v6": f"{v6.loopbacks[index]}/128" if v6 else None,
            "subnets": [
                {
                    "layer": layer + 1,
                    "v4": v4.subnets[layer][index] if v4 else None,
                    "gateway_v4": v4.gateways[layer][index] if v4 and gateways else None,
                    "v6": v6.subnets[layer][index] if v6 else None,
                    "gateway_v6": v6.gateways[layer][index] if v6 and gateways else None,
                }
                for layer in range(self.layer_count)
            ],
        }

    def _link_json(self, index: int) -> dict[str, Any]:
        v4, v6 = self.v4, self.v6
        return {
            "index": index,
            "a_v4": f"{v4.links[index][0]}/{v4.link_prefix_len}" if v4 else None,
            "b_v4": f"{v4.links[index][1]}/{v4.link_prefix_len}" if v4 else None,
            "a_v6": f"{v6.links[index][0]}/{v6.link_prefix_len}" if v6 else None,
            "b_v6": f"{v6.links[index][1]}/{v6.link_prefix_len}" if v6 else None,
        }

    @property
    def planes(self) -> int:
        return len(self.families[0].plane_hosts) if self.families else 1

    def _host_json(self, index: int, name: str, switch: str) -> dict[str, Any]:
        v4, v6 = self.v4, self.v6
        entry: dict[str, Any] = {
            "name": name,
            "switch": switch,
            # Plane by plane, so the first `layer_count` entries are plane 0's.
            "addresses": [
                {
                    "plane": plane,
                    "layer": layer + 1,
                    "v4": f"{v4.host_address(plane, layer, index)}/{v4.host_prefix_len}"
                    if v4
                    else None,
                    "v6": f"{v6.host_address(plane, layer, index)}/{v6.host_prefix_len}"
                    if v6
                    else None,
                }
                for plane in range(self.planes)
                for layer in range(self.layer_count)
            ],
        }
        if self.host_macs:
            entry["mac"] = self.host_macs[index]
        return entry

    def address_rows(self, fabric: Fabric) -> list[tuple[str, int, int, str]]:
        """(host, plane, layer, address) rows for hosts/addresses.csv, every family."""
        rows = []
        for host in fabric.hosts:
            for plane in range(self.planes):
                for layer in range(self.layer_count):
                    for tables in self.families:
                        address = tables.host_address(plane, layer, host.index)
                        rows.append(
                            (host.name, plane, layer + 1, f"{address}/{tables.host_prefix_len}")
                        )
        return rows


class _PlanChecker:
    """Fit checks: every problem names its field and how many bits it needed."""

    def __init__(self, spec: AddressingSpec, file: str, locate: Locate) -> None:
        self.spec = spec
        self.file = file
        self.locate = locate
        self.errors = ErrorCollector()

    def fits(self, field_name: str, pool: str, needed_bits: int, what: str, hint: str) -> bool:
        network = ipaddress.ip_network(pool)
        available = network.max_prefixlen - network.prefixlen
        if needed_bits <= available:
            return True
        self.errors.add(
            self.file,
            self.locate(("addressing", field_name)),
            f"addressing.{field_name}",
            f"{pool} leaves {available} bits but {what} needs {needed_bits} bits",
            hint,
        )
        return False

    def disjoint(self, fields: tuple[str, ...]) -> None:
        """Pools of one family must not share an address: a host, a link end and a loopback
        that coincide break forwarding in ways no route check can see."""
        networks = {name: ipaddress.ip_network(getattr(self.spec, name)) for name in fields}
        for i, first in enumerate(fields):
            for second in fields[i + 1 :]:
                if networks[first].overlaps(networks[second]):
                    self._overlap(first, second, networks)

    def _overlap(self, first: str, second: str, networks: dict[str, IPNetwork]) -> None:
        # Reported at a pool the user wrote: a default has no line of its own.
        written = self.spec.model_fields_set
        here, other = (second, first) if second in written else (first, second)
        mine, theirs = networks[here], networks[other]
        # Overlapping CIDR blocks always nest, so the prefix lengths tell which holds which.
        if mine.prefixlen == theirs.prefixlen:
            relation = "is the same range as"
        elif mine.prefixlen > theirs.prefixlen:
            relation = "lies inside"
        else:
            relation = "contains"
        where = f"line {self.locate(('addressing', other))}" if other in written else "its default"
        self.errors.add(
            self.file,
            self.locate(("addressing", here)),
            f"addressing.{here}",
            f"{mine} {relation} addressing.{other} {theirs} ({where})",
            "give host, link and loopback pools ranges of their own: addresses taken from "
            "both would collide",
        )

    def vlans(self, layer_count: int, platform_limits: dict[str, int]) -> list[int]:
        base = self.spec.vlan_base
        vlans = list(range(base, base + layer_count))
        top = vlans[-1]
        where = self.locate(("addressing", "vlan_base"))
        if top > MAX_VLAN:
            self.errors.add(
                self.file,
                where,
                "addressing.vlan_base",
                f"{layer_count} layers from VLAN {base} reach VLAN {top}, above {MAX_VLAN}",
                f"use vlan_base <= {MAX_VLAN - layer_count + 1}",
            )
        for platform, limit in sorted(platform_limits.items()):
            if layer_count > limit:
                self.errors.add(
                    self.file,
                    where,
                    "addressing.encoding",
                    f"VLAN encoding needs {layer_count} VLANs but platform {platform} "
                    f"supports at most {limit}",
                    "use fewer layers or encoding: prefix",
                )
        return vlans


def _family_tables(
    host_pool: str,
    link_pool: str,
    loopback_pool: str,
    host_bits: int,
    fabric: Fabric,
    layer_count: int,
    widths: FieldWidths,
    vlan: bool,
    numbers: SwitchNumbers,
) -> FamilyTables:
    """Subnets, gateways and addresses of one family: pool | plane | layer | switch | host."""
    network = ipaddress.ip_network(host_pool)
    bits = network.max_prefixlen
    text = v4_text if bits == 32 else v6_text
    pool = int(network.network_address)
    layer_shift = host_bits + widths.switch_bits
    plane_shift = layer_shift + widths.layer_bits
    subnet_len = bits - host_bits
    plane_of, local = [s.plane for s in fabric.switches], numbers.local
    bases = [
        [
            pool | (plane_of[s] << plane_shift) | (layer << layer_shift) | (local[s] << host_bits)
            for s in range(fabric.nr)
        ]
        for layer in range(layer_count)
    ]
    plane_len = network.prefixlen + widths.plane_bits
    layer_block_len = plane_len + widths.layer_bits
    plane_hosts = [_host_addresses(fabric, bases, text, p) for p in range(fabric.planes)]
    return FamilyTables(
        subnets=[[f"{text(b)}/{subnet_len}" for b in row] for row in bases],
        gateways=[[text(b + 1) for b in row] for row in bases],
        hosts=plane_hosts[0],
        host_prefix_len=layer_block_len if vlan else subnet_len,
        subnet_prefix_len=subnet_len,
        links=_link_addresses(link_pool, fabric, numbers, text),
        link_prefix_len=bits - 1,
        loopbacks=_loopbacks(loopback_pool, numbers, text),
        loopback_prefix_len=bits,
        pools=[host_pool],
        plane_hosts=plane_hosts,
        plane_pools=[
            f"{text(pool | (p << plane_shift))}/{bits - plane_shift}" for p in range(fabric.planes)
        ],
    )


def _v4_tables(
    spec: AddressingSpec,
    fabric: Fabric,
    layer_count: int,
    widths: FieldWidths,
    vlan: bool,
    numbers: SwitchNumbers,
) -> FamilyTables:
    return _family_tables(
        spec.host_pool_v4,
        spec.link_pool_v4,
        spec.loopback_pool_v4,
        widths.host_bits,
        fabric,
        layer_count,
        widths,
        vlan,
        numbers,
    )


def _v6_tables(
    spec: AddressingSpec,
    fabric: Fabric,
    layer_count: int,
    widths: FieldWidths,
    vlan: bool,
    numbers: SwitchNumbers,
) -> FamilyTables:
    # IPv6 subnets are always /64 (SLAAC, ND), whatever the host count needs.
    return _family_tables(
        spec.host_pool_v6,
        spec.link_pool_v6,
        spec.loopback_pool_v6,
        128 - V6_SUBNET_PREFIX,
        fabric,
        layer_count,
        widths,
        vlan,
        numbers,
    )


def _host_addresses(
    fabric: Fabric, bases: list[list[int]], text: Callable[[int], str], plane: int
) -> list[list[str]]:
    """[layer][host] addresses of every host in one plane."""
    switch_of = [h.uplinks[plane].switch for h in fabric.hosts]
    # Offsets 0 and 1 are the network address and the switch gateway.
    offsets = [0] * len(fabric.hosts)
    for switch in fabric.switches_of_plane(plane):
        for ordinal, host in enumerate(fabric.hosts_of_switch[switch]):
            offsets[host] = ordinal + 2
    return [[text(row[s] + o) for s, o in zip(switch_of, offsets, strict=True)] for row in bases]


def link_slot_bits(fabric: Fabric, numbers: SwitchNumbers) -> int:
    """Bits of a link's slot: its `a` switch's number, then the `a` port's place on it."""
    ports = max((len(s.ports) for s in fabric.switches), default=1)
    return bits_for(numbers.span) + bits_for(ports)


def link_slots(fabric: Fabric, numbers: SwitchNumbers) -> list[int]:
    """Each link's /31 (/127) in the link pool, from its `a` end (switch, port) alone, never
    from its place among the links: adding or removing a cable moves no other link's
    addresses, so no route's next hop changes but those the cable itself touches."""
    port_bits = bits_for(max((len(s.ports) for s in fabric.switches), default=1))
    place = [{port: i for i, port in enumerate(s.ports)} for s in fabric.switches]
    return [
        (numbers.number[link.a] << port_bits) | place[link.a][link.a_port] for link in fabric.links
    ]


def _link_addresses(
    pool: str, fabric: Fabric, numbers: SwitchNumbers, text: Callable[[int], str]
) -> list[tuple[str, str]]:
    base = int(ipaddress.ip_network(pool).network_address)
    slots = link_slots(fabric, numbers)
    return [(text(base + 2 * i), text(base + 2 * i + 1)) for i in slots]


def _loopbacks(pool: str, numbers: SwitchNumbers, text: Callable[[int], str]) -> list[str]:
    base = int(ipaddress.ip_network(pool).network_address)
    return [text(base + 1 + i) for i in numbers.number]


def _check_fit(
    checker: _PlanChecker,
    fabric: Fabric,
    widths: FieldWidths,
    families: list[str],
    numbers: SwitchNumbers,
) -> None:
    spec = checker.spec
    links = len(fabric.links)
    slot_bits = link_slot_bits(fabric, numbers)
    loopbacks = numbers.span
    if "ipv4" in families:
        checker.fits(
            "host_pool_v4",
            spec.host_pool_v4,
            widths.v4_bits,
            f"the host plan ({_plane_text(widths)}{widths.layer_bits} layer + "
            f"{widths.switch_bits} switch + {widths.host_bits} host bits)",
            (
                f"use a larger pool (at most /{32 - widths.v4_bits}) or family: ipv6"
                if widths.v4_bits <= 32
                else "IPv4 cannot hold this plan; use family: ipv6"
            ),
        )
        checker.fits(
            "link_pool_v4",
            spec.link_pool_v4,
            slot_bits + 1,
            f"{links} point-to-point /31 links (a /31 per switch port, {slot_bits} bits)",
            f"use a pool of at most /{31 - slot_bits}",
        )
        checker.fits(
            "loopback_pool_v4",
            spec.loopback_pool_v4,
            bits_for(loopbacks + 1),
            f"{fabric.nr} switch loopbacks",
            f"use a pool of at most /{32 - bits_for(loopbacks + 1)}",
        )
    if "ipv6" in families:
        needed = widths.plane_bits + widths.layer_bits + widths.switch_bits
        checker.fits(
            "host_pool_v6",
            spec.host_pool_v6,
            needed + V6_SUBNET_PREFIX,
            f"the host plan ({_plane_text(widths)}{widths.layer_bits} layer + "
            f"{widths.switch_bits} switch bits above /{V6_SUBNET_PREFIX} subnets)",
            f"use a pool of at most /{V6_SUBNET_PREFIX - needed}",
        )
        checker.fits(
            "link_pool_v6",
            spec.link_pool_v6,
            slot_bits + 1,
            f"{links} /127 links (a /127 per switch port, {slot_bits} bits)",
            "",
        )
        checker.fits(
            "loopback_pool_v6",
            spec.loopback_pool_v6,
            bits_for(loopbacks + 1),
            f"{fabric.nr} switch loopbacks",
            "",
        )


def _plane_text(widths: FieldWidths) -> str:
    return f"{widths.plane_bits} plane + " if widths.plane_bits else ""


def allocate_addresses(
    fabric: Fabric,
    layer_count: int,
    spec: AddressingSpec,
    vlan_limits: dict[str, int] | None = None,
    file: str = "",
    locate: Locate = _no_line,
    numbers: SwitchNumbers | None = None,
) -> AddressPlan:
    """The address plan, or UserErrors naming every field that does not fit.

    `vlan_limits` maps each platform in use to its VLAN limit (checked in VLAN encoding).
    """
    families = {"ipv4": ["ipv4"], "ipv6": ["ipv6"], "dual": ["ipv4", "ipv6"]}[spec.family]
    max_hosts = max((len(m) for m in fabric.hosts_of_switch), default=0)
    numbers = numbers or dense_numbers(fabric)
    widths = field_widths(
        layer_count, fabric.nr, max_hosts, fabric.planes, max(numbers.local_span, 1)
    )
    checker = _PlanChecker(spec, file, locate)
    if spec.encoding == "vlan" and fabric.planes > 1:
        checker.errors.add(
            file,
            locate(("addressing", "encoding")),
            "addressing.encoding",
            f"VLAN encoding bridges one fabric but this one has {fabric.planes} planes",
            "use encoding: prefix with parallel planes",
        )
    _check_fit(checker, fabric, widths, families, numbers)
    for family in families:
        checker.disjoint(POOL_FIELDS[family])
    vlan = spec.encoding == "vlan"
    vlans = checker.vlans(layer_count, vlan_limits or {}) if vlan else []
    checker.errors.raise_if_any()
    v4 = (
        _v4_tables(spec, fabric, layer_count, widths, vlan, numbers) if "ipv4" in families else None
    )
    v6 = (
        _v6_tables(spec, fabric, layer_count, widths, vlan, numbers) if "ipv6" in families else None
    )
    layout: dict[str, Any] = {
        "host_pool_v4": spec.host_pool_v4 if v4 else None,
        "host_pool_v6": spec.host_pool_v6 if v6 else None,
        "plane_bits": widths.plane_bits,
        "layer_bits": widths.layer_bits,
        "switch_bits": widths.switch_bits,
        "host_bits": widths.host_bits,
        "subnet_prefix_v4": v4.subnet_prefix_len if v4 else None,
        "subnet_prefix_v6": V6_SUBNET_PREFIX if v6 else None,
        "host_prefix_v4": v4.host_prefix_len if v4 else None,
        "host_prefix_v6": v6.host_prefix_len if v6 else None,
        "link_pool_v4": spec.link_pool_v4 if v4 else None,
        "link_pool_v6": spec.link_pool_v6 if v6 else None,
        "loopback_pool_v4": spec.loopback_pool_v4 if v4 else None,
        "loopback_pool_v6": spec.loopback_pool_v6 if v6 else None,
    }
    macs = [host_mac(h.index) for h in fabric.hosts] if vlan else []
    return AddressPlan(
        spec.encoding, spec.family, layer_count, widths, v4, v6, vlans, macs, layout, numbers
    )
