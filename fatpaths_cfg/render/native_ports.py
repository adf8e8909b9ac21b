"""Vendor interface names in the rendered files: a platform's `PortNaming` (its descriptor's
`port_names`, see `platforms.port_names`) applied to a switch's view and to single ports."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from fatpaths_cfg.platforms import Platform
from fatpaths_cfg.platforms.port_names import PortNaming

if TYPE_CHECKING:
    from fatpaths_cfg.render.base import SwitchView


def renamed(naming: PortNaming, view: SwitchView) -> SwitchView:
    """The view with its own ports under vendor names (peers keep inventory names: the peer may
    run another platform)."""

    def own(port: str) -> str:
        return naming.name(port) or port

    return replace(
        view,
        link_ports=[replace(p, port=own(p.port)) for p in view.link_ports],
        host_ports=[replace(p, port=own(p.port)) for p in view.host_ports],
    )


def platform_port(platform: Platform, port: str) -> str:
    """The name `platform`'s files give an inventory port."""
    naming = platform.port_names
    return (naming.name(port) or port) if naming else port
