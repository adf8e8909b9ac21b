"""What every room of the forwarding checker shares: the compiled fabric and the parsed configs,
the reference distances the routes are held against, the routes resolved to switch indices,
and the result the rooms add their findings to."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from fatpaths_cfg import _native
from fatpaths_cfg.compiled import LoadedCompiled
from fatpaths_cfg.failure_walks import FailureWalks
from fatpaths_cfg.verify.findings import UNPARSED, UNREACHABLE, Finding, ForwardingCheck
from fatpaths_cfg.verify.model import Location, ParsedConfigs, RouteBlock
from fatpaths_cfg.verify.plan import (
    AddressIndex,
    build_address_index,
    canonical_address,
    canonical_prefix,
)


@dataclass
class RouteArrays:
    """Routes resolved to switch indices; -1 where a prefix or next hop did not resolve."""

    table: np.ndarray
    switch: np.ndarray
    dest: np.ndarray
    hop: np.ndarray
    link: np.ndarray
    file: np.ndarray
    line: np.ndarray
    row: np.ndarray | None = None  # parsed row of each entry when not one-to-one


def _bfs_all_pairs(adjacency: np.ndarray) -> np.ndarray:
    """Hop distances between all switches: one frontier step per hop as a sparse-dense
    product, so a diameter-3 layer costs three products instead of Nr searches."""
    nr = adjacency.shape[0]
    graph = sp.csr_matrix(adjacency.astype(np.float32))
    dist = np.full((nr, nr), UNREACHABLE, dtype=np.int16)
    reached = np.eye(nr, dtype=bool)
    dist[reached] = 0
    frontier = reached.astype(np.float32)
    hops = 0
    while frontier.any():
        hops += 1
        grown = np.asarray(graph @ frontier) > 0
        new = grown & ~reached
        dist[new] = hops
        reached |= new
        frontier = new.astype(np.float32)
    return dist


def reference_distances(
    loaded: LoadedCompiled, index: AddressIndex
) -> tuple[np.ndarray, np.ndarray, list[np.ndarray | None]]:
    """Per layer: hop distances (int16) of the layer's own links, the layer's adjacency as a
    dense bool matrix, and its up*/down* rank if it has one.

    Distances come from a fresh BFS over `fabric.json`'s link sets, not from `routing.npz`, so a
    wrong compiler table cannot vouch for itself. Up*/down* layers are the exception: their
    paths are shortest among up*/down* paths, which is what `routing.npz` records; their walks
    are additionally checked for the turn rule.
    """
    fabric = loaded.fabric
    nr = fabric.nr
    edges = fabric.edges
    layers = loaded.layers
    dist = np.empty((len(layers), nr, nr), dtype=np.int16)
    adjacency = np.zeros((len(layers), nr, nr), dtype=bool)
    ranks: list[np.ndarray | None] = []
    for i, layer in enumerate(layers):
        kept = edges[layer.links]
        adjacency[i, kept[:, 0], kept[:, 1]] = True
        adjacency[i, kept[:, 1], kept[:, 0]] = True
        rank = layer.up_down_rank
        if rank is not None:
            dist[i] = loaded.dist[i].astype(np.int16)
            ranks.append(np.asarray(rank, dtype=np.int64))
            continue
        dist[i] = _bfs_all_pairs(adjacency[i])
        ranks.append(None)
    return dist, adjacency, ranks


def int32_columns(r: RouteArrays) -> RouteArrays:
    """Route columns as the native checks take them (copied only where they are not)."""
    columns = {
        name: np.ascontiguousarray(getattr(r, name), dtype=np.int32)
        for name in ("table", "switch", "dest", "hop", "link")
    }
    return replace(r, **columns)


def resolve(routes: RouteBlock, index: AddressIndex, nr: int) -> RouteArrays:
    """Prefixes and next hops resolved once per distinct name, then per route by indexing."""
    subnet_code = {prefix: table * nr + t for prefix, (table, t) in index.subnet.items()}
    addresses = list(index.link_address)
    address_id = {a: i for i, a in enumerate(addresses)}
    link_of = np.array([index.link_address[a][0] for a in addresses] + [-1], dtype=np.int64)
    owner_of = np.array([index.link_address[a][1] for a in addresses] + [-1], dtype=np.int64)

    def prefix_code(text: str) -> int:
        code = subnet_code.get(text)
        if code is None:
            canonical = canonical_prefix(text)
            code = subnet_code.get(canonical, -1) if canonical else -1
        return code

    def address_code(text: str) -> int:
        code = address_id.get(text)
        if code is None:
            canonical = canonical_address(text)
            code = address_id.get(canonical, -1) if canonical else -1
        return code

    name_codes = np.array([prefix_code(p) for p in routes.prefix_names] + [-1], dtype=np.int64)
    name_hops = np.array([address_code(a) for a in routes.hop_names] + [-1], dtype=np.int64)
    known = name_codes >= 0
    # Everything is worked out per name and then gathered once per route: a q=19 fabric has
    # 4.7 M routes but only thousands of names, and int32 columns halve the largest arrays.
    name_table = np.where(known, name_codes // nr, -1).astype(np.int32)
    name_dest = np.where(known, name_codes % nr, -1).astype(np.int32)
    return RouteArrays(
        table=name_table[routes.prefix],
        switch=routes.switch,
        dest=name_dest[routes.prefix],
        hop=owner_of.astype(np.int32)[name_hops][routes.next_hop],
        link=link_of.astype(np.int32)[name_hops][routes.next_hop],
        file=routes.file,
        line=routes.line,
    )


class CheckContext:
    """The fabric, the configs and the result one platform's check works on."""

    def __init__(self, loaded: LoadedCompiled, parsed: ParsedConfigs) -> None:
        self.loaded = loaded
        self.parsed = parsed
        self.fabric = loaded.fabric
        self.nr = loaded.fabric.nr
        self.names = [s.name for s in self.fabric.switches]
        self.index = build_address_index(loaded)
        self.result = ForwardingCheck(parsed.platform)
        edges = self.fabric.edges
        # Each end's switch per link, gathered per route: two int32 columns, not one pair.
        self.link_a = np.ascontiguousarray(edges[:, 0], dtype=np.int32)
        self.link_b = np.ascontiguousarray(edges[:, 1], dtype=np.int32)
        self.layer_links = np.array(loaded.layer_masks) if loaded.layers else None
        # Routes join the switches of one plane; pairs across planes have none by design.
        plane_of = self.fabric.plane_of_switch
        self.switch_plane = plane_of
        self.routed_pairs = ~np.eye(self.nr, dtype=bool) & (plane_of[:, None] == plane_of[None, :])
        self.routed_pair_count = int(self.routed_pairs.sum())
        self.backup_walks: list[FailureWalks] = []

    def prepare_routes(self) -> None:
        """The routes as one block, and the reference they are held against."""
        self.routes = self.parsed.routes.interned()
        self.dist, self.adjacency, self.ranks = reference_distances(self.loaded, self.index)

    @property
    def table_count(self) -> int:
        # Static MAC entries are per layer (VLAN), whatever the IP families on top.
        return self.index.layers if self.index.encoding == "vlan" else self.index.tables

    def add(self, finding: Finding) -> None:
        self.result.findings.append(finding)

    def switch_location(self, switch: int, part: str = "routes") -> Location:
        files = self.parsed.switch_file if part == "routes" else self.parsed.address_file
        file = files.get(self.names[switch], self.parsed.switch_file.get(self.names[switch]))
        if file is None:
            return Location(f"<no config for {self.names[switch]}>", 0)
        return Location(self.parsed.files[file], 0)

    def primary_tables(self, r: RouteArrays) -> tuple[np.ndarray, np.ndarray]:
        """next_hop[table, s, t] of the first route line (what a walk follows) and its row."""
        return _native.primary_tables(r.table, r.switch, r.dest, r.hop, self.table_count, self.nr)

    def report_unparsed(self, lines: list[tuple[int, int, str]]) -> None:
        for file, line, text in lines:
            self.add(Finding(UNPARSED, f"cannot read {text!r}", self.parsed.location(file, line)))


class Room:
    """A room of the checker: one kind of check over the shared context. What never changes
    while the check runs is read through the context once, under the same names."""

    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx
        self.loaded = ctx.loaded
        self.parsed = ctx.parsed
        self.fabric = ctx.fabric
        self.nr = ctx.nr
        self.names = ctx.names
        self.index = ctx.index
        self.link_a = ctx.link_a
        self.link_b = ctx.link_b
        self.layer_links = ctx.layer_links
        self.switch_plane = ctx.switch_plane
        self.routed_pairs = ctx.routed_pairs
        self.routed_pair_count = ctx.routed_pair_count
