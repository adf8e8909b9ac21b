"""The forwarding checker: rebuild every switch's tables from the routes read back out of the
rendered configs and walk every (layer, source, destination) pair.

All pairs are walked at once with numpy. A hop is *sound* when the route exists, its next hop
is a neighbour over a link of the layer, and that neighbour is exactly one hop closer in the
layer; a walk over sound hops can neither loop nor leave the layer, and is a shortest path.
Only the walks that meet an unsound hop are replayed in Python, to name the path and the file
and line of the route at fault.

Parallel dataplanes: a packet never changes plane. A route is *cross-plane* when its
destination's switch or its next hop lies in another plane than its own switch, and walks run
between switches of one plane only (a layer holds links of every plane, none between them).
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from fatpaths_cfg import _native
from fatpaths_cfg.beside import beside
from fatpaths_cfg.compiled import LoadedCompiled
from fatpaths_cfg.failure_walks import FailureWalks, replay_failed, walk_failures
from fatpaths_cfg.verify.deadlock import LayerRoutes
from fatpaths_cfg.verify.model import (
    AddressColumns,
    AddressLine,
    Location,
    ParsedConfigs,
    RouteBlock,
)
from fatpaths_cfg.verify.plan import (
    AddressIndex,
    ExpectedAddress,
    build_address_index,
    canonical_address,
    canonical_addresses,
    canonical_interface,
    canonical_interfaces,
    canonical_prefix,
)
from fatpaths_cfg.verify.readers import (
    LOOPBACK,
    normalise_mac,
    read_address_files,
    read_route_files,
)

NO_HOP = -1
UNREACHABLE = 255

# Route faults, most telling first: a route is reported once, under its first fault.
UNKNOWN_PREFIX = "unknown-prefix"
CROSS_PLANE = "cross-plane"
BAD_NEXT_HOP = "bad-next-hop"
OWN_SUBNET = "route-to-own-subnet"
OUTSIDE_LAYER = "outside-layer"
NOT_SHORTEST = "not-shortest"
UP_DOWN_TURN = "up-down-violation"
DIFFERS = "differs-from-fabric-json"
MISSING_ROUTE = "missing-route"
MISSING_ADDRESS = "missing-address"
UNEXPECTED_ADDRESS = "unexpected-address"
MISSING_HOST_ADDRESS = "missing-host-address"
DUPLICATE_ADDRESS = "duplicate-address"
HOST_ON_LINK = "host-address-is-link-address"
MISSING_CONFIG = "missing-config"
UNPARSED = "unparsed-line"
LAYER_ONE_NOT_MINIMAL = "layer-1-not-minimal"
# Backup routes (`routing.backup`), read apart from the primaries.
BACKUP_LOOP = "backup-loop"
BACKUP_NOT_LOOP_FREE = "backup-not-loop-free"
BACKUP_DIFFERS = "backup-differs-from-fabric-json"
MISSING_BACKUP = "missing-backup"
ROUTE_FAULTS = (
    UNKNOWN_PREFIX,
    CROSS_PLANE,
    BAD_NEXT_HOP,
    OWN_SUBNET,
    OUTSIDE_LAYER,
    NOT_SHORTEST,
    DIFFERS,
)


@dataclass(frozen=True)
class Finding:
    kind: str
    message: str
    location: Location | None
    layer: int | None = None
    source: str | None = None
    destination: str | None = None
    path: tuple[str, ...] = ()
    walks_broken: int = 0

    def __str__(self) -> str:
        where = f"{self.location}: " if self.location else ""
        return f"{where}{self.kind}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "message": self.message,
            "file": self.location.file if self.location else None,
            "line": self.location.line if self.location else None,
            "layer": self.layer,
            "source": self.source,
            "destination": self.destination,
            "path": list(self.path),
            "walks_broken": self.walks_broken,
        }


@dataclass(frozen=True)
class BackupSummary:
    """The backup routes' check: single-cable failures walked per table (layer, family)."""

    routes: int
    failures: int
    walks: int  # walks a failure touched, over all failures
    dropped: int  # of those, walks that end without a route (the host moves the flow)
    loops: int

    def __str__(self) -> str:
        return (
            f"backups: {self.routes} routes; {self.failures} single-cable failures break "
            f"{self.walks} primary walks: {self.walks - self.dropped - self.loops} saved by a "
            f"backup, "
            f"{self.dropped} dropped, {self.loops} loop(s)"
        )

    def to_json(self) -> dict[str, int]:
        return {
            "routes": self.routes,
            "failures": self.failures,
            "walks": self.walks,
            "dropped": self.dropped,
            "loops": self.loops,
        }


@dataclass
class ForwardingCheck:
    platform: str
    findings: list[Finding] = field(default_factory=list)
    walks: int = 0
    routes: int = 0
    tables: int = 0
    host_addresses: int = 0
    seconds: dict[str, float] = field(default_factory=dict)
    # Every route that names a neighbour, sound or not (a faulty route still forwards, so it
    # still makes packets wait), with its layer.
    forwarding: LayerRoutes | None = None
    # What check_forwarding's `derive` computed from `forwarding`.
    derived: Any = None
    backups: BackupSummary | None = None  # when the configs hold backup routes

    @property
    def ok(self) -> bool:
        return not self.findings


# A host route a switch needs: (switch, port, address without prefix length).
HostRouteKey = tuple[str, str, str | None]


