"""A Batfish snapshot of the rendered fabric: device configs, host files, layer-1 wiring.

Batfish reads vendor configs (`configs/`) and SONiC device directories (`sonic_configs/<device>/`
with config_db.json and frr.conf), not iproute2 scripts: each platform's descriptor says where
its files go, or which platform it is modelled as (frr and linux switches appear as SONiC
devices: same addresses, same static routes, host gateways on a VLAN interface).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fatpaths_cfg.addressing import AddressPlan
from fatpaths_cfg.fabric import Fabric, Host
from fatpaths_cfg.platforms import PLATFORMS
from fatpaths_cfg.render.hosts import UPLINK

ROOT = "batfish"


def snapshot_format(platform: str) -> str:
    """The platform whose files Batfish reads for a switch of `platform`: its own if Batfish
    reads them, else those of the platform it is modelled as."""
    snapshot = PLATFORMS[platform].snapshot
    if snapshot.folder is not None:
        return platform
    assert snapshot.model is not None, f"platform {platform}: no Batfish folder and no model"
    return snapshot.model


def device_path(snapshot: str, relative: str) -> str:
    return f"{ROOT}/{PLATFORMS[snapshot].snapshot.folder}/{relative}"


def host_file(fabric: Fabric, plan: AddressPlan, host: Host) -> dict[str, Any]:
    """Batfish's host format holds one prefix per interface: the layer-1 address (IPv4 when
    the plan has it); the other layers' addresses are not modelled."""
    tables = plan.v4 or plan.v6
    assert tables is not None  # every family has v4 or v6
    interface: dict[str, Any] = {
        "name": UPLINK,
        "prefix": f"{tables.hosts[0][host.index]}/{tables.host_prefix_len}",
    }
    if plan.encoding == "prefix":
        interface["gateway"] = tables.gateways[0][host.switch]
    return {
        "hostname": host.name,
        "hostInterfaces": {UPLINK: interface},
    }


def _same_port(_switch: int, port: str) -> str:
    return port


def layer1_topology(
    fabric: Fabric, switches: set[int], port_name: Callable[[int, str], str] = _same_port
) -> dict[str, Any]:
    """Both directions of every cable between selected switches and their hosts, ports named
    as each switch's snapshot config names them (`port_name(switch, port)`)."""
    edges: list[dict[str, Any]] = []

    def cable(a: str, a_port: str, b: str, b_port: str) -> None:
        one = {"hostname": a, "interfaceName": a_port}
        other = {"hostname": b, "interfaceName": b_port}
        edges.append({"node1": one, "node2": other})
        edges.append({"node1": other, "node2": one})

    names = [s.name for s in fabric.switches]
    for link in fabric.links:
        if link.a in switches and link.b in switches:
            a_port, b_port = port_name(link.a, link.a_port), port_name(link.b, link.b_port)
            cable(names[link.a], a_port, names[link.b], b_port)
    for host in fabric.hosts:
        if host.switch in switches:
            cable(host.name, UPLINK, names[host.switch], port_name(host.switch, host.port))
    return {"edges": edges}
