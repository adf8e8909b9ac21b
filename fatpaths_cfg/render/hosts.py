"""Host plans: per host an iproute2 script that puts one address per layer on the uplink.

Prefix encoding: all addresses on eth0, the fabric pools via the switch, and MPTCP endpoints so
that one connection opens a subflow per layer address. VLAN encoding: a VLAN sub-interface per
layer and static neighbour entries, because ARP broadcasts must never flood a layer that is
not a tree.

MPTCP per family: the kernel's path manager keeps one endpoint list and one pair of limits per
host, not per address family, and announces every `signal` endpoint on every connection. A
receiver skips announced addresses of the other family only when its socket cannot reach them:
a v4 socket skips v6 addresses, but a dual-stack v6 socket takes v4 ones. So IPv6 endpoints come
first and the limits equal one family's endpoint count: a v6 connection fills its budget with
v6 addresses before any v4 one is offered, and a v4 connection skips the v6 announcements
(they do not count) and takes its v4 ones.

Parallel dataplanes (P-Net): one uplink per plane (eth0 for plane 0, eth1, ...), one address
per plane and layer, and each plane's address block routed through that plane's uplink, so the
destination address picks plane and layer and a packet never changes plane. Low-latency traffic
takes, per destination, the plane with the fewest switch hops: `<host>.low-latency.csv` names
that plane and the destination address to connect to (`LowLatencyTable`).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from fatpaths_cfg.addressing import AddressPlan, FamilyTables
from fatpaths_cfg.fabric import Fabric, Host
from fatpaths_cfg.render.environment import environment

UPLINK = "eth0"
LOW_LATENCY_HEADER = ["destination", "plane", "hops", "address", "source"]
# The in-kernel MPTCP path manager caps both limits at 8.
MPTCP_MAX_LIMIT = 8


@dataclass(frozen=True)
class HostLayer:
    number: int
    vlan: int | None
    v4: str | None  # "10.0.0.2/29"
    v6: str | None
    gateway_v4: str | None
    gateway_v6: str | None
    # VLAN encoding: (address, MAC) of every other host in this layer.
    neighbours_v4: list[tuple[str, str]]
    neighbours_v6: list[tuple[str, str]]

    @property
    def address_v4(self) -> str | None:
        return self.v4.split("/")[0] if self.v4 else None

    @property
    def address_v6(self) -> str | None:
        return self.v6.split("/")[0] if self.v6 else None


@dataclass(frozen=True)
class HostUplink:
    """A host's interface into one plane (parallel dataplanes): eth<plane>, its layer
    addresses in that plane, and the plane's address block it routes there."""

    plane: int
    device: str
    switch: str
    port: str
    layers: list[HostLayer]
    pool_v4: str | None
    pool_v6: str | None


@dataclass(frozen=True)
class MptcpEndpoint:
    address: str
    device: str

    @property
    def family(self) -> str:
        return "v6" if ":" in self.address else "v4"


@dataclass(frozen=True)
class HostView:
    name: str
    switch: str
    port: str
    uplink: str
    encoding: str
    mac: str | None
    layers: list[HostLayer]
    pools_v4: list[str]
    pools_v6: list[str]
    # IPv6 first; see the module docstring.
    mptcp_endpoints: list[MptcpEndpoint]
    mptcp_limit: int
    pacing_mbit: int | None = None  # tc rate of the uplink's shaping, when asked for
    # One per plane, plane 0 first (its layers are `layers`); one entry with one plane.
    uplinks: tuple[HostUplink, ...] = ()

    @property
    def mptcp_dual_stack(self) -> bool:
        return len({e.family for e in self.mptcp_endpoints}) == 2

    @property
    def mptcp_subflows(self) -> int:
        return mptcp_subflow_limit(self.mptcp_limit)


def _address(tables: FamilyTables | None, layer: int, host: int, plane: int = 0) -> str | None:
    if tables is None:
        return None
    return f"{tables.host_address(plane, layer, host)}/{tables.host_prefix_len}"


