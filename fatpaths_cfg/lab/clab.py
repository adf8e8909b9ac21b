"""The containerlab topology of a compiled fabric: `OUT/lab/<fabric>.clab.yml`.

Built as Python data and dumped as the block YAML PyYAML would write (`block_yaml`, fast for
the 100k-node files of large fabrics). Every node runs with `network-mode: none`, so the
only paths between nodes are the fabric's own links: a management network would be a shortcut
that hides a broken layer. Config files are bound from the compiled output by relative path
(containerlab resolves binds relative to the topology file, which sits in `OUT/lab/`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fatpaths_cfg.block_yaml import dump_block_yaml
from fatpaths_cfg.compiled import load_compiled
from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.fabric import Fabric, Switch
from fatpaths_cfg.lab.names import kernel_ifname
from fatpaths_cfg.render.hosts import plane_device

# Platform -> containerlab kind; `frr` and `linux` switches are plain Linux containers.
KINDS = {"frr": "linux", "linux": "linux", "sonic": "sonic-vs", "eos": "arista_ceos"}
CONFIG_ROOT = "/fatpaths"


@dataclass(frozen=True)
class ClabImages:
    # Built locally from Debian packages by `fatpaths lab image` (no registry needed).
    frr: str = "fatpaths/frr:bookworm"
    host: str = "fatpaths/host:bookworm"
    sonic: str = "docker-sonic-vs:latest"
    ceos: str = "ceos:4.32.0F"


def clab_ifname(switch: Switch, port: str) -> str:
    """The interface a link endpoint names inside the node, per platform's own convention."""
    if switch.platform == "eos":
        # cEOS maps eth<N> to Ethernet<N> and eth<N>_<M> to Ethernet<N>/<M>.
        return re.sub(r"^Ethernet", "eth", port).replace("/", "_")
    if switch.platform == "sonic":
        # sonic-vs maps eth<i> to the i-th front-panel port in order.
        return f"eth{switch.ports.index(port) + 1}"
    return kernel_ifname(port)


def _switch_node(switch: Switch, images: ClabImages) -> dict[str, Any]:
    configs = f"../configs/{switch.platform}"
    name = switch.name
    if switch.platform == "frr":
        return {
            "kind": "linux",
            "image": images.frr,
            "binds": [
                f"{configs}/{name}/frr.conf:/etc/frr/frr.conf",
                f"{configs}/{name}/interfaces.sh:{CONFIG_ROOT}/interfaces.sh:ro",
            ],
            "exec": [f"sh {CONFIG_ROOT}/interfaces.sh"],
        }
    if switch.platform == "linux":
        return {
            "kind": "linux",
            "image": images.host,
            "binds": [f"{configs}/{name}.sh:{CONFIG_ROOT}/switch.sh:ro"],
            "exec": [f"sh {CONFIG_ROOT}/switch.sh"],
        }
    if switch.platform == "sonic":
        return {
            "kind": "sonic-vs",
            "image": images.sonic,
            "binds": [
                f"{configs}/{name}/config_db.json:/etc/sonic/config_db.json",
                f"{configs}/{name}/frr.conf:/etc/sonic/frr/frr.conf",
            ],
        }
    return {"kind": "arista_ceos", "image": images.ceos, "startup-config": f"{configs}/{name}.cfg"}


def build_clab(fabric: Fabric, images: ClabImages, source: str = "fabric.json") -> dict[str, Any]:
    unknown = sorted({s.platform for s in fabric.switches} - set(KINDS))
    if unknown:
        raise UserErrors.single(
            source,
            "switches.platform",
            f"no containerlab kind for platform {unknown[0]!r}",
            f"containerlab output covers {', '.join(KINDS)}",
        )
    nodes: dict[str, Any] = {}
    for switch in fabric.switches:
        nodes[switch.name] = {"group": "switch", **_switch_node(switch, images)}
    for host in fabric.hosts:
        nodes[host.name] = {
            "kind": "linux",
            "group": "host",
            "image": images.host,
            "binds": [f"../hosts/{host.name}.sh:{CONFIG_ROOT}/host.sh:ro"],
            "exec": [f"sh {CONFIG_ROOT}/host.sh"],
        }
    links = [
        {
            "endpoints": [
                f"{fabric.switches[k.a].name}:{clab_ifname(fabric.switches[k.a], k.a_port)}",
                f"{fabric.switches[k.b].name}:{clab_ifname(fabric.switches[k.b], k.b_port)}",
            ]
        }
        for k in fabric.links
    ]
    # One cable per plane: a host's plane-p uplink is its eth<p> (eth0 with one plane).
    links += [
        {
            "endpoints": [
                f"{fabric.switches[u.switch].name}:"
                f"{clab_ifname(fabric.switches[u.switch], u.port)}",
                f"{h.name}:{plane_device(u.plane)}",
            ]
        }
        for h in fabric.hosts
        for u in h.uplinks
    ]
    return {
        "name": re.sub(r"[^a-zA-Z0-9-._]", "-", f"fatpaths-{fabric.name}"),
        # No management network: the fabric's links are the only way between nodes. (`network:
        # none` would name Docker's built-in network, which has no bridge to attach to.)
        "mgmt": {"skip-when-unused": True},
        "topology": {
            "defaults": {"network-mode": "none"},
            "nodes": nodes,
            "links": links,
        },
    }


def clab_path(fabric: Fabric) -> str:
    """Where the topology sits inside a compiled output directory."""
    return f"lab/{fabric.name}.clab.yml"


def clab_yaml(fabric: Fabric, images: ClabImages, source: str = "fabric.json") -> str:
    header = (
        f"# containerlab topology of fabric {fabric.name}, written by fatpaths.\n"
        f"# Deploy from this directory: containerlab deploy -t {fabric.name}.clab.yml\n"
    )
    body = dump_block_yaml(build_clab(fabric, images, source))
    return header + body


def write_clab(out: Path, images: ClabImages) -> Path:
    """Rewrite the topology with other images (compile writes one with the defaults)."""
    loaded = load_compiled(out)
    path = out / clab_path(loaded.fabric)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(clab_yaml(loaded.fabric, images, str(out / "fabric.json")), encoding="utf-8")
    return path
