"""`frr`: a Linux switch running FRR (what the lab runs): iproute2 interfaces, FRR routes.

The platform's package: this descriptor, `render` (interfaces.sh as plain loops), `deploy`
(the FRR box's NAPALM driver and the routes it compares) and `templates/` (frr.conf and the
route lines sonic's and cumulus' frr.conf include).
"""

from __future__ import annotations

from fatpaths_cfg.platforms.descriptor import (
    CLAB_ROOT,
    FRR_CONF,
    READERS,
    ClabNode,
    Deploy,
    Limits,
    NetnsNode,
    Platform,
    Snapshot,
    SwitchFile,
    kernel_port_name,
)

PLATFORM = Platform(
    name="frr",
    summary="Linux switch with FRR: iproute2 interfaces, FRR static routes",
    files=(
        FRR_CONF,
        SwitchFile(
            "{switch}/interfaces.sh",
            f"{READERS}:read_iproute2_addresses",
            builder=f"{__name__}.render:frr_interfaces_sh",
            holds="addresses",
        ),
    ),
    encodings=("prefix",),
    # The kernel FIB has no fixed size; this bounds what zebra installs in reasonable time.
    limits=Limits(routes=1_000_000, vlans=4094, static_macs=0),
    kernel=True,
    # Batfish reads no iproute2 scripts: the switch is a SONiC device with the same addresses,
    # and its frr.conf is already valid SONiC FRR config.
    snapshot=Snapshot(folder=None, model="sonic", shared=("{switch}/frr.conf",)),
    clab=ClabNode(
        kind="linux",
        image="frr",
        ifname=kernel_port_name,
        binds=(
            ("{switch}/frr.conf", "/etc/frr/frr.conf"),
            ("{switch}/interfaces.sh", f"{CLAB_ROOT}/interfaces.sh:ro"),
        ),
        exec=(f"sh {CLAB_ROOT}/interfaces.sh",),
    ),
    netns=NetnsNode(script="{switch}/interfaces.sh", frr_conf="{switch}/frr.conf"),
    deploy=Deploy(
        candidate="{switch}",
        driver=f"{__name__}.deploy:FrrDriver",
        ssh=True,
        rounds=True,
        routes=f"{__name__}.deploy:frr_candidate_routes",
    ),
)
