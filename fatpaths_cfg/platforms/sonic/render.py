"""`sonic`: a SONiC device directory (config_db.json + frr.conf), as Batfish reads it.

config_db.json is a patch for `config load`, not a whole CONFIG_DB: it holds what the fabric
decides (hostname, routing-config mode, port state and MTU, addresses, the host VLAN) and leaves
what only the box knows (hwsku, platform, MAC, port lanes and aliases) to the CONFIG_DB it is
merged into. `config reload` of this file alone would wipe those and leave no ports.

frr.conf is an integrated FRR config for the `split-unified` routing-config mode: in that mode
docker-fpm-frr's start script keeps /etc/sonic/frr/frr.conf as found (adding only its fpm lines
when absent) and boots FRR from it with `vtysh -b`; `unified` (the default) regenerates the file
from CONFIG_DB templates and `split` deletes it in favour of per-daemon files.

config_db.json is structured data, so it is built here and dumped with json; only frr.conf
goes through a template.
"""

from __future__ import annotations

from typing import Any

from fatpaths_cfg.render.base import FABRIC_MTU, SwitchView
from fatpaths_cfg.support.output import dumps_json

ROUTING_CONFIG_MODE = "split-unified"


def config_db(view: SwitchView) -> dict[str, Any]:
    ports: dict[str, Any] = {}
    interfaces: dict[str, Any] = {}
    for link in view.link_ports:
        ports[link.port] = _port(link.speed_mbps, f"{link.peer} {link.peer_port}")
        interfaces[link.port] = {}
        for address in (link.v4, link.v6):
            if address:
                interfaces[f"{link.port}|{address}"] = {}
    vlan = f"Vlan{view.host_vlan}"
    members: dict[str, Any] = {}
    for host in view.host_ports:
        ports[host.port] = _port(host.speed_mbps, f"host {host.host}")
        members[f"{vlan}|{host.port}"] = {"tagging_mode": "untagged"}
    loopback: dict[str, Any] = {"Loopback0": {}} | {
        f"Loopback0|{a}": {} for a in (view.loopback_v4, view.loopback_v6) if a
    }
    data: dict[str, Any] = {
        "DEVICE_METADATA": {
            "localhost": {
                "hostname": view.name,
                "type": "LeafRouter",
                # Routes come from our frr.conf, not from bgpcfgd templates.
                "docker_routing_config_mode": ROUTING_CONFIG_MODE,
            }
        },
        "PORT": dict(sorted(ports.items())),
        "INTERFACE": interfaces,
        "LOOPBACK_INTERFACE": loopback,
    }
    if view.host_ports:
        first = view.host_ports[0]
        # `members` duplicates VLAN_MEMBER on purpose: older SONiC images and Batfish's SONiC
        # model read membership only from it. No `mtu` on the VLAN: Batfish rejects the key
        # (and drops the VLAN), and SONiC derives the VLAN MTU from its members.
        data["VLAN"] = {
            vlan: {
                "vlanid": str(view.host_vlan),
                "members": sorted(m.split("|")[1] for m in members),
            }
        }
        data["VLAN_MEMBER"] = members
        data["VLAN_INTERFACE"] = {vlan: {}} | {
            f"{vlan}|{g}": {} for g in (*first.gateways_v4, *first.gateways_v6)
        }
    return data


def _port(speed_mbps: int, description: str) -> dict[str, str]:
    # No `alias` or `lanes`: they name the hardware, and `config load` keeps the box's own.
    return {
        "admin_status": "up",
        "description": description,
        "mtu": str(FABRIC_MTU),
        "speed": str(speed_mbps),
    }


def config_db_json(view: SwitchView) -> str:
    return dumps_json(config_db(view))
