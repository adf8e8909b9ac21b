"""`linux`: a plain Linux box as a switch, one iproute2 script with addresses and routes.

The platform's package: this descriptor, `deploy` (the Linux box's NAPALM driver and the
routes it compares) and `templates/` (the script; frr's interfaces.sh renders its addresses
part as plain loops).
"""

from __future__ import annotations

from fatpaths_cfg.platforms.descriptor import (
    CLAB_ROOT,
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
    name="linux",
    summary="plain Linux switch: one iproute2 script with addresses and routes",
    files=(SwitchFile("{switch}.sh", f"{READERS}:read_iproute2", template="switch.sh.j2"),),
    encodings=("prefix",),
    # A kernel route of a higher metric is no floating route: the kernel keeps a route whose
    # port lost carrier (flagged linkdown) unless a sysctl says otherwise, and nothing here
    # withdraws it.
    floating=False,
    limits=Limits(routes=1_000_000, vlans=4094, static_macs=0),
    kernel=True,
    snapshot=Snapshot(folder=None, model="sonic"),
    clab=ClabNode(
        kind="linux",
        image="host",
        ifname=kernel_port_name,
        binds=(("{switch}.sh", f"{CLAB_ROOT}/switch.sh:ro"),),
        exec=(f"sh {CLAB_ROOT}/switch.sh",),
    ),
    netns=NetnsNode(script="{switch}.sh"),
    deploy=Deploy(
        candidate="{switch}.sh",
        driver=f"{__name__}.deploy:LinuxDriver",
        ssh=True,
        rounds=True,
        routes=f"{__name__}.deploy:script_candidate_routes",
    ),
)
