"""The containerlab topology of a compiled fabric: `OUT/lab/<fabric>.clab.yml`.

Built as Python data and dumped as the block YAML PyYAML would write (`block_yaml`, fast for
the 100k-node files of large fabrics). Every node runs with `network-mode: none`, so the
only paths between nodes are the fabric's own links: a management network would be a shortcut
that hides a broken layer. Config files are bound from the compiled output by relative path
(containerlab resolves binds relative to the topology file, which sits in `OUT/lab/`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from fatpaths_cfg.compiled import load_compiled
from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.fabric import Fabric, Switch
from fatpaths_cfg.platforms import PLATFORMS
from fatpaths_cfg.platforms.descriptor import CLAB_ROOT, ClabNode
from fatpaths_cfg.render.hosts import plane_device
from fatpaths_cfg.support.block_yaml import dump_block_yaml

# Built locally from Debian packages by `fatpaths lab image` (no registry needed): the frr
# switch image, and the host image that also runs `linux` switches.
BUILT_IMAGES = {"frr": "fatpaths/frr:bookworm", "host": "fatpaths/host:bookworm"}


class ClabImages:
    """Image tag per image name (`ClabNode.image`): `frr` and `host` as `fatpaths lab image`
    builds them, each platform's own as its descriptor's `default_image`; keywords override
    (`ClabImages(sonic="docker-sonic-vs:202405")`)."""

    def __init__(self, **tags: str) -> None:
        self.tags = {**BUILT_IMAGES, **tags}

    @property
    def frr(self) -> str:
        return self.tags["frr"]

    @property
    def host(self) -> str:
        return self.tags["host"]

    def tag(self, name: str) -> str:
        if name in self.tags:
            return self.tags[name]
        for platform in PLATFORMS.values():
            node = platform.clab
            if node is not None and node.image == name and node.default_image is not None:
                return node.default_image
        raise LookupError(f"no containerlab image named {name!r}")


def clab_ifname(switch: Switch, port: str) -> str:
    """The interface a link endpoint names inside the node, per platform's own convention."""
    node = _clab_node(switch.platform)
    return node.ifname(switch.ports, port)


def _clab_node(platform: str) -> ClabNode:
    node = PLATFORMS[platform].clab
    assert node is not None, f"platform {platform} has no containerlab node"
    return node


def _switch_node(switch: Switch, images: ClabImages) -> dict[str, Any]:
    configs = f"../configs/{switch.platform}"
    node = _clab_node(switch.platform)
    spec: dict[str, Any] = {"kind": node.kind, "image": images.tag(node.image)}
    if node.binds:
        spec["binds"] = [
            f"{configs}/{own.format(switch=switch.name)}:{inside}" for own, inside in node.binds
        ]
    if node.exec:
        spec["exec"] = list(node.exec)
    if node.startup_config is not None:
        spec["startup-config"] = f"{configs}/{node.startup_config.format(switch=switch.name)}"
    return spec


def clab_runs(fabric: Fabric) -> bool:
    """Whether containerlab can run every switch (compile writes the topology only then)."""
    return all(
        s.platform in PLATFORMS and PLATFORMS[s.platform].clab is not None for s in fabric.switches
    )


def build_clab(fabric: Fabric, images: ClabImages, source: str = "fabric.json") -> dict[str, Any]:
    runnable = [name for name, p in PLATFORMS.items() if p.clab is not None]
    problems = [
        f"no containerlab kind for platform {s.platform!r}"
        if s.platform in PLATFORMS
        else f"unknown platform {s.platform!r}"
        for s in fabric.switches
        if s.platform not in runnable
    ]
    if problems:
        raise UserErrors.single(
            source,
            "switches.platform",
            sorted(problems)[0],
            f"containerlab output covers {', '.join(runnable)}",
        )
    nodes: dict[str, Any] = {}
    for switch in fabric.switches:
        nodes[switch.name] = {"group": "switch", **_switch_node(switch, images)}
    for host in fabric.hosts:
        nodes[host.name] = {
            "kind": "linux",
            "group": "host",
            "image": images.host,
            "binds": [f"../hosts/{host.name}.sh:{CLAB_ROOT}/host.sh:ro"],
            "exec": [f"sh {CLAB_ROOT}/host.sh"],
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
        f"{clab_signature(fabric)}\n"
        f"# Deploy from this directory: containerlab deploy -t {fabric.name}.clab.yml\n"
    )
    body = dump_block_yaml(build_clab(fabric, images, source))
    return header + body


def write_clab(out: Path, images: ClabImages, force: bool = False) -> Path:
    """Rewrite the topology with other images (compile writes one with the defaults): only
    over a topology fatpaths wrote, atomically."""
    from fatpaths_cfg.support.output import write_owned_file

    loaded = load_compiled(out)
    path = out / clab_path(loaded.fabric)
    text = clab_yaml(loaded.fabric, images, str(out / "fabric.json"))
    write_owned_file(path, text, clab_signature(loaded.fabric), force)
    return path


def clab_signature(fabric: Fabric) -> str:
    return f"# containerlab topology of fabric {fabric.name}, written by fatpaths."
