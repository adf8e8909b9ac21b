"""A compiled fabric as a change sees it: switches and cables keyed by their names.

A RouteView holds no data of its own: it indexes the one compiled model (`LoadedCompiled`),
read from an output of either schema or taken from a compile in memory, so a plan compares
any two of them the same way.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from fatpaths_cfg.compiled import FamilyAddresses, LoadedCompiled

UNREACHABLE = 255
FAMILIES = ("v4", "v6")


@dataclass(frozen=True)
class RouteView:
    compiled: LoadedCompiled

    @property
    def name(self) -> str:
        return self.compiled.name

    @cached_property
    def switches(self) -> list[str]:
        return [s.name for s in self.compiled.fabric.switches]

    @cached_property
    def planes(self) -> list[int]:
        """Per switch."""
        return [s.plane for s in self.compiled.fabric.switches]

    @cached_property
    def hosts(self) -> list[int]:
        """Hosts per switch."""
        return [len(h) for h in self.compiled.fabric.hosts_of_switch]

    @cached_property
    def cables(self) -> list[tuple[str, str]]:
        """Per link: its two `switch:port` ends, sorted."""
        names = self.switches
        cables = []
        for link in self.compiled.fabric.links:
            pair = sorted((f"{names[link.a]}:{link.a_port}", f"{names[link.b]}:{link.b_port}"))
            cables.append((pair[0], pair[1]))
        return cables

    @cached_property
    def ends(self) -> np.ndarray:
        """(E, 2) switch indices of each link's a and b ends."""
        links = self.compiled.fabric.links
        return np.asarray([(k.a, k.b) for k in links], dtype=np.int64).reshape(-1, 2)

    @cached_property
    def ports(self) -> list[tuple[str, str]]:
        """Per link: the a and b ports."""
        return [(k.a_port, k.b_port) for k in self.compiled.fabric.links]

    @cached_property
    def layers(self) -> np.ndarray:
        """(L, E) bool: which links each layer holds."""
        return np.array(self.compiled.layer_masks, dtype=bool).reshape(
            len(self.compiled.layers), len(self.compiled.fabric.links)
        )

    @property
    def dist(self) -> np.ndarray:
        """(L, nr, nr) uint8, [layer, switch, destination]."""
        return self.compiled.dist

    @property
    def next_hop(self) -> np.ndarray:
        """(L, nr, nr) int32, -1 = no route."""
        return self.compiled.next_hop

    @cached_property
    def families(self) -> list[str]:
        """Of FAMILIES, those the address plan has."""
        plan = self.compiled.addresses
        return [] if plan is None else list(plan.families)

    def _family_tables(self) -> list[tuple[str, FamilyAddresses]]:
        plan = self.compiled.addresses
        return [] if plan is None else plan.tables()

    @cached_property
    def subnets(self) -> dict[str, list[list[str]]]:
        """Family -> [layer][switch] host subnet."""
        return {f: t.subnets for f, t in self._family_tables()}

    @cached_property
    def link_addresses(self) -> dict[str, list[tuple[str, str]]]:
        """Family -> per link (a side, b side)."""
        return {f: t.links for f, t in self._family_tables()}

    @cached_property
    def loopbacks(self) -> dict[str, list[str]]:
        """Family -> per switch."""
        return {f: t.loopbacks for f, t in self._family_tables()}

    @cached_property
    def completed(self) -> list[int]:
        """Per layer: links completion added."""
        return [layer.completed_links for layer in self.compiled.layers]

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
