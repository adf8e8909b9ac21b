"""`junos`: Juniper Junos (QFX-style switching) as `load set` commands, one file per switch.

The platform's package: this descriptor, `render`, `reader` (the set commands read back for
verify) and `templates/`.
"""

from __future__ import annotations

import re

from fatpaths_cfg.platforms.descriptor import Limits, Platform, Snapshot, SwitchFile
from fatpaths_cfg.platforms.port_names import PortNaming

# Junos names front-panel ports et-<fpc>/<pic>/<port> (and :<channel> for a split port).
PORTS = PortNaming(
    "junos",
    re.compile(r"(et|xe|ge|mge)-\d+/\d+/\d+(:\d+)?"),
    {1: "et-0/0/{0}", 2: "et-0/0/{0}:{1}"},
)

PLATFORM = Platform(
    name="junos",
    summary="Juniper Junos `load set` commands",
    files=(
        SwitchFile(
            "{switch}.set",
            f"{__name__}.reader:read_junos_set",
            builder=f"{__name__}.render:set_commands",
        ),
    ),
    encodings=("prefix",),
    # A QFX5120-class switch's LPM table in its default profile.
    limits=Limits(routes=131_072, vlans=4094, static_macs=0),
    snapshot=Snapshot(folder="configs"),
    port_names=PORTS,
)
