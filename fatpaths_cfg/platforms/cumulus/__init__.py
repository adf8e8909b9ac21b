"""`cumulus`: Cumulus Linux with ifupdown2 and FRR (/etc/network/interfaces, /etc/frr/frr.conf).

The platform's package: this descriptor, `render` (both files and Batfish's concatenated one),
`reader` (the interfaces file read back for verify; frr.conf is read as frr's) and `templates/`.
"""

from __future__ import annotations

import re

from fatpaths_cfg.platforms.descriptor import READERS, Limits, Platform, Snapshot, SwitchFile
from fatpaths_cfg.platforms.port_names import PortNaming

RENDER = f"{__name__}.render"
# Cumulus names front-panel ports swp<N> (and swp<N>s<M> for a split port).
PORTS = PortNaming("cumulus", re.compile(r"swp\d+(s\d+)?"), {1: "swp{0}", 2: "swp{0}s{1}"})

PLATFORM = Platform(
    name="cumulus",
    summary="Cumulus Linux: ifupdown2 interfaces and FRR static routes",
    files=(
        SwitchFile(
            "{switch}/frr.conf",
            f"{READERS}:read_frr_routes",
            builder=f"{RENDER}:frr_conf",
            holds="routes",
        ),
        SwitchFile(
            "{switch}/interfaces",
            f"{__name__}.reader:read_cumulus_interfaces",
            builder=f"{RENDER}:interfaces",
            holds="addresses",
        ),
    ),
    encodings=("prefix",),
    # Spectrum-class switches (the Cumulus hardware line): the smallest LPM table among them.
    limits=Limits(routes=65_536, vlans=4094, static_macs=0),
    # Batfish reads Cumulus as one concatenated file (`CUMULUS_CONCATENATED`).
    snapshot=Snapshot(folder="configs", builder=f"{RENDER}:snapshot"),
    port_names=PORTS,
)
