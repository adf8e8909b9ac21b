"""`nxos`: Cisco NX-OS running-config (Nexus 9000), one file per switch.

The platform's package: this descriptor, `render` (the release the header claims),
`reader` (the running-config read back for verify) and `templates/`.
"""

from __future__ import annotations

import re

from fatpaths_cfg.platforms.descriptor import Limits, Platform, Snapshot, SwitchFile
from fatpaths_cfg.platforms.port_names import PortNaming

# NX-OS names front-panel ports Ethernet<slot>/<port> (and /<breakout> for a split port).
PORTS = PortNaming(
    "nxos",
    re.compile(r"Ethernet\d+/\d+(/\d+)?"),
    {1: "Ethernet1/{0}", 2: "Ethernet{0}/{1}", 3: "Ethernet{0}/{1}/{2}"},
)

PLATFORM = Platform(
    name="nxos",
    summary="Cisco NX-OS running-config",
    files=(
        SwitchFile(
            "{switch}.cfg",
            f"{__name__}.reader:read_nxos",
            builder=f"{__name__}.render:running_config",
        ),
    ),
    encodings=("prefix",),
    # A Nexus 9300-EX/FX-class switch's IPv4 LPM table in the default routing template;
    # NX-OS reserves VLANs 3968-4094.
    limits=Limits(routes=131_072, vlans=3967, static_macs=0),
    snapshot=Snapshot(folder="configs"),
    port_names=PORTS,
)