def _gateway(tables: FamilyTables | None, layer: int, switch: int, plan: AddressPlan) -> str | None:
    if tables is None or plan.encoding != "prefix":
        return None
    return tables.gateways[layer][switch]


def _neighbours(
    tables: FamilyTables | None, layer: int, host: int, plan: AddressPlan
) -> list[tuple[str, str]]:
    if tables is None or plan.encoding != "vlan":
        return []
    row = tables.hosts[layer]
    return [(row[o], plan.host_macs[o]) for o in range(len(row)) if o != host]


def layer_device(uplink: str, layer: HostLayer) -> str:
    """The device that carries a layer's addresses: the uplink, or its VLAN sub-interface."""
    return uplink if layer.vlan is None else f"{uplink}.{layer.vlan}"


def mptcp_endpoints(uplink: str, layers: list[HostLayer]) -> list[MptcpEndpoint]:
    """The further layers' addresses to announce, every IPv6 one before any IPv4 one."""
    further = layers[1:]
    v6 = [MptcpEndpoint(a, layer_device(uplink, la)) for la in further if (a := la.address_v6)]
    v4 = [MptcpEndpoint(a, layer_device(uplink, la)) for la in further if (a := la.address_v4)]
    return v6 + v4


def mptcp_limit(endpoints: list[MptcpEndpoint]) -> int:
    """Subflows and accepted announcements one connection needs: one family's endpoints (a
    connection only ever uses its own family's), within the kernel's cap."""
    v6 = sum(e.family == "v6" for e in endpoints)
    return min(max(v6, len(endpoints) - v6), MPTCP_MAX_LIMIT)


def mptcp_subflow_limit(accepted: int) -> int:
    """Room for the connection's own subflows and as many joins the passive end opens in vain.

    Both ends announce (every host is a client and a server), and the passive end's path manager
    answers the active end's announcements with joins of its own. They go to the client's
    ephemeral port, where no listener answers, but while they are pending they hold subflow
    slots; with a limit of `accepted` the active end's joins could then be refused, and the
    kernel never retries a refused join.
    """
    return min(2 * accepted, MPTCP_MAX_LIMIT)


def plane_device(plane: int) -> str:
    """The host interface into a plane: eth0 for plane 0 (the single-plane uplink), eth1, ..."""
    return f"eth{plane}"


def _plane_layers(plan: AddressPlan, host: Host, plane: int) -> list[HostLayer]:
    h, s = host.index, host.uplinks[plane].switch
    if plan.encoding == "vlan":
        return [
            HostLayer(
                number=i + 1,
                vlan=plan.vlans[i] if plan.vlans else None,
                v4=_address(plan.v4, i, h, plane),
                v6=_address(plan.v6, i, h, plane),
                gateway_v4=_gateway(plan.v4, i, s, plan),
                gateway_v6=_gateway(plan.v6, i, s, plan),
                neighbours_v4=_neighbours(plan.v4, i, h, plan),
                neighbours_v6=_neighbours(plan.v6, i, h, plan),
            )
            for i in range(plan.layer_count)
        ]
    # The prefix encoding, for 10k hosts x layers: the same fields from whole columns.
    v4 = _layer_column(plan.v4, plane, h, s, plan.layer_count)
    v6 = _layer_column(plan.v6, plane, h, s, plan.layer_count)
    return [
        HostLayer(i + 1, None, a4, a6, g4, g6, [], [])
        for i, ((a4, g4), (a6, g6)) in enumerate(zip(v4, v6, strict=True))
    ]


def _layer_column(
    tables: FamilyTables | None, plane: int, host: int, switch: int, layer_count: int
) -> list[tuple[str | None, str | None]]:
    """Per layer, (host address with its prefix length, its gateway) in the prefix encoding."""
    if tables is None:
        return [(None, None)] * layer_count
    length = tables.host_prefix_len
    return [
        (f"{column[host]}/{length}", gateways[switch])
        for column, gateways in zip(tables.plane_hosts[plane], tables.gateways, strict=True)
    ]


