"""The platform contract and the per-switch view every platform renders from.

A platform is data first (`fatpaths_cfg.platforms`): its descriptor declares what it supports
and which files it writes; `render_switch` turns one `SwitchView` into their contents. Views
hold plain strings and tuples so that templates do no address arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import jinja2

from fatpaths_cfg.platforms import Platform, SwitchFile, resolve
from fatpaths_cfg.render.environment import platform_environment
from fatpaths_cfg.render.native_ports import renamed
from fatpaths_cfg.render.routes import EMPTY_ROUTES, RouteTable

# The IP MTU of every fabric port. The inventory has no MTU and the frr/linux output and host
# plans keep the kernel's default of 1500, so eos and sonic set the same value explicitly: one
# MTU on every platform, whatever a NOS would default to (SONiC's port default is 9100).
FABRIC_MTU = 1500
# Administrative distance of a backup route (`routing.backup`): above every static and
# dynamic default (static 1, eBGP 20, OSPF 110, iBGP 200; Junos static 5), so it is only
# installed once the primary static route is withdrawn with its interface.
BACKUP_DISTANCE = 250


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
    # Floating static routes through each destination's loop-free alternate (`routing.backup`).
    backup_v4: RouteTable = EMPTY_ROUTES
    backup_v6: RouteTable = EMPTY_ROUTES


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
    backup_distance: int = BACKUP_DISTANCE

    @property
    def route_lines(self) -> int:
        return sum(
            len(layer.routes_v4)
            + len(layer.routes_v6)
            + len(layer.backup_v4)
            + len(layer.backup_v6)
            for layer in self.layers
        )

    @property
    def vlans(self) -> list[int]:
        return [layer.vlan for layer in self.layers if layer.vlan is not None]


def render_switch(platform: Platform, view: SwitchView) -> dict[str, str]:
    """A switch's files as the platform writes them, keyed like `platform.paths(view.name)`."""
    if platform.port_names is not None:
        view = renamed(platform.port_names, view)
    return {file.at(view.name): render_file(platform, file, view) for file in platform.files}


def render_file(platform: Platform, file: SwitchFile, view: SwitchView) -> str:
    if file.builder is not None:
        build: Callable[[SwitchView], str] = resolve(file.builder)
        return build(view)
    assert file.template is not None, f"{platform.name} {file.path}: no template or builder"
    return template(platform, file.template).render(view=view)


def template(platform: Platform, name: str) -> jinja2.Template:
    """One of the platform's templates, from its own folder."""
    return platform_environment(platform.name, platform.template_folder).get_template(
        f"{platform.name}/{name}"
    )
