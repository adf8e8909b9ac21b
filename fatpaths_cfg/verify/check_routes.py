"""Route checks: each route resolved and judged (prefix, next hop, layer, distance, plane), every
(layer, source, destination) walked at once, and each walk that fails replayed to name its path."""

from __future__ import annotations

import time
from collections import defaultdict

import numpy as np

from fatpaths_cfg import _native
from fatpaths_cfg.verify.check_macs import MacChecks
from fatpaths_cfg.verify.context import Room, RouteArrays, int32_columns, resolve
from fatpaths_cfg.verify.deadlock import LayerRoutes
from fatpaths_cfg.verify.findings import (
    BAD_NEXT_HOP,
    CROSS_PLANE,
    DIFFERS,
    MISSING_ROUTE,
    NO_HOP,
    NOT_SHORTEST,
    OUTSIDE_LAYER,
    OWN_SUBNET,
    ROUTE_FAULTS,
    UNKNOWN_PREFIX,
    UNREACHABLE,
    UP_DOWN_TURN,
    Finding,
)


class RouteChecks(Room):
    """The routes of one platform, walked."""

    def route_text(self, row: int) -> str:
        if self.index.encoding == "vlan":
            macs = self.parsed.macs
            return f"mac {macs.mac[row]} vlan {macs.vlan[row]} interface {macs.port[row]}"
        routes = self.ctx.routes
        prefix = routes.prefix_names[routes.prefix[row]]
        return f"{prefix} via {routes.hop_names[routes.next_hop[row]]}"

    def route_faults(self, r: RouteArrays) -> np.ndarray:
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
            np.ascontiguousarray(self.ctx.dist, dtype=np.int16),
            None if ecmp else np.ascontiguousarray(self.loaded.next_hop, dtype=np.int32),
        )

    def walk(
        self, table: int, hop: np.ndarray, row: np.ndarray, fault: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Walk every pair of one table along the first route line of each switch; returns
        failed (source, destination, faulty switch): where a line is missing or faulty, or
        where an up*/down* layer's walk turns up again."""
        rank = self.ctx.ranks[self.index.layer_of_table(table) - 1]
        self.ctx.result.walks += self.routed_pair_count
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

    def resolve_routes(self) -> tuple[RouteArrays, set[tuple[int, int, int]]]:
        """Routes as arrays, and the result's forwarding routes; (routes, (table, switch,
        host's switch) the static MAC check already named)."""
        started = time.perf_counter()
        vlan = self.index.encoding == "vlan"
        already: set[tuple[int, int, int]] = set()
        if vlan:
            macs = MacChecks(self.ctx)
            r = macs.resolve_macs()
            already = macs.check_mac_completeness()
            macs.check_trunks()
        else:
            r = resolve(self.ctx.routes, self.index, self.nr)
        r = int32_columns(r)
        self.ctx.result.routes = len(r.table)
        forwarding = (r.table >= 0) & (r.hop >= 0) & (r.hop != r.switch)
        # Tagged with a layer column rather than gathered per layer: 4.7 M rows on q=19.
        layer = np.where(forwarding, r.table % self.index.layers + 1, 0).astype(np.uint16)
        self.ctx.result.forwarding = LayerRoutes(self.index.layers, layer, r.switch, r.dest, r.hop)
        self.ctx.result.seconds["resolve"] = time.perf_counter() - started
        return r, already

    def check_resolved(self, r: RouteArrays, already: set[tuple[int, int, int]]) -> None:
        parsed = self.parsed
        started = time.perf_counter()
        fault = self.route_faults(r)
        hop, row = self.ctx.primary_tables(r)
        # Consequences of each faulty hop (table, s, t): broken walks and one example path.
        broken: dict[tuple[int, int, int], list[tuple[int, int]]] = defaultdict(list)
        counts: dict[tuple[int, int, int], int] = defaultdict(int)
        off_diagonal = self.routed_pairs
        for table in range(self.ctx.table_count):
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
        self.ctx.result.tables = self.ctx.table_count
        self.ctx.result.seconds["walk"] = time.perf_counter() - started
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
                self.ctx.add(
                    Finding(
                        MISSING_ROUTE,
                        f"{layer_name}: {self.names[at]} has no route to {prefix} "
                        f"({self.names[t]}){consequence}",
                        self.ctx.switch_location(at),
                        self.index.layer_of_table(table),
                        self.names[at],
                        self.names[t],
                        path_text,
                        counts[(table, at, t)],
                    )
                )
                continue
            reported_rows.add(where)
            self.ctx.add(self.route_finding(r, fault, where, consequence, path_text, counts))
        # Faulty routes no walk follows (ECMP alternates, duplicates) still forward packets.
        for where in np.flatnonzero(fault >= 0).tolist():
            if where not in reported_rows:
                self.ctx.add(self.route_finding(r, fault, where, "", (), counts))
        if self.loaded.layers[0].ecmp:
            self.check_equal_cost_sets(r, fault, row)

    def check_equal_cost_sets(self, r: RouteArrays, fault: np.ndarray, first: np.ndarray) -> None:
        """With ECMP inside layers, fabric.json promises every neighbour one hop closer as a next
        hop: a missing member halves a pair's bandwidth without breaking any walk."""
        nr = self.nr
        sound = fault < 0
        # In int64 whatever the columns' types: the key outgrows int32 past 1,000 switches.
        in_table, at, towards, via = (
            a[sound].astype(np.int64) for a in (r.table, r.switch, r.dest, r.hop)
        )
        keys = np.unique(((in_table * nr + at) * nr + towards) * nr + via)
        have = np.bincount(keys // nr, minlength=self.ctx.table_count * nr * nr).reshape(
            self.ctx.table_count, nr, nr
        )
        for table in range(self.ctx.table_count):
            layer = self.index.layer_of_table(table) - 1
            dist = self.ctx.dist[layer]
            adjacency = self.ctx.adjacency[layer].astype(np.float32)
            want = np.zeros((nr, nr), dtype=np.int64)
            for hops in range(1, int(dist[dist < UNREACHABLE].max(initial=0)) + 1):
                closer = adjacency @ (dist == hops - 1).astype(np.float32)
                here = dist == hops
                want[here] = closer[here].astype(np.int64)
            short = (have[table] < want) & (first[table] >= 0)
            for s, t in zip(*np.nonzero(short), strict=True):
                if self.names[int(s)] not in self.parsed.switch_file:
                    continue
                self.ctx.add(
                    Finding(
                        MISSING_ROUTE,
                        f"{self.index.table_name(table)}: {self.names[s]} has "
                        f"{have[table, s, t]} of {want[s, t]} equal-cost next hops towards "
                        f"{self.index.subnet_of.get((table, int(t)), self.names[t])}",
                        self.ctx.switch_location(int(s)),
                        layer + 1,
                        self.names[s],
                        self.names[t],
                    )
                )

    def route_finding(
        self,
        r: RouteArrays,
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
            hops = int(self.ctx.dist[li, s, t])
            detail = {
                OUTSIDE_LAYER: f"link {int(r.link[row])} ({source}-{self.names[n]}) is not in "
                "the layer",
                NOT_SHORTEST: f"{self.names[n]} is {int(self.ctx.dist[li, n, t])} hop(s) from "
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