def _host_uplinks(
    fabric: Fabric, plan: AddressPlan, host: Host, plane0: list[HostLayer]
) -> tuple[HostUplink, ...]:
    return tuple(
        HostUplink(
            plane=u.plane,
            device=plane_device(u.plane),
            switch=fabric.switches[u.switch].name,
            port=u.port,
            layers=plane0 if u.plane == 0 else _plane_layers(plan, host, u.plane),
            pool_v4=plan.v4.plane_pools[u.plane] if plan.v4 else None,
            pool_v6=plan.v6.plane_pools[u.plane] if plan.v6 else None,
        )
        for u in host.uplinks
    )


def plane_mptcp_endpoints(uplinks: tuple[HostUplink, ...]) -> list[MptcpEndpoint]:
    """Every (plane, layer) address but the first, each on its plane's device: a connection
    gets a subflow per layer of every plane (K x N), IPv6 ones first."""
    further = [(u.device, la) for u in uplinks for la in u.layers][1:]
    v6 = [MptcpEndpoint(a, dev) for dev, la in further if (a := la.address_v6)]
    v4 = [MptcpEndpoint(a, dev) for dev, la in further if (a := la.address_v4)]
    return v6 + v4


def host_view(fabric: Fabric, plan: AddressPlan, host: Host) -> HostView:
    h, s = host.index, host.switch
    layers = _plane_layers(plan, host, 0)
    uplinks = _host_uplinks(fabric, plan, host, layers)
    endpoints = (
        mptcp_endpoints(UPLINK, layers) if len(uplinks) == 1 else plane_mptcp_endpoints(uplinks)
    )
    return HostView(
        name=host.name,
        switch=fabric.switches[s].name,
        port=host.port,
        uplink=UPLINK,
        encoding=plan.encoding,
        mac=plan.host_macs[h] if plan.host_macs else None,
        layers=layers,
        pools_v4=plan.v4.pools if plan.v4 else [],
        pools_v6=plan.v6.pools if plan.v6 else [],
        mptcp_endpoints=endpoints,
        mptcp_limit=mptcp_limit(endpoints),
        pacing_mbit=None if host.pacing_gbps is None else round(host.pacing_gbps * 1000),
        uplinks=uplinks,
    )


