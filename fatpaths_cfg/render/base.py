"""The platform contract and the per-switch view every platform renders from.

A platform is data first: it declares what it supports (encodings, route and VLAN limits) and
where its files go; `render` turns one `SwitchView` into file contents. Views hold plain strings
and tuples so that templates do no address arithmetic.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

from fatpaths_cfg.render.environment import environment
from fatpaths_cfg.render.routes import RouteTable

# The IP MTU of every fabric port. The inventory has no MTU and the frr/linux output and host
# plans keep the kernel's default of 1500, so eos and sonic set the same value explicitly: one
# MTU on every platform, whatever a NOS would default to (SONiC's port default is 9100).
FABRIC_MTU = 1500


@dataclass(frozen=True)
class LinkPort:
    port: str
    peer: str  # neighbour switch name
    peer_port: str
    v4: str | None  # own point-to-point address with prefix length, "172.16.0.0/31"
    v6: str | None
    vlans: tuple[int, ...]  # VLAN encoding: the layers' VLANs that use this link
    speed_mbps: int


@dataclass(frozen=True)
class HostPort:
    port: str
    host: str
    mac: str | None  # VLAN encoding only
    gateways_v4: tuple[str, ...]  # per layer, "10.0.0.1/29" (prefix encoding)
    gateways_v6: tuple[str, ...]
    addresses_v4: tuple[str, ...]  # the host's per-layer addresses, no prefix length
    addresses_v6: tuple[str, ...]
    # IPv6 neighbours on other ports of the same switch, answered by proxy NDP.
    proxied_v6: tuple[str, ...]
    speed_mbps: int


@dataclass(frozen=True)
class LayerRoutes:
    number: int
    vlan: int | None
    routes_v4: RouteTable
    routes_v6: RouteTable


@dataclass(frozen=True)
class StaticMac:
    vlan: int
    mac: str
    port: str


@dataclass(frozen=True)
class SwitchView:
    name: str
    platform: str
    encoding: str
    loopback_v4: str | None  # with prefix length
    loopback_v6: str | None
    link_ports: list[LinkPort]
    host_ports: list[HostPort]
    layers: list[LayerRoutes]
    static_macs: list[StaticMac]
    host_vlan: int  # the access VLAN that carries host gateways on eos/sonic

    @property
    def route_lines(self) -> int:
        return sum(len(layer.routes_v4) + len(layer.routes_v6) for layer in self.layers)

    @property
    def vlans(self) -> list[int]:
        return [layer.vlan for layer in self.layers if layer.vlan is not None]


class Platform(ABC):
    """One target OS: capabilities, file layout, and a render method."""

    name: ClassVar[str]
    encodings: ClassVar[tuple[str, ...]]
    max_routes: ClassVar[int]  # static route entries (prefix, next hop) per switch
    max_vlans: ClassVar[int]
    max_static_macs: ClassVar[int]
    # Batfish parses this platform's own files (cumulus, junos, nxos); otherwise the snapshot
    # models the switch as eos or sonic (see render/batfish.py).
    batfish_reads: ClassVar[bool] = False

    @abstractmethod
    def files(self, switch: str) -> tuple[str, ...]:
        """Paths of a switch's files, relative to `configs/<platform>/`."""

    @abstractmethod
    def render(self, view: SwitchView) -> dict[str, str]:
        """File contents keyed like `files(view.name)`."""

    def port_name(self, port: str) -> str:
        """The name the platform's config gives an inventory port."""
        return port

    def port_problems(self, ports: tuple[str, ...]) -> list[str]:
        """Inventory ports the platform cannot name (none unless it renames ports)."""
        return []

    def snapshot(self, switch: str, files: dict[str, bytes]) -> dict[str, bytes]:
        """The switch's files as Batfish reads them, relative to `batfish/configs/`."""
        return files

    def template(self, view: SwitchView, name: str) -> str:
        return environment().get_template(f"{self.name}/{name}").render(view=view)