@dataclass(frozen=True)
class _PlacedAddress:
    """An address as configured, with what it serves: "host", "link", "loopback", "gateway"
    or "port" (any other switch port)."""

    line: AddressLine
    role: str
    planned: bool  # the address plan gives this owner this address
    link: int | None = None


@dataclass
class _RouteArrays:
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


def _int32_columns(r: _RouteArrays) -> _RouteArrays:
    """Route columns as the native checks take them (copied only where they are not)."""
    columns = {
        name: np.ascontiguousarray(getattr(r, name), dtype=np.int32)
        for name in ("table", "switch", "dest", "hop", "link")
    }
    return replace(r, **columns)


def _resolve(routes: RouteBlock, index: AddressIndex, nr: int) -> _RouteArrays:
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
    return _RouteArrays(
        table=name_table[routes.prefix],
        switch=routes.switch,
        dest=name_dest[routes.prefix],
        hop=owner_of.astype(np.int32)[name_hops][routes.next_hop],
        link=link_of.astype(np.int32)[name_hops][routes.next_hop],
        file=routes.file,
        line=routes.line,
    )


def _repeats_other_than_gateways(
    entries: AddressColumns,
    addresses: list[str | None],
    counts: Counter[str | None],
    gateways: set[tuple[str, str]],
) -> bool:
    """Whether an address is configured more than once other than as one owner's gateway
    (those are one interface, on however many host ports)."""
    owner_of: dict[str, str] = {}
    for owner, text, address in zip(entries.owner, entries.address, addresses, strict=True):
        if address is None or counts[address] < 2:
            continue
        if owner_of.setdefault(address, owner) != owner:
            return True
        if (owner, canonical_interface(text)) not in gateways:
            return True
    return False


