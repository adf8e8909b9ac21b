"""A compiled fabric as a change sees it: everything keyed by names, read from fabric.json.

Both the compile in memory and an output on disk give the same fabric.json data, and an output
of the previous schema reads the same way, so a plan can compare any two of them.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

UNREACHABLE = 255
FAMILIES = ("v4", "v6")


@dataclass(frozen=True)
class RouteView:
    name: str
    switches: list[str]
    planes: list[int]  # per switch
    hosts: list[int]  # hosts per switch
    cables: list[tuple[str, str]]  # per link: its two `switch:port` ends, sorted
    ends: np.ndarray  # (E, 2) switch indices of each link's a and b ends
    ports: list[tuple[str, str]]  # per link: the a and b ports
    layers: np.ndarray  # (L, E) bool: which links each layer holds
    dist: np.ndarray  # (L, nr, nr) uint8, [layer, switch, destination]
    next_hop: np.ndarray  # (L, nr, nr) int32, -1 = no route
    families: list[str]  # of FAMILIES, those the address plan has
    subnets: dict[str, list[list[str]]]  # family -> [layer][switch] host subnet
    link_addresses: dict[str, list[tuple[str, str]]]  # family -> per link (a side, b side)
    loopbacks: dict[str, list[str]]  # family -> per switch
    completed: list[int] = field(default_factory=list)  # per layer: links completion added

    @property
    def nr(self) -> int:
        return len(self.switches)

    @property
    def layer_count(self) -> int:
        return int(self.layers.shape[0])

    @cached_property
    def index(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.switches)}

    @cached_property
    def cable_index(self) -> dict[tuple[str, str], int]:
        return {cable: i for i, cable in enumerate(self.cables)}

    def layer_adjacency(self, layer: int) -> np.ndarray:
        """(nr, nr) bool: the links of one layer (0-based), both directions."""
        adjacency = np.zeros((self.nr, self.nr), dtype=bool)
        kept = self.ends[self.layers[layer]]
        adjacency[kept[:, 0], kept[:, 1]] = True
        adjacency[kept[:, 1], kept[:, 0]] = True
        return adjacency

    @cached_property
    def link_of(self) -> np.ndarray:
        """(nr, nr) int: the link between two switches, -1 where none."""
        link = np.full((self.nr, self.nr), -1, dtype=np.int64)
        indices = np.arange(len(self.ends))
        link[self.ends[:, 0], self.ends[:, 1]] = indices
        link[self.ends[:, 1], self.ends[:, 0]] = indices
        return link

    def route_line(
        self, family: str, layer: int, switch: int, destination: int, hop: int
    ) -> tuple[str, str, str] | None:
        """(family, destination's subnet, the hop's address on its cable to `switch`) of a
        route, as the switch's config writes it; None where no cable joins switch and hop."""
        link = int(self.link_of[switch, hop])
        if link < 0:
            return None
        side = 0 if int(self.ends[link, 0]) == hop else 1
        subnet = self.subnets[family][layer][destination]
        address = self.link_addresses[family][link][side].split("/")[0]
        return family, str(ipaddress.ip_network(subnet, strict=False)), address

    def next_hop_addresses(self, family: str) -> tuple[np.ndarray, list[str]]:
        """(nr, nr) ids of the address a switch sends to for each neighbour (its peer's side of
        their link), -1 where not adjacent; and the address text of each id."""
        texts: list[str] = []
        ids = np.full((self.nr, self.nr), -1, dtype=np.int64)
        for i, (a_side, b_side) in enumerate(self.link_addresses.get(family, [])):
            a, b = (int(x) for x in self.ends[i])
            ids[a, b] = len(texts)
            texts.append(b_side)
            ids[b, a] = len(texts)
            texts.append(a_side)
        return ids, texts

    @cached_property
    def links_of(self) -> list[list[int]]:
        """Each switch's links."""
        incident: list[list[int]] = [[] for _ in range(self.nr)]
        for i, (a, b) in enumerate(self.ends.tolist()):
            incident[a].append(i)
            incident[b].append(i)
        return incident

    def interfaces(self, switch: int) -> frozenset[tuple[str, ...]]:
        """What the switch's interface config holds: (port, peer, address) per family, and
        its loopbacks and host subnets."""
        return self._interfaces[switch]

    @cached_property
    def _interfaces(self) -> list[frozenset[tuple[str, ...]]]:
        return [self._interfaces_of(s) for s in range(self.nr)]

    def _interfaces_of(self, switch: int) -> frozenset[tuple[str, ...]]:
        own: set[tuple[str, ...]] = set()
        for i in self.links_of[switch]:
            side = 0 if int(self.ends[i, 0]) == switch else 1
            peer = self.switches[int(self.ends[i, 1 - side])]
            port = self.ports[i][side]
            own.add(("port", port, peer))
            for family in self.families:
                own.add(("address", port, family, self.link_addresses[family][i][side]))
        for family in self.families:
            own.add(("loopback", family, self.loopbacks[family][switch]))
            for layer, row in enumerate(self.subnets[family]):
                own.add(("subnet", family, str(layer), row[switch]))
        return frozenset(own)


def view_from_data(data: dict[str, Any], dist: np.ndarray, next_hop: np.ndarray) -> RouteView:
    """A RouteView of fabric.json's data and routing.npz's tables. Raises KeyError, TypeError,
    ValueError or IndexError on a document that is not one."""
    switches = [str(s["name"]) for s in data["switches"]]
    index = {name: i for i, name in enumerate(switches)}
    if len(index) != len(switches):
        raise ValueError("switch names repeat")
    cables, ends, ports = [], [], []
    for li in data["links"]:
        a, b = li["a"], li["b"]
        pair = sorted((f"{a['switch']}:{a['port']}", f"{b['switch']}:{b['port']}"))
        cables.append((pair[0], pair[1]))
        ends.append((index[a["switch"]], index[b["switch"]]))
        ports.append((str(a["port"]), str(b["port"])))
    layer_entries = sorted(data["layers"], key=lambda layer: int(layer["id"]))
    layers = np.zeros((len(layer_entries), len(cables)), dtype=bool)
    for row, layer in enumerate(layer_entries):
        layers[row, np.asarray(layer["links"], dtype=np.int64)] = True
    plan = data["addressing"]
    families = [f for f in FAMILIES if any(s.get(f"loopback_{f}") for s in plan["switches"][:1])]
    subnets = {
        f: [[s["subnets"][layer][f] for s in plan["switches"]] for layer in range(len(layers))]
        for f in families
    }
    link_addresses = {f: [(li[f"a_{f}"], li[f"b_{f}"]) for li in plan["links"]] for f in families}
    loopbacks = {f: [s[f"loopback_{f}"] for s in plan["switches"]] for f in families}
    shape = (len(layers), len(switches), len(switches))
    if dist.shape != shape or next_hop.shape != shape:
        raise ValueError(f"routing tables of shape {dist.shape}, the fabric needs {shape}")
    return RouteView(
        str(data["name"]),
        switches,
        [int(s.get("plane", 0)) for s in data["switches"]],
        [len(s.get("hosts", [])) for s in data["switches"]],
        cables,
        np.asarray(ends, dtype=np.int64).reshape(-1, 2),
        ports,
        layers,
        dist,
        next_hop,
        families,
        subnets,
        link_addresses,
        loopbacks,
        [int(layer.get("completed_links", 0)) for layer in layer_entries],
    )
