"""What the cost model needs of a fabric: its switches, their ports, cables and hosts.

Built from a compiled-side `Fabric` (an inventory, wiring or generator spec) or straight from a
generated topology, so `topo match` prices a candidate without building a whole fabric.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from fatpaths_cfg.fabric import Fabric
from fatpaths_cfg.topologies import GeneratedTopology

IntArray = npt.NDArray[np.int64]

# Generated inventories link at 100G unless the inventory says otherwise (`topo generate`).
DEFAULT_SPEED_GBPS = 100.0


@dataclass(frozen=True)
class CostNetwork:
    """One fabric as the cost model sees it. `edges` are switch-to-switch cables (index pairs),
    `host_cables` the host cables at each switch, `ports` the ports each switch has installed."""

    name: str
    switch_names: list[str]
    groups: list[str]
    ports: IntArray
    edges: IntArray
    host_cables: IntArray
    hosts: int
    speed_gbps: npt.NDArray[np.float64]

    @property
    def nr(self) -> int:
        return len(self.switch_names)

    def ports_used(self) -> IntArray:
        return (
            np.bincount(self.edges.ravel(), minlength=self.nr).astype(np.int64) + self.host_cables
        )


def switch_group(name: str) -> str:
    """The group a generated switch belongs to, kept together in the layout.

    Slim Fly: row x of both subgraphs (`sf-0-x-*` and `sf-1-x-*`), the rack pairing of the
    Slim Fly paper; fat tree: the pod's edge and aggregation switches, the cores apart;
    otherwise the name without its last number (`df-g3-s2` -> `df-g3`, `hx-1-4` -> `hx-1`)."""
    slimfly = re.fullmatch(r"sf-\d+-(\d+)-\d+", name)
    if slimfly:
        return f"sf-{slimfly[1]}"
    pod = re.fullmatch(r"ft-(?:edge|agg)-(\d+)-\d+", name)
    if pod:
        return f"ft-pod-{pod[1]}"
    return re.sub(r"-[a-z]*\d+$", "", name) or name


def from_fabric(fabric: Fabric) -> CostNetwork:
    nr = fabric.nr
    host_cables = np.zeros(nr, dtype=np.int64)
    speed = np.zeros(nr, dtype=np.float64)
    for host in fabric.hosts:
        for uplink in host.uplinks:
            host_cables[uplink.switch] += 1
            speed[uplink.switch] = max(speed[uplink.switch], host.speed_gbps)
    for link in fabric.links:
        for end in (link.a, link.b):
            speed[end] = max(speed[end], link.speed_gbps)
    speed[speed == 0] = DEFAULT_SPEED_GBPS
    names = [s.name for s in fabric.switches]
    return CostNetwork(
        name=fabric.name,
        switch_names=names,
        groups=[switch_group(n) for n in names],
        ports=np.array([len(s.ports) for s in fabric.switches], dtype=np.int64),
        edges=np.asarray(fabric.edges, dtype=np.int64).reshape(-1, 2),
        host_cables=host_cables,
        hosts=len(fabric.hosts),
        speed_gbps=speed,
    )


def from_topology(
    name: str, topology: GeneratedTopology, speed_gbps: float = DEFAULT_SPEED_GBPS
) -> CostNetwork:
    nr = topology.num_switches
    edges = np.array(topology.edges, dtype=np.int64).reshape(-1, 2)
    hosts = np.array(topology.hosts_per_switch, dtype=np.int64)
    degree = np.bincount(edges.ravel(), minlength=nr).astype(np.int64)
    return CostNetwork(
        name=name,
        switch_names=list(topology.switch_names),
        groups=[switch_group(n) for n in topology.switch_names],
        # As `topo generate` writes them: exactly the ports the cables use.
        ports=np.maximum(degree + hosts, 1),
        edges=edges,
        host_cables=hosts,
        hosts=int(hosts.sum()),
        speed_gbps=np.full(nr, speed_gbps),
    )