class LowLatencyTable:
    """Per host and destination, the plane with the fewest switch hops between the two hosts'
    switches; the hop counts are worked out once for the whole fabric."""

    def __init__(self, fabric: Fabric, plan: AddressPlan) -> None:
        self.fabric = fabric
        self.plan = plan

    @cached_property
    def switch_hops(self) -> np.ndarray:
        """Hop counts over every link: links never cross planes, so within a plane these are
        the plane's shortest paths (its full, minimal layer 1)."""
        import scipy.sparse as sp  # parallel planes only: one-plane renders skip its import
        from scipy.sparse.csgraph import shortest_path

        nr = self.fabric.nr
        edges = self.fabric.edges
        graph = sp.coo_matrix(
            (np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(nr, nr)
        ).tocsr()
        return shortest_path(graph, directed=False, unweighted=True)

    def plane(self, host: Host, destination: Host) -> tuple[int, int]:
        """(plane, switch hops) with the fewest hops. Ties are common (a plane of the same
        size has the same diameter), so they rotate by the host pair instead of all landing
        on plane 0; the sum keeps both directions of a pair on one plane."""
        counts = [
            int(self.switch_hops[mine.switch, theirs.switch])
            for mine, theirs in zip(host.uplinks, destination.uplinks, strict=True)
        ]
        fewest = min(counts)
        tied = [plane for plane, hops in enumerate(counts) if hops == fewest]
        return tied[(host.index + destination.index) % len(tied)], fewest

    def csv(self, host: Host) -> str:
        """Per destination and family (IPv6 first): the plane, its hop count, the destination's
        layer-1 address in that plane, and this host's own, which the plane's route picks as
        source."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(LOW_LATENCY_HEADER)
        families = [t for t in (self.plan.v6, self.plan.v4) if t is not None]
        for destination in self.fabric.hosts:
            if destination.index == host.index:
                continue
            plane, hops = self.plane(host, destination)
            for tables in families:
                mine = tables.host_address(plane, 0, host.index)
                theirs = tables.host_address(plane, 0, destination.index)
                writer.writerow([destination.name, plane, hops, theirs, mine])
        return buffer.getvalue()


def render_host(view: HostView) -> str:
    if view.encoding == "prefix" and len(view.uplinks) <= 1:
        return _single_plane_prefix_plan(view)
    return environment().get_template("hosts/host.sh.j2").render(host=view)


def _single_plane_prefix_plan(host: HostView) -> str:
    """hosts/host.sh.j2's prefix branch as plain string building: the template costs more than
    everything else in a host plan, and this branch is the one every large fabric takes. The
    goldens hold the two to the same bytes."""
    dev = host.uplink
    lines = [
        "#!/bin/sh",
        f"# {host.name} on {host.switch} {host.port}: one address per FatPaths layer,",
        "# generated by fatpaths; do not edit. Idempotent: safe to run again.",
        "set -e",
        f"ip link set dev {dev} up",
    ]
    for layer in host.layers:
        if layer.v4:
            lines.append(f"ip addr replace {layer.v4} dev {dev}")
        if layer.v6:
            lines.append(f"ip -6 addr replace {layer.v6} dev {dev} nodad")
    lines.append(
        "# The destination address picks the layer, so every layer leaves through the same gateway."
    )
    first = host.layers[0]
    via4 = f" via {first.gateway_v4} dev {dev} src {first.address_v4}"
    lines += [f"ip route replace {pool}{via4}" for pool in host.pools_v4]
    via6 = f" via {first.gateway_v6} dev {dev}"
    lines += [f"ip -6 route replace {pool}{via6}" for pool in host.pools_v6]
    if host.pacing_mbit:
        rate = f"{host.pacing_mbit}mbit"
        lines += [
            f"# Shaping to {host.pacing_mbit} Mb/s: adaptive and flowlet re-routing settle fast"
            " only with",
            "# flows well below the link rate. fq paces every flow to it; kernels without fq get"
            " the whole",
            "# uplink shaped (tbf), which is the same where a host sends one flow at a time.",
            f"if ! tc qdisc replace dev {dev} root fq maxrate {rate} 2>/dev/null; then",
            f"    tc qdisc replace dev {dev} root tbf rate {rate} burst 256kbit latency 50ms",
            "fi",
        ]
    if host.mptcp_limit > 0:
        lines += [
            "# MPTCP: the destination address picks the layer, so this host announces its"
            " further layer",
            "# addresses (`signal`) and a peer opens one subflow to each: one connection, one"
            " subflow per layer.",
        ]
        if host.mptcp_dual_stack:
            lines += [
                "# Dual-stack: IPv6 endpoints first and limits of one family, so a v6 connection"
                " fills its",
                "# subflows with v6 addresses before any v4 one is announced, and a v4"
                " connection skips the v6 ones.",
            ]
        lines += [
            "# Subflow room for twice the announcements: on an accepted connection the kernel also"
            " joins",
            "# the client's announced addresses, in vain (no listener there), holding slots while"
            " pending.",
            f"ip mptcp limits set subflow {host.mptcp_subflows}"
            f" add_addr_accepted {host.mptcp_limit}",
            "ip mptcp endpoint flush",
            "# The kernel announces one address at a time and waits for its echo; a lost echo"
            " would",
            "# hold the other layers back for its default 120 s, so announcements are retried"
            " after 1 s.",
            "sysctl -qw net.mptcp.add_addr_timeout=1",
        ]
        lines += [
            f"ip mptcp endpoint add {e.address} dev {e.device} signal" for e in host.mptcp_endpoints
        ]
    lines.append("")
    return "\n".join(lines)


def addresses_csv(fabric: Fabric, plan: AddressPlan) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["host", "plane", "layer", "address"])
    writer.writerows(plan.address_rows(fabric))
    return buffer.getvalue()