class _Checker:
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

    # -- helpers ---------------------------------------------------------------------------
    def add(self, finding: Finding) -> None:
        self.result.findings.append(finding)

    def switch_location(self, switch: int, part: str = "routes") -> Location:
        files = self.parsed.switch_file if part == "routes" else self.parsed.address_file
        file = files.get(self.names[switch], self.parsed.switch_file.get(self.names[switch]))
        if file is None:
            return Location(f"<no config for {self.names[switch]}>", 0)
        return Location(self.parsed.files[file], 0)

    def route_text(self, row: int) -> str:
        if self.index.encoding == "vlan":
            macs = self.parsed.macs
            return f"mac {macs.mac[row]} vlan {macs.vlan[row]} interface {macs.port[row]}"
        routes = self.routes
        prefix = routes.prefix_names[routes.prefix[row]]
        return f"{prefix} via {routes.hop_names[routes.next_hop[row]]}"

    # -- VLAN encoding: static MAC entries instead of routes ---------------------------------
    def host_macs(self) -> dict[str, int]:
        plan = self.loaded.addresses
        macs = plan.host_macs if plan is not None else []
        return {normalise_mac(mac): host for host, mac in enumerate(macs) if mac}

    def resolve_macs(self) -> _RouteArrays:
        """Static MAC entries as routes: (layer of the VLAN, switch, host's switch, neighbour
        behind the port). Entries for a host port deliver locally and are checked here."""
        macs = self.parsed.macs
        host_of = self.host_macs()
        ports: dict[tuple[int, str], tuple[int, int]] = {}
        for link in self.fabric.links:
            ports[(link.a, link.a_port)] = (link.index, link.b)
            ports[(link.b, link.b_port)] = (link.index, link.a)
        host_ports = {(h.switch, h.port) for h in self.fabric.hosts}
        size = len(macs)
        table = np.full(size, -1, dtype=np.int64)
        dest = np.full(size, -1, dtype=np.int64)
        hop = np.full(size, -1, dtype=np.int64)
        via = np.full(size, -1, dtype=np.int64)
        keep = np.ones(size, dtype=bool)
        for row in range(size):
            s, host = macs.switch[row], host_of.get(macs.mac[row])
            layer = self.index.vlans.get(macs.vlan[row])
            if host is None or layer is None:
                continue
            t = self.fabric.hosts[host].switch
            table[row], dest[row] = layer - 1, t
            if (s, macs.port[row]) in host_ports:
                keep[row] = False
                if s != t or self.fabric.hosts[host].port != macs.port[row]:
                    self.add(
                        Finding(
                            BAD_NEXT_HOP,
                            f"layer {layer}: {self.names[s]} delivers host "
                            f"{self.fabric.hosts[host].name} to host port {macs.port[row]}",
                            self.parsed.location(macs.file[row], macs.line[row]),
                            layer,
                            self.names[s],
                            self.fabric.hosts[host].name,
                        )
                    )
                continue
            found = ports.get((s, macs.port[row]))
            if found is not None:
                via[row], hop[row] = found
        rows = np.flatnonzero(keep)
        return _RouteArrays(
            table=table[rows],
            switch=np.asarray(macs.switch, dtype=np.int64)[rows],
            dest=dest[rows],
            hop=hop[rows],
            link=via[rows],
            file=np.asarray(macs.file, dtype=np.int64)[rows],
            line=np.asarray(macs.line, dtype=np.int64)[rows],
            row=rows,
        )

    def check_mac_completeness(self) -> set[tuple[int, int, int]]:
        """Every switch needs an entry for every host in every layer's VLAN (flooding is off,
        so a missing entry drops the host's traffic). Returns the (table, switch, host switch)
        keys reported."""
        macs = self.parsed.macs
        host_of = self.host_macs()
        hosts = len(self.fabric.hosts)
        layers = self.index.layers
        seen = np.zeros((layers, self.nr, hosts), dtype=bool)
        for s, vlan, mac in zip(macs.switch, macs.vlan, macs.mac, strict=True):
            layer, host = self.index.vlans.get(vlan), host_of.get(mac)
            if layer is not None and host is not None:
                seen[layer - 1, s, host] = True
        reported: set[tuple[int, int, int]] = set()
        vlan_of = {layer: vlan for vlan, layer in self.index.vlans.items()}
        read = {self.fabric.switch_index[n] for n in self.parsed.switch_file}
        for layer, s, host in zip(*np.nonzero(~seen), strict=True):
            if int(s) not in read:
                continue
            h = self.fabric.hosts[int(host)]
            reported.add((int(layer), int(s), h.switch))
            self.add(
                Finding(
                    MISSING_ROUTE,
                    f"layer {layer + 1}: {self.names[s]} has no static MAC entry for host "
                    f"{h.name} in VLAN {vlan_of.get(int(layer) + 1)}: its frames are dropped",
                    self.switch_location(int(s)),
                    int(layer) + 1,
                    self.names[s],
                    h.name,
                )
            )
        return reported

    def check_trunks(self) -> None:
        """A link port must carry exactly the VLANs of the layers that use its link."""
        vlan_of = {layer: vlan for vlan, layer in self.index.vlans.items()}
        trunks = {(t.switch, t.port): t for t in self.parsed.trunks}
        masks = self.loaded.layer_masks
        for link in self.fabric.links:
            want = frozenset(vlan_of[i + 1] for i, m in enumerate(masks) if m[link.index])
            for switch, port in ((link.a, link.a_port), (link.b, link.b_port)):
                name = self.names[switch]
                if name not in self.parsed.switch_file:
                    continue
                trunk = trunks.get((name, port))
                if trunk is not None and trunk.vlans == want:
                    continue
                have = "no allowed-VLAN list" if trunk is None else f"VLANs {sorted(trunk.vlans)}"
                self.add(
                    Finding(
                        OUTSIDE_LAYER,
                        f"{name} port {port} (link {link.index}) carries {have}; its layers "
                        f"need VLANs {sorted(want)}",
                        self.parsed.location(trunk.file, trunk.line)
                        if trunk
                        else self.switch_location(switch),
                        source=name,
                    )
                )

    # -- stages ----------------------------------------------------------------------------
    def report_unparsed(self, lines: list[tuple[int, int, str]]) -> None:
        for file, line, text in lines:
            self.add(Finding(UNPARSED, f"cannot read {text!r}", self.parsed.location(file, line)))

    def check_inputs(self) -> None:
        self.report_unparsed(self.parsed.unparsed)
        for switch in self.names:
            if switch not in self.parsed.switch_file:
                self.add(
                    Finding(
                        MISSING_CONFIG,
                        f"no configuration for switch {switch}",
                        Location(f"configs/{self.parsed.platform}", 0),
                        source=switch,
                    )
                )
        layers = self.loaded.layers
        minimal_layer_one = layers and layers[0].up_down_rank is None
        if minimal_layer_one and len(layers[0].links) != len(self.fabric.links):
            self.add(
                Finding(
                    LAYER_ONE_NOT_MINIMAL,
                    f"layer 1 holds {len(layers[0].links)} of {len(self.fabric.links)} "
                    "links, so its paths are not minimal in the fabric",
                    Location("fabric.json", 0),
                    layer=1,
                )
            )

    def route_faults(self, r: _RouteArrays) -> np.ndarray:
        """Per route row: index into ROUTE_FAULTS of its first fault, or -1 when sound."""
        one_plane = self.fabric.planes == 1
        ecmp = self.loaded.layers[0].ecmp
        return _native.route_faults(
            r.table,
            r.switch,
            r.dest,
            r.hop,
            r.link,
            self.link_a,
            self.link_b,
            None if one_plane else np.ascontiguousarray(self.switch_plane, dtype=np.int32),
            self.layer_links,
            np.ascontiguousarray(self.dist, dtype=np.int16),
            None if ecmp else np.ascontiguousarray(self.loaded.next_hop, dtype=np.int32),
        )

    def primary_tables(self, r: _RouteArrays) -> tuple[np.ndarray, np.ndarray]:
        """next_hop[table, s, t] of the first route line (what a walk follows) and its row."""
        return _native.primary_tables(r.table, r.switch, r.dest, r.hop, self.table_count, self.nr)

    def walk(
        self, table: int, hop: np.ndarray, row: np.ndarray, fault: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Walk every pair of one table along the first route line of each switch; returns
        failed (source, destination, faulty switch): where a line is missing or faulty, or
        where an up*/down* layer's walk turns up again."""
        rank = self.ranks[self.index.layer_of_table(table) - 1]
        self.result.walks += self.routed_pair_count
        return _native.walk_failures(hop, row, fault, self.routed_pairs, rank)

    def replay(self, hop: np.ndarray, s: int, t: int) -> tuple[list[int], str]:
        """The path a packet actually takes from s towards t, and how it ends."""
        path = [s]
        seen = {s}
        while path[-1] != t:
            nxt = int(hop[path[-1], t])
            if nxt == NO_HOP:
                return path, "is dropped (no route)"
            path.append(nxt)
            if nxt in seen:
                return path, "loops"
            seen.add(nxt)
        return path, "arrives"

    def resolve_routes(self) -> tuple[_RouteArrays, set[tuple[int, int, int]]]:
        """Routes as arrays, and the result's forwarding routes; (routes, (table, switch,
        host's switch) the static MAC check already named)."""
        started = time.perf_counter()
        vlan = self.index.encoding == "vlan"
        already: set[tuple[int, int, int]] = set()
        if vlan:
            r = self.resolve_macs()
            already = self.check_mac_completeness()
            self.check_trunks()
        else:
            r = _resolve(self.routes, self.index, self.nr)
        r = _int32_columns(r)
        self.result.routes = len(r.table)
        forwarding = (r.table >= 0) & (r.hop >= 0) & (r.hop != r.switch)
        # Tagged with a layer column rather than gathered per layer: 4.7 M rows on q=19.
        layer = np.where(forwarding, r.table % self.index.layers + 1, 0).astype(np.uint16)
        self.result.forwarding = LayerRoutes(self.index.layers, layer, r.switch, r.dest, r.hop)
        self.result.seconds["resolve"] = time.perf_counter() - started
        return r, already

    def check_resolved(self, r: _RouteArrays, already: set[tuple[int, int, int]]) -> None:
        parsed = self.parsed
        started = time.perf_counter()
        fault = self.route_faults(r)
        hop, row = self.primary_tables(r)
        # Consequences of each faulty hop (table, s, t): broken walks and one example path.
        broken: dict[tuple[int, int, int], list[tuple[int, int]]] = defaultdict(list)
        counts: dict[tuple[int, int, int], int] = defaultdict(int)
        off_diagonal = self.routed_pairs
        for table in range(self.table_count):
            missing = off_diagonal & (row[table] < 0)
            for s_, t_ in zip(*np.nonzero(missing), strict=True):
                broken[(table, int(s_), int(t_))]  # registers the black hole
            fs, ft, fat = self.walk(table, hop[table], row[table], fault)
            for a, b, at in zip(fs.tolist(), ft.tolist(), fat.tolist(), strict=True):
                key = (table, at, b)
                counts[key] += 1
                # The walk that starts at the faulty switch shows the fault most directly.
                if not broken[key] or a == at:
                    broken[key][:] = [(a, b)]
        self.result.tables = self.table_count
        self.result.seconds["walk"] = time.perf_counter() - started
        reported_rows: set[int] = set()
        for (table, at, t), examples in sorted(broken.items()):
            path_text: tuple[str, ...] = ()
            how = ""
            if examples:
                path, how = self.replay(hop[table], examples[0][0], t)
                path_text = tuple(self.names[p] for p in path)
            where = int(row[table, at, t])
            layer_name = self.index.table_name(table)
            consequence = (
                f"; {counts[(table, at, t)]} walk(s) break, e.g. {' -> '.join(path_text)} {how}"
                if path_text
                else ""
            )
            if where < 0 and (table, at, t) in already:
                continue  # named host by host by the static MAC check
            if where < 0 and self.names[at] not in parsed.switch_file:
                continue  # the whole config is missing, reported once as such
            if where < 0:
                prefix = self.index.subnet_of.get((table, t), f"subnet of {self.names[t]}")
                self.add(
                    Finding(
                        MISSING_ROUTE,
                        f"{layer_name}: {self.names[at]} has no route to {prefix} "
                        f"({self.names[t]}){consequence}",
                        self.switch_location(at),
                        self.index.layer_of_table(table),
                        self.names[at],
                        self.names[t],
                        path_text,
                        counts[(table, at, t)],
                    )
                )
                continue
            reported_rows.add(where)
            self.add(self.route_finding(r, fault, where, consequence, path_text, counts))
        # Faulty routes no walk follows (ECMP alternates, duplicates) still forward packets.
        for where in np.flatnonzero(fault >= 0).tolist():
            if where not in reported_rows:
                self.add(self.route_finding(r, fault, where, "", (), counts))
        if self.loaded.layers[0].ecmp:
            self.check_equal_cost_sets(r, fault, row)

    def check_equal_cost_sets(self, r: _RouteArrays, fault: np.ndarray, first: np.ndarray) -> None:
        """With ECMP inside layers, fabric.json promises every neighbour one hop closer as a next
        hop: a missing member halves a pair's bandwidth without breaking any walk."""
        nr = self.nr
        sound = fault < 0
        # In int64 whatever the columns' types: the key outgrows int32 past 1,000 switches.
        in_table, at, towards, via = (
            a[sound].astype(np.int64) for a in (r.table, r.switch, r.dest, r.hop)
        )
        keys = np.unique(((in_table * nr + at) * nr + towards) * nr + via)
        have = np.bincount(keys // nr, minlength=self.table_count * nr * nr).reshape(
            self.table_count, nr, nr
        )
        for table in range(self.table_count):
            layer = self.index.layer_of_table(table) - 1
            dist = self.dist[layer]
            adjacency = self.adjacency[layer].astype(np.float32)
            want = np.zeros((nr, nr), dtype=np.int64)
            for hops in range(1, int(dist[dist < UNREACHABLE].max(initial=0)) + 1):
                closer = adjacency @ (dist == hops - 1).astype(np.float32)
                here = dist == hops
                want[here] = closer[here].astype(np.int64)
            short = (have[table] < want) & (first[table] >= 0)
            for s, t in zip(*np.nonzero(short), strict=True):
                if self.names[int(s)] not in self.parsed.switch_file:
                    continue
                self.add(
                    Finding(
                        MISSING_ROUTE,
                        f"{self.index.table_name(table)}: {self.names[s]} has "
                        f"{have[table, s, t]} of {want[s, t]} equal-cost next hops towards "
                        f"{self.index.subnet_of.get((table, int(t)), self.names[t])}",
                        self.switch_location(int(s)),
                        layer + 1,
                        self.names[s],
                        self.names[t],
                    )
                )

    # -- backup routes: floating routes that forward once the primary's cable is down ---------
    def check_backups(self, r: _RouteArrays) -> None:
        """Each backup line is a loop-free alternate of fabric.json's layer, and with any one
        cable of a layer down (its primaries withdrawn, the backups in their place) no walk
        loops."""
        loaded, parsed = self.loaded, self.parsed
        if self.index.encoding == "vlan" or (not len(parsed.backups) and loaded.backup is None):
            return
        started = time.perf_counter()
        block = parsed.backups.interned()
        b = _int32_columns(_resolve(block, self.index, self.nr))

        def text(row: int) -> str:
            prefix = block.prefix_names[block.prefix[row]]
            return f"{prefix} via {block.hop_names[block.next_hop[row]]} (backup)"

        sound = self.backup_faults(b, text)
        hop, row = self.primary_tables(r)
        hop_link = np.where(row >= 0, r.link[np.maximum(row, 0)], -1)
        fields = [np.where(sound, column, -1).astype(np.int32) for column in (b.table, b.hop)]
        backup, backup_row = _native.primary_tables(
            fields[0], b.switch, b.dest, fields[1], self.table_count, self.nr
        )
        backup_link = np.where(backup_row >= 0, b.link[np.maximum(backup_row, 0)], -1)
        self.check_compiled_backups(backup, backup_row, b, text)
        for table in range(self.table_count):
            layer = self.index.layer_of_table(table) - 1
            assert self.layer_links is not None  # backups exist only with layers
            links = np.flatnonzero(self.layer_links[layer])
            walks = walk_failures(
                hop[table],
                hop_link[table],
                backup[table],
                backup_link[table],
                links,
                self.routed_pairs,
            )
            self.report_backup_loops(
                table, walks, (hop[table], hop_link[table], backup[table], backup_link[table])
            )
            self.backup_walks.append(walks)
        self.result.backups = BackupSummary(
            len(b.table),
            sum(w.failures for w in self.backup_walks),
            sum(w.walks for w in self.backup_walks),
            sum(w.dropped for w in self.backup_walks),
            sum(len(w.loops) for w in self.backup_walks),
        )
        self.result.seconds["backups"] = time.perf_counter() - started

    def backup_faults(self, b: _RouteArrays, text: Callable[[int], str]) -> np.ndarray:
        """Per backup line: sound, or reported here (its prefix, next hop, layer or the
        loop-free inequality dist(N, t) < dist(N, s) + dist(s, t) is wrong)."""
        sound = np.ones(len(b.table), dtype=bool)
        for row in range(len(b.table)):
            table, s, t, n = (int(a[row]) for a in (b.table, b.switch, b.dest, b.hop))
            layer = self.index.layer_of_table(table) if table >= 0 else 0
            where = self.parsed.location(int(b.file[row]), int(b.line[row]))
            source = self.names[s]
            kind, why = "", ""
            if table < 0:
                kind, why = UNKNOWN_PREFIX, f"{source}: route {text(row)}: no layer subnet"
            elif n < 0:
                kind = BAD_NEXT_HOP
                why = f"{source}: route {text(row)}: next hop is not a neighbour's link address"
            elif self.layer_links is not None and not self.layer_links[layer - 1, b.link[row]]:
                kind = OUTSIDE_LAYER
                why = (
                    f"layer {layer}: {source} route {text(row)}: link {int(b.link[row])} "
                    f"({source}-{self.names[n]}) is not in the layer"
                )
            else:
                dist = self.dist[layer - 1].astype(np.int64)
                if not dist[n, t] < dist[n, s] + dist[s, t]:
                    kind = BACKUP_NOT_LOOP_FREE
                    why = (
                        f"layer {layer}: {source} -> {self.names[t]} route {text(row)}: "
                        f"{self.names[n]} is {dist[n, t]} hop(s) from {self.names[t]}, not "
                        f"fewer than {dist[n, s]} + {dist[s, t]} through {source}"
                    )
            if kind:
                sound[row] = kind == BACKUP_NOT_LOOP_FREE  # still forwards: the walk shows how
                self.add(Finding(kind, why, where, layer or None, source, self.names[t]))
        return sound

    def check_compiled_backups(
        self,
        backup: np.ndarray,
        backup_row: np.ndarray,
        b: _RouteArrays,
        text: Callable[[int], str],
    ) -> None:
        """The backups read against fabric.json's (routing.npz `backup`): each one there, and
        the same alternate."""
        compiled = self.loaded.backup
        if compiled is None:
            return
        for table in range(self.table_count):
            want = compiled[self.index.layer_of_table(table) - 1]
            have, rows = backup[table], backup_row[table]
            for s, t in zip(*np.nonzero((want >= 0) & (rows < 0)), strict=True):
                if self.names[s] not in self.parsed.switch_file:
                    continue  # the whole config is missing, reported once as such
                prefix = self.index.subnet_of.get((table, int(t)), f"subnet of {self.names[t]}")
                self.add(
                    Finding(
                        MISSING_BACKUP,
                        f"{self.index.table_name(table)}: {self.names[s]} has no backup route "
                        f"to {prefix} ({self.names[t]}) via {self.names[want[s, t]]}",
                        self.switch_location(int(s)),
                        self.index.layer_of_table(table),
                        self.names[s],
                        self.names[t],
                    )
                )
            for s, t in zip(*np.nonzero((rows >= 0) & (have != want)), strict=True):
                row = int(rows[s, t])
                expected = self.names[want[s, t]] if want[s, t] >= 0 else "no backup"
                self.add(
                    Finding(
                        BACKUP_DIFFERS,
                        f"{self.index.table_name(table)}: {self.names[s]} -> {self.names[t]} "
                        f"route {text(row)}: fabric.json says {expected}",
                        self.parsed.location(int(b.file[row]), int(b.line[row])),
                        self.index.layer_of_table(table),
                        self.names[s],
                        self.names[t],
                    )
                )

    def report_backup_loops(
        self,
        table: int,
        walks: FailureWalks,
        tables: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    ) -> None:
        """One finding per backup that leads a walk into a loop, at its line, with the failed
        cable and an example path."""
        fabric = self.fabric
        examples: dict[tuple[int, int], tuple[int, list[int]]] = {}
        counts: Counter[tuple[int, int]] = Counter()
        for link, s, t in walks.loops:
            path, used = replay_failed(*tables, link, s, t)
            at = used[0] if used else s
            counts[(at, t)] += 1
            if (at, t) not in examples or s == at:
                examples[(at, t)] = (link, path)
        for (at, t), (link, path) in sorted(examples.items()):
            cable = fabric.links[link]
            names = tuple(self.names[p] for p in path)
            self.add(
                Finding(
                    BACKUP_LOOP,
                    f"{self.index.table_name(table)}: with cable "
                    f"{self.names[cable.a]}:{cable.a_port}-{self.names[cable.b]}:{cable.b_port} "
                    f"down, {self.names[at]}'s backup towards {self.names[t]} loops; "
                    f"{counts[(at, t)]} walk(s) loop, e.g. {' -> '.join(names)}",
                    self.backup_location(table, at, t),
                    self.index.layer_of_table(table),
                    self.names[at],
                    self.names[t],
                    names,
                    counts[(at, t)],
                )
            )

    def backup_location(self, table: int, s: int, t: int) -> Location:
        backups = self.parsed.backups.interned()
        b = _resolve(backups, self.index, self.nr)
        match = np.flatnonzero((b.table == table) & (b.switch == s) & (b.dest == t))
        if not len(match):
            return self.switch_location(s)
        return self.parsed.location(int(b.file[match[0]]), int(b.line[match[0]]))

    def route_finding(
        self,
        r: _RouteArrays,
        fault: np.ndarray,
        row: int,
        consequence: str,
        path: tuple[str, ...],
        counts: dict[tuple[int, int, int], int],
    ) -> Finding:
        kind = ROUTE_FAULTS[int(fault[row])] if fault[row] >= 0 else UP_DOWN_TURN
        s = int(r.switch[row])
        table, t, n = int(r.table[row]), int(r.dest[row]), int(r.hop[row])
        layer = self.index.layer_of_table(table) if table >= 0 else None
        layer_name = self.index.table_name(table) if table >= 0 else "no layer"
        source = self.names[s]
        text = self.route_text(int(r.row[row]) if r.row is not None else row)
        why = {
            UNKNOWN_PREFIX: f"{source}: route {text}: prefix is no layer subnet of the plan",
            CROSS_PLANE: f"{layer_name}: {source} (plane {int(self.switch_plane[s])}) route "
            f"{text}: {self.plane_detail(s, t, n)}: a packet would change plane",
            BAD_NEXT_HOP: f"{source}: route {text}: next hop is not a neighbour's link address",
            OWN_SUBNET: f"{layer_name}: {source} routes its own subnet {text} away",
            OUTSIDE_LAYER: "",
            NOT_SHORTEST: "",
            DIFFERS: "",
            UP_DOWN_TURN: "",
        }[kind]
        if not why:
            li = (layer or 1) - 1
            hops = int(self.dist[li, s, t])
            detail = {
                OUTSIDE_LAYER: f"link {int(r.link[row])} ({source}-{self.names[n]}) is not in "
                "the layer",
                NOT_SHORTEST: f"{self.names[n]} is {int(self.dist[li, n, t])} hop(s) from "
                f"{self.names[t]} in the layer, {source} is {hops}",
                DIFFERS: f"fabric.json says via {self.names[int(self.loaded.next_hop[li, s, t])]}",
                UP_DOWN_TURN: "the path turns up after going down (up*/down* rule broken)",
            }[kind]
            why = (
                f"{layer_name}: {source} -> {self.names[t]} via {self.names[n]} "
                f"(route {text}): {detail}"
            )
        return Finding(
            kind,
            why + consequence,
            self.parsed.location(int(r.file[row]), int(r.line[row])),
            layer,
            source,
            self.names[t] if t >= 0 else None,
            path,
            counts.get((table, s, t), 0),
        )

    def plane_detail(self, s: int, t: int, n: int) -> str:
        """Which of a cross-plane route's destination and next hop lie in which other plane."""
        parts = [
            f"{what} {self.names[k]} is in plane {int(self.switch_plane[k])}"
            for what, k in (("destination", t), ("next hop", n))
            if k >= 0 and self.switch_plane[k] != self.switch_plane[s]
        ]
        return ", ".join(parts)

    def host_route_keys(self, host_wants: list[ExpectedAddress]) -> list[HostRouteKey | None]:
        """Per host address of the plan: the (switch, port, address) of the host route its
        switch needs, None when the switch keeps no host routes (or the host is unknown)."""
        hosts = {h.name: h for h in self.fabric.hosts}
        routing = self.parsed.host_route_switches
        bare = canonical_addresses([want.address for want in host_wants])
        keys: list[HostRouteKey | None] = []
        for want, address in zip(host_wants, bare, strict=True):
            host = hosts.get(want.owner)
            if host is None:
                keys.append(None)
                continue
            uplink = host.uplinks[want.plane]
            switch = self.names[uplink.switch]
            keys.append((switch, uplink.port, address) if switch in routing else None)
        return keys

    def missing_host_route(self, want: ExpectedAddress, key: HostRouteKey) -> None:
        switch, port, _ = key
        self.add(
            Finding(
                MISSING_HOST_ADDRESS,
                f"{switch} has no host route to {want.owner}'s layer {want.layer} address "
                f"{want.address.split('/')[0]} on {port}: the host is unreachable in "
                "that layer",
                self.switch_location(self.fabric.switch_index[switch], "interfaces"),
                want.layer,
                switch,
                want.owner,
            )
        )

    def placed_addresses(self) -> dict[str, list[_PlacedAddress]]:
        """Every configured address by canonical address (no prefix length), one entry per
        interface, planned ones first, each group in reading order."""
        on_switches = len(self.parsed.switch_addresses)
        entries = self.parsed.switch_addresses.joined(self.parsed.host_addresses)
        addresses = canonical_addresses(entries.address)
        # Only an address configured more than once can clash: the rest (nearly all of a
        # sound fabric's) need no place built, and a fabric without any needs no plan indexed.
        counts = Counter(addresses)
        if len(counts) == len(addresses):
            return {}
        # Kernel platforms put a switch's layer gateway on every host port: one interface.
        gateways = {(w.owner, w.address) for w in self.index.expected if w.role == "gateway"}
        if not _repeats_other_than_gateways(entries, addresses, counts, gateways):
            return {}  # a sound kernel fabric's 10^5 repeats: no place needs building
        planned = {(want.owner, want.address) for want in self.index.expected}
        link_of_port = {
            (self.names[switch], port): link.index
            for link in self.fabric.links
            for switch, port in ((link.a, link.a_port), (link.b, link.b_port))
        }
        groups: dict[str, dict[tuple[str, str], _PlacedAddress]] = defaultdict(dict)
        rows = zip(entries.owner, entries.port, entries.address, addresses, strict=True)
        for i, (owner, port, text, address) in enumerate(rows):
            if address is None or counts[address] < 2:
                continue
            on_host = i >= on_switches
            key = (owner, canonical_interface(text))
            gateway = key in gateways
            interface = (owner, "gateway" if gateway else port)
            group = groups[address]
            if interface in group:
                continue  # the first line of an interface stands for it (a gateway: 10^5)
            link = link_of_port.get((owner, port))
            if on_host:
                role = "host"
            elif port == LOOPBACK:
                role = "loopback"
            elif gateway:
                role = "gateway"
            else:
                role = "port" if link is None else "link"
            group[interface] = _PlacedAddress(entries[i], role, key in planned, link)
        return {
            address: sorted(places.values(), key=lambda p: not p.planned)
            for address, places in groups.items()
            if len(places) > 1
        }

    def describe_place(self, place: _PlacedAddress) -> str:
        entry = place.line
        if place.role == "host":
            return f"host {entry.owner}"
        if place.role == "link":
            return f"link {place.link}'s end at {entry.owner} port {entry.port}"
        if place.role == "gateway":
            return f"{entry.owner}'s host gateway on port {entry.port}"
        return f"{entry.owner} port {entry.port}"

    def check_address_clashes(self) -> set[tuple[int, int]]:
        """An address on two interfaces reaches only one of them, whatever the routes say; a
        plan whose pools overlap passes every other check. Returns the (file, line) reported."""
        reported: set[tuple[int, int]] = set()
        for address, places in sorted(self.placed_addresses().items()):
            first = places[0]
            where = self.parsed.location(first.line.file, first.line.line)
            for place in places[1:]:
                entry = place.line
                roles = {first.role, place.role}
                kind = HOST_ON_LINK if roles == {"host", "link"} else DUPLICATE_ADDRESS
                unplanned = "" if place.planned else "; the address plan does not give it here"
                self.add(
                    Finding(
                        kind,
                        f"{self.describe_place(place)}: address {address} is also on "
                        f"{self.describe_place(first)} ({where}): packets for it reach only "
                        f"one of them{unplanned}",
                        self.parsed.location(entry.file, entry.line),
                        source=entry.owner,
                    )
                )
                reported.add((entry.file, entry.line))
        return reported

    def address_part(self) -> tuple[list[Finding], int, float]:
        """The files that hold only addresses and the host plans read, and `check_addresses`,
        on a result of its own: (findings, host addresses, seconds)."""
        own = self.result
        self.result = ForwardingCheck(own.platform)
        started = time.perf_counter()
        try:
            read_before = len(self.parsed.unparsed)
            read_address_files(self.parsed, self.loaded)
            self.report_unparsed(self.parsed.unparsed[read_before:])
            self.check_addresses()
            return self.result.findings, self.result.host_addresses, time.perf_counter() - started
        finally:
            self.result = own

    def check_addresses(self) -> None:
        parsed = self.parsed
        clashed = self.check_address_clashes()
        configured: dict[tuple[str, str], list[tuple[str, int, int]]] = {}
        entries = parsed.switch_addresses.joined(parsed.host_addresses)
        interfaces = canonical_interfaces(entries.address)
        rows = zip(entries.owner, entries.port, entries.file, entries.line, interfaces, strict=True)
        for owner, port, file, line, interface in rows:
            place = (port, file, line)
            key = (owner, interface)
            # Nearly every key is configured once: a fresh list beats defaultdict's lookup twice.
            known = configured.get(key)
            if known is None:
                configured[key] = [place]
            else:
                known.append(place)
        expected_keys: set[tuple[str, str]] = set()
        routes = parsed.host_routes
        host_routes = set(
            zip(routes.owner, routes.port, canonical_addresses(routes.address), strict=True)
        )
        switches_with_hosts = {self.names[u.switch] for h in self.fabric.hosts for u in h.uplinks}
        expected = self.index.expected
        route_keys = iter(self.host_route_keys([want for want in expected if want.role == "host"]))
        for want in expected:
            key = (want.owner, want.address)
            expected_keys.add(key)
            if want.role == "host":
                self.result.host_addresses += 1
                route_key = next(route_keys)
                if route_key is not None and route_key not in host_routes:
                    self.missing_host_route(want, route_key)
                if want.owner not in parsed.host_file:
                    continue  # host plans not read for this platform: nothing to compare
                found = configured.get(key)
                if not found:
                    file = parsed.host_file[want.owner]
                    self.add(
                        Finding(
                            MISSING_HOST_ADDRESS,
                            f"host {want.owner} lacks its layer {want.layer} address "
                            f"{want.address}: it is unreachable in that layer",
                            parsed.location(file, 0),
                            want.layer,
                            destination=want.owner,
                        )
                    )
                continue
            if want.owner not in parsed.configured_switches:
                continue  # reported as a missing config
            if want.role == "link" and self.index.encoding == "vlan":
                continue  # VLAN encoding: links are L2 trunks, the plan's addresses go unused
            if want.role == "gateway" and want.owner not in switches_with_hosts:
                continue  # no host port to carry it: switches without hosts need no gateway
            found = configured.get(key)
            if found and (want.port is None or any(port == want.port for port, _, _ in found)):
                continue
            ports = {port for port, _, _ in found or []}
            what = {
                "link": f"link {want.link} address {want.address} on port {want.port}",
                "gateway": f"layer {want.layer} gateway {want.address}",
                "loopback": f"loopback {want.address}",
            }[want.role]
            consequence = {
                "link": ": routes via it cannot resolve their next hop",
                "gateway": ": its hosts are unreachable in that layer",
                "loopback": "",
            }[want.role]
            where = f" (found on {', '.join(sorted(ports))})" if found else ""
            self.add(
                Finding(
                    MISSING_ADDRESS,
                    f"{want.owner} lacks {what}{where}{consequence}",
                    self.switch_location(self.fabric.switch_index[want.owner], "interfaces"),
                    want.layer,
                    want.owner,
                )
            )
        # Nearly every configured key is expected: only the rest need sorting.
        unexpected = [item for item in configured.items() if item[0] not in expected_keys]
        for (owner, address), places in sorted(unexpected):
            for port, file, line in places:
                if (file, line) in clashed:
                    continue  # a line is reported once, under its most telling fault
                self.add(
                    Finding(
                        UNEXPECTED_ADDRESS,
                        f"{owner} port {port}: address {address} is not in the address plan",
                        parsed.location(file, line),
                        source=owner,
                    )
                )


def check_forwarding(
    loaded: LoadedCompiled,
    parsed: ParsedConfigs,
    derive: Callable[[LayerRoutes], Any] | None = None,
) -> ForwardingCheck:
    """Check one platform's configs (`read_configs`, or `plan_reading` with files still to
    read) against `fabric.json`; findings say what is wrong and where, and are empty when every
    layer forwards every pair correctly. `derive`, given the routes that forward, runs after
    the walks; its value is the result's `derived`."""
    checker = _Checker(loaded, parsed)
    started = time.perf_counter()
    # The address checks share nothing with the route checks but the fabric: they read the
    # files that hold only addresses and the host plans themselves, in a forked child, while
    # this process reads the routes, checks them and derives what they imply (the deadlock
    # analysis). A file that holds both is read before the child starts, so both have it.
    if any(pending.holds == "both" for pending in parsed.pending):
        read_route_files(parsed, loaded)
    with beside(checker.address_part) as addresses:
        read_route_files(parsed, loaded)
        checker.result.seconds["read"] = time.perf_counter() - started
        checker.check_inputs()
        started = time.perf_counter()
        checker.prepare_routes()
        checker.result.seconds["reference"] = time.perf_counter() - started
        resolved = checker.resolve_routes()
        checker.check_resolved(*resolved)
        checker.check_backups(resolved[0])
        forwarding = checker.result.forwarding
        assert forwarding is not None  # resolve_routes set it
        checker.result.derived = derive(forwarding) if derive else None
        findings, host_addresses, seconds = addresses.result()
    checker.result.findings.extend(findings)
    checker.result.host_addresses += host_addresses
    checker.result.seconds["addresses"] = seconds
    return checker.result
