"""`cumulus` files (see the descriptor): ifupdown2 interfaces, FRR's frr.conf, and the one
concatenated file Batfish reads.

Batfish's Cumulus model takes hostname, interfaces, ports.conf and frr.conf in that order,
each part found by its first line (`# This file describes the network interfaces`,
`# ports.conf --`, `frr version`); the ports.conf part stays empty because no port is split.
"""

from __future__ import annotations

from fatpaths_cfg.render.base import FABRIC_MTU, SwitchView
from fatpaths_cfg.render.environment import environment

# The FRR release of Cumulus Linux 5.x.
FRR_VERSION = "8.4.3"
PORTS_CONF_HEADER = b"# ports.conf --\n"


def interfaces(view: SwitchView) -> str:
    template = environment().get_template("cumulus/interfaces.j2")
    return template.render(view=view, mtu=FABRIC_MTU)


def frr_conf(view: SwitchView) -> str:
    template = environment().get_template("cumulus/frr.conf.j2")
    return template.render(view=view, frr_version=FRR_VERSION)


def snapshot(switch: str, files: dict[str, bytes]) -> dict[str, bytes]:
    parts = (
        f"{switch}\n".encode(),
        files[f"{switch}/interfaces"],
        PORTS_CONF_HEADER,
        files[f"{switch}/frr.conf"],
    )
    return {f"{switch}.cfg": b"".join(parts)}
