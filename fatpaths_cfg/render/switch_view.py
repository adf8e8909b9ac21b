"""Per-switch views: the routes, ports and addresses one switch's config needs, as strings.

Route lists are the bulk of every config (n * (Nr - 1) per switch), so next hops come from numpy
in one pass per (layer, switch) and addresses from the plan's preformatted string tables.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from fatpaths_cfg.addressing import AddressPlan, FamilyTables
from fatpaths_cfg.compiled import CompiledFabric
from fatpaths_cfg.render.base import HostPort, LayerRoutes, LinkPort, StaticMac, SwitchView
from fatpaths_cfg.render.routes import EMPTY_ROUTES, PackedTexts, RouteTable
from fatpaths_cfg.routing import layer_neighbours

# Access VLAN that groups host-facing ports behind one gateway interface on eos and sonic,
# where one subnet cannot sit on several routed ports.
HOST_VLAN = 1000


class ViewBuilder:
    def __init__(self, compiled: CompiledFabric, plan: AddressPlan) -> None:
        self.compiled = compiled
        self.plan = plan
        fabric = compiled.fabric
        self.neighbours = (
            [layer_neighbours(fabric.nr, fabric.edges, layer.links) for layer in compiled.layers]
            if compiled.routing.ecmp
            else None
        )
        self.peer_v4 = self._peer_addresses(plan.v4)
        self.peer_v6 = self._peer_addresses(plan.v6)
        # Subnets per layer, packed: a route is an index into them, not a Python string
        # (67M routes per family in a Slim Fly q=37).
        self.subnets_v4 = [PackedTexts.of(row) for row in (plan.v4.subnets if plan.v4 else [])]
        self.subnets_v6 = [PackedTexts.of(row) for row in (plan.v6.subnets if plan.v6 else [])]
        self.port_to: list[dict[int, str]] = [{} for _ in fabric.switches]
        for link in fabric.links:
            self.port_to[link.a][link.b] = link.a_port
            self.port_to[link.b][link.a] = link.b_port
        self.host_switch = np.array([h.switch for h in fabric.hosts], dtype=np.int64)
        self.links_of: list[list[int]] = [[] for _ in fabric.switches]
        for link in fabric.links:
            self.links_of[link.a].append(link.index)
            self.links_of[link.b].append(link.index)

    def _peer_addresses(self, tables: FamilyTables | None) -> list[dict[int, str]]:
        peers: list[dict[int, str]] = [{} for _ in self.compiled.fabric.switches]
        if tables is None:
            return peers
        for link in self.compiled.fabric.links:
            a_addr, b_addr = tables.links[link.index]
            peers[link.a][link.b] = b_addr
            peers[link.b][link.a] = a_addr
        return peers

    def next_hops(self, layer: int, switch: int) -> tuple[np.ndarray, np.ndarray]:
        """(destination, next hop) pairs, sorted by destination; several per destination
        when equal-cost next hops inside the layer are on."""
        routing = self.compiled.routing
        if self.neighbours is None:
            hops = routing.next_hop[layer, switch]
            targets = np.flatnonzero(hops >= 0)
            return targets, hops[targets]
        neighbours = self.neighbours[layer][switch]
        dist = routing.dist[layer]
        own = dist[switch].astype(np.int16)
        closer = dist[neighbours].astype(np.int16) == (own - 1)[None, :]
        closer[:, switch] = False
        targets, which = np.nonzero(closer.T)
        return targets, neighbours[which]

    def peer_texts(self, peers: dict[int, str]) -> PackedTexts:
        """A switch's peer addresses indexed by neighbour switch (empty elsewhere)."""
        return PackedTexts.sparse(self.compiled.fabric.nr, peers)

    def view(self, switch: int, platform: str) -> SwitchView:
        compiled, plan = self.compiled, self.plan
        fabric = compiled.fabric
        v4, v6 = plan.v4, plan.v6
        peers_v4 = self.peer_texts(self.peer_v4[switch]) if v4 else None
        peers_v6 = self.peer_texts(self.peer_v6[switch]) if v6 else None
        layers = []
        backup = compiled.routing.backup
        for i in range(len(compiled.layers)):
            targets, hops = self.next_hops(i, switch)
            if backup is not None:
                alternates = backup[i, switch]
                covered = np.flatnonzero(alternates >= 0)
                covered_hops = alternates[covered]
            layers.append(
                LayerRoutes(
                    i + 1,
                    plan.vlans[i] if plan.vlans else None,
                    _routes(self.subnets_v4[i], peers_v4, targets, hops)
                    if peers_v4 is not None
                    else EMPTY_ROUTES,
                    _routes(self.subnets_v6[i], peers_v6, targets, hops)
                    if peers_v6 is not None
                    else EMPTY_ROUTES,
                    _routes(self.subnets_v4[i], peers_v4, covered, covered_hops)
                    if peers_v4 is not None and backup is not None
                    else EMPTY_ROUTES,
                    _routes(self.subnets_v6[i], peers_v6, covered, covered_hops)
                    if peers_v6 is not None and backup is not None
                    else EMPTY_ROUTES,
                )
            )
        if plan.encoding == "vlan":
            # Switches bridge in the VLAN encoding; layer routes would be dead weight.
            layers = [LayerRoutes(n.number, n.vlan, EMPTY_ROUTES, EMPTY_ROUTES) for n in layers]
        return SwitchView(
            name=fabric.switches[switch].name,
            platform=platform,
            encoding=plan.encoding,
            loopback_v4=f"{v4.loopbacks[switch]}/32" if v4 else None,
            loopback_v6=f"{v6.loopbacks[switch]}/128" if v6 else None,
            link_ports=self.link_ports(switch),
            host_ports=self.host_ports(switch),
            layers=layers,
            static_macs=self.static_macs(switch) if plan.encoding == "vlan" else [],
            host_vlan=HOST_VLAN,
        )

    def link_ports(self, switch: int) -> list[LinkPort]:
        compiled, plan = self.compiled, self.plan
        fabric = compiled.fabric
        ports = []
        for index in self.links_of[switch]:
            link = fabric.links[index]
            side = 0 if link.a == switch else 1
            peer = link.b if side == 0 else link.a
            vlans = (
                tuple(
                    plan.vlans[i]
                    for i, layer in enumerate(compiled.layers)
                    if layer.links[link.index]
                )
                if plan.vlans
                else ()
            )
            ports.append(
                LinkPort(
                    port=link.a_port if side == 0 else link.b_port,
                    peer=fabric.switches[peer].name,
                    peer_port=link.b_port if side == 0 else link.a_port,
                    v4=f"{plan.v4.links[link.index][side]}/31" if plan.v4 else None,
                    v6=f"{plan.v6.links[link.index][side]}/127" if plan.v6 else None,
                    vlans=vlans,
                    speed_mbps=round(link.speed_gbps * 1000),
                )
            )
        return sorted(ports, key=lambda p: _port_order(p.port))

    def host_ports(self, switch: int) -> list[HostPort]:
        fabric, plan = self.compiled.fabric, self.plan
        layers = range(plan.layer_count)
        members = fabric.hosts_of_switch[switch]
        plane = fabric.switches[switch].plane  # hosts' addresses in this switch's plane
        v4, v6 = plan.v4, plan.v6
        ports = []
        for h in members:
            host = fabric.hosts[h]
            proxied = (
                tuple(v6.host_address(plane, i, o) for o in members if o != h for i in layers)
                if v6
                else ()
            )
            ports.append(
                HostPort(
                    port=host.uplinks[plane].port,
                    host=host.name,
                    mac=plan.host_macs[h] if plan.host_macs else None,
                    gateways_v4=_gateways(v4, switch, layers),
                    gateways_v6=_gateways(v6, switch, layers),
                    addresses_v4=tuple(v4.host_address(plane, i, h) for i in layers) if v4 else (),
                    addresses_v6=tuple(v6.host_address(plane, i, h) for i in layers) if v6 else (),
                    proxied_v6=proxied,
                    speed_mbps=round(host.speed_gbps * 1000),
                )
            )
        return sorted(ports, key=lambda p: _port_order(p.port))

    def static_macs(self, switch: int) -> list[StaticMac]:
        """Per layer VLAN, every host MAC towards the layer's next hop (the chosen one: a MAC
        table has no equal-cost choice)."""
        fabric, plan = self.compiled.fabric, self.plan
        own_ports = {h: fabric.hosts[h].port for h in fabric.hosts_of_switch[switch]}
        entries = []
        for i, vlan in enumerate(plan.vlans):
            hops = self.compiled.routing.next_hop[i, switch][self.host_switch].tolist()
            for h, hop in enumerate(hops):
                port = own_ports[h] if hop < 0 else self.port_to[switch][hop]
                entries.append(StaticMac(vlan, plan.host_macs[h], port))
        return entries


def _gateways(tables: FamilyTables | None, switch: int, layers: range) -> tuple[str, ...]:
    if tables is None:
        return ()
    return tuple(f"{tables.gateways[i][switch]}/{tables.subnet_prefix_len}" for i in layers)


@cache  # the same few port names on every switch
def _port_order(port: str) -> tuple[str, tuple[int, ...]]:
    """Ethernet2 before Ethernet10: the name's letters, then its numbers as numbers."""
    stem = port.rstrip("0123456789/._-")
    numbers = tuple(int(n) for n in "".join(c if c.isdigit() else " " for c in port).split())
    return stem, numbers


def _routes(
    subnets: PackedTexts, peers: PackedTexts, targets: np.ndarray, hops: np.ndarray
) -> RouteTable:
    # A peer address is never empty: an empty entry is a switch that is not a neighbour.
    starts = peers.offsets[hops]
    if (peers.offsets[hops + 1] == starts).any():
        raise KeyError("a next hop that is not a neighbour of the switch")
    return RouteTable(subnets, targets, peers, hops)
