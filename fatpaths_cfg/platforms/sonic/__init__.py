"""`sonic`: a SONiC device directory (config_db.json + frr.conf), as Batfish reads it.

The platform's package: this descriptor, `render` (config_db.json is structured data, built
there and dumped with json), `reader` (config_db.json read back for verify; frr.conf is read as
frr's) and `templates/` (only frr.conf goes through a template).
"""

from __future__ import annotations

from collections.abc import Sequence

from fatpaths_cfg.platforms.descriptor import (
    FRR_CONF,
    ClabNode,
    Deploy,
    Limits,
    Platform,
    Snapshot,
    SwitchFile,
)


def clab_ifname(ports: Sequence[str], port: str) -> str:
    """sonic-vs maps eth<i> to the i-th front-panel port in order."""
    return f"eth{ports.index(port) + 1}"


PLATFORM = Platform(
    name="sonic",
    summary="SONiC device directory: config_db.json and frr.conf",
    files=(
        FRR_CONF,
        SwitchFile(
            "{switch}/config_db.json",
            f"{__name__}.reader:read_config_db",
            builder=f"{__name__}.render:config_db_json",
            holds="addresses",
        ),
    ),
    encodings=("prefix",),
    # The low end of common SONiC ASICs' LPM tables (Trident2/Tomahawk class).
    limits=Limits(routes=65_536, vlans=4094, static_macs=0),
    snapshot=Snapshot(folder="sonic_configs"),
    clab=ClabNode(
        kind="sonic-vs",
        image="sonic",
        ifname=clab_ifname,
        default_image="docker-sonic-vs:latest",
        binds=(
            ("{switch}/config_db.json", "/etc/sonic/config_db.json"),
            ("{switch}/frr.conf", "/etc/sonic/frr/frr.conf"),
        ),
    ),
    deploy=Deploy(
        candidate="{switch}/config_db.json", driver="sonic", hint="pip install napalm-sonic"
    ),
)
