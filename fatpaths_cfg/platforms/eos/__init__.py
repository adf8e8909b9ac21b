"""`eos`: Arista EOS running-config, for the prefix and the VLAN encoding.

The platform's package: this descriptor, `render` (the running-config with its device header),
`reader` (the running-config read back for verify) and `templates/`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from fatpaths_cfg.platforms.descriptor import (
    ClabNode,
    Deploy,
    Limits,
    Platform,
    Snapshot,
    SwitchFile,
)

RENDER = f"{__name__}.render"
READER = f"{__name__}.reader"


def clab_ifname(ports: Sequence[str], port: str) -> str:
    """cEOS maps eth<N> to Ethernet<N> and eth<N>_<M> to Ethernet<N>/<M>."""
    return re.sub(r"^Ethernet", "eth", port).replace("/", "_")


PLATFORM = Platform(
    name="eos",
    summary="Arista EOS running-config",
    # The template needs the device model beside the view (`render` holds it).
    files=(SwitchFile("{switch}.cfg", f"{READER}:read_eos", builder=f"{RENDER}:running_config"),),
    encodings=("prefix", "vlan"),
    # Conservative figures for a Trident3-class 7050X3: LPM routes and MAC table entries.
    limits=Limits(routes=131_072, vlans=4094, static_macs=73_728),
    snapshot=Snapshot(folder="configs"),
    clab=ClabNode(
        kind="arista_ceos",
        image="ceos",
        ifname=clab_ifname,
        default_image="ceos:4.32.0F",
        startup_config="{switch}.cfg",
    ),
    deploy=Deploy(candidate="{switch}.cfg", driver="eos"),
)
