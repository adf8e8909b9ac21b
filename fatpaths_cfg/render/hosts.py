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
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import dataclass

from fatpaths_cfg.addressing import AddressPlan, FamilyTables
from fatpaths_cfg.fabric import Fabric, Host
from fatpaths_cfg.render.environment import environment

UPLINK = "eth0"
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

    @property
    def mptcp_dual_stack(self) -> bool:
        return len({e.family for e in self.mptcp_endpoints}) == 2


def _address(tables: FamilyTables | None, layer: int, host: int) -> str | None:
    if tables is None:
        return None
    return f"{tables.hosts[layer][host]}/{tables.host_prefix_len}"


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
    v6 = [MptcpEndpoint(la.address_v6, layer_device(uplink, la)) for la in further if la.address_v6]
    v4 = [MptcpEndpoint(la.address_v4, layer_device(uplink, la)) for la in further if la.address_v4]
    return v6 + v4


def mptcp_limit(endpoints: list[MptcpEndpoint]) -> int:
    """Subflows and accepted announcements one connection needs: one family's endpoints (a
    connection only ever uses its own family's), within the kernel's cap."""
    per_family = Counter(e.family for e in endpoints)
    return min(max(per_family.values(), default=0), MPTCP_MAX_LIMIT)


def host_view(fabric: Fabric, plan: AddressPlan, host: Host) -> HostView:
    h, s = host.index, host.switch
    layers = [
        HostLayer(
            number=i + 1,
            vlan=plan.vlans[i] if plan.vlans else None,
            v4=_address(plan.v4, i, h),
            v6=_address(plan.v6, i, h),
            gateway_v4=_gateway(plan.v4, i, s, plan),
            gateway_v6=_gateway(plan.v6, i, s, plan),
            neighbours_v4=_neighbours(plan.v4, i, h, plan),
            neighbours_v6=_neighbours(plan.v6, i, h, plan),
        )
        for i in range(plan.layer_count)
    ]
    endpoints = mptcp_endpoints(UPLINK, layers)
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
    )


def render_host(view: HostView) -> str:
    return environment().get_template("hosts/host.sh.j2").render(host=view)


def addresses_csv(fabric: Fabric, plan: AddressPlan) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["host", "plane", "layer", "address"])
    writer.writerows(plan.address_rows(fabric))
    return buffer.getvalue()
