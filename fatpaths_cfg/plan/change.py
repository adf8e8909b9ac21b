"""What going from one compiled fabric (OLD) to another (NEW) changes, route by route.

A route is (switch s, layer l, family f, destination switch d) -> a next hop. It *must change*
when its old next hop h is no longer a shortest-path next hop in NEW's layer l: the cable s-h
left the layer (or the fabric), or dist_new(h, d) != dist_new(s, d) - 1 (OPERATIONS.md). Routes
added or removed (a switch, a destination or a layer came or went) must change too. Every
other difference is churn the compiler chose: `churn ratio = changed / must change`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fatpaths_cfg.plan.view import UNREACHABLE, RouteView
from fatpaths_cfg.support.stable_hash import natural_key


@dataclass
class SwitchChange:
    name: str
    status: str  # "added", "removed", "changed" or "same"
    # [layer number] -> [added, removed, changed, must change], summed over families
    routes: dict[int, list[int]] = field(default_factory=dict)
    interfaces_added: list[str] = field(default_factory=list)
    interfaces_removed: list[str] = field(default_factory=list)

    @property
    def route_totals(self) -> list[int]:
        totals = [0, 0, 0, 0]
        for counts in self.routes.values():
            totals = [t + int(c) for t, c in zip(totals, counts, strict=True)]
        return totals

    def to_json(self) -> dict[str, Any]:
        added, removed, changed, must = self.route_totals
        return {
            "name": self.name,
            "status": self.status,
            "routes": {"added": added, "removed": removed, "changed": changed, "must": must},
            "layers": [
                {"layer": n, "added": c[0], "removed": c[1], "changed": c[2], "must": c[3]}
                for n, c in sorted(self.routes.items())
                if any(c)
            ],
            "interfaces_added": self.interfaces_added,
            "interfaces_removed": self.interfaces_removed,
        }


@dataclass(frozen=True)
class LayerStats:
    links: int
    connected: bool
    diameter: int
    mean_path: float

    def to_json(self) -> dict[str, Any]:
        return {
            "links": self.links,
            "connected": self.connected,
            "diameter": self.diameter,
            "mean_path": round(self.mean_path, 4),
        }


@dataclass(frozen=True)
class LayerChange:
    number: int
    links_in: list[str]  # cables that joined the layer (named "a:port - b:port")
    links_out: list[str]
    before: LayerStats | None
    after: LayerStats | None

    def to_json(self) -> dict[str, Any]:
        return {
            "layer": self.number,
            "links_in": self.links_in,
            "links_out": self.links_out,
            "before": None if self.before is None else self.before.to_json(),
            "after": None if self.after is None else self.after.to_json(),
        }


@dataclass
class Change:
    old: str
    new: str
    families: list[str]
    switches: list[SwitchChange]
    layers: list[LayerChange]
    cables_added: list[str]
    cables_removed: list[str]
    host_pairs_working_layers_changed: int
    host_pairs: int

    @property
    def routes_changed(self) -> int:
        return sum(sum(s.route_totals[:3]) for s in self.switches)

    @property
    def routes_must_change(self) -> int:
        """Must-change routes, with every added and removed route (they must too)."""
        return sum(a + r + m for a, r, _, m in (s.route_totals for s in self.switches))

    @property
    def churn_ratio(self) -> float:
        """Routes changed over routes that must change; 1.0 when neither is any."""
        must = self.routes_must_change
        return self.routes_changed / must if must else (1.0 if not self.routes_changed else 0.0)

    @property
    def switches_changed(self) -> list[str]:
        return [s.name for s in self.switches if s.status != "same"]

    @property
    def switches_added(self) -> list[str]:
        return [s.name for s in self.switches if s.status == "added"]

    @property
    def switches_removed(self) -> list[str]:
        return [s.name for s in self.switches if s.status == "removed"]

    @property
    def layer_links_changed(self) -> int:
        """Links that joined or left the layers both fabrics have, summed over layers."""
        return sum(
            len(layer.links_in) + len(layer.links_out)
            for layer in self.layers
            if layer.before is not None and layer.after is not None
        )


def _layer_stats(view: RouteView, layer: int) -> LayerStats:
    dist = view.dist[layer]
    planes = np.asarray(view.planes)
    same_plane = planes[:, None] == planes[None, :]
    off_diagonal = ~np.eye(view.nr, dtype=bool)
    wanted = same_plane & off_diagonal
    reachable = (dist != UNREACHABLE) & wanted
    hops = dist[reachable].astype(np.int64)
    return LayerStats(
        int(view.layers[layer].sum()),
        bool(reachable.sum() == wanted.sum()),
        int(hops.max(initial=0)),
        float(hops.mean()) if len(hops) else 0.0,
    )


def _cable_text(cable: tuple[str, ...]) -> str:
    return f"{cable[0]} - {cable[1]}"


def _interned(texts: list[str], table: dict[str, int]) -> np.ndarray:
    return np.array([table.setdefault(t, len(table)) for t in texts], dtype=np.int64)


def compare(old: RouteView, new: RouteView) -> Change:
    """Every route, interface, cable and layer difference from OLD to NEW, by names."""
    common = [n for n in new.switches if n in old.index]
    oi = np.array([old.index[n] for n in common], dtype=np.int64)
    ni = np.array([new.index[n] for n in common], dtype=np.int64)
    # Old index -> new index; the extra last slot maps "no next hop" (-1) to -1.
    old_to_new = np.full(old.nr + 1, -1, dtype=np.int64)
    old_to_new[oi] = ni
    families = [f for f in new.families if f in old.families] or new.families
    by_name: dict[str, SwitchChange] = {}
    for n in old.switches:
        if n not in new.index:
            by_name[n] = SwitchChange(n, "removed")
    for n in new.switches:
        by_name[n] = SwitchChange(n, "same" if n in old.index else "added")
    common_layers = min(old.layer_count, new.layer_count)

    def add(name: str, number: int, column: int, count: int) -> None:
        if count:
            by_name[name].routes.setdefault(number, [0, 0, 0, 0])[column] += count

    # Routes of switches and layers only one side has: wholly added or removed.
    for view, column, others in ((old, 1, new), (new, 0, old)):
        # Destinations the other side lacks.
        gone = [d for d, n in enumerate(view.switches) if n not in others.index]
        for layer in range(view.layer_count):
            present = view.next_hop[layer] >= 0
            whole = present.sum(axis=1)
            towards_gone = present[:, gone].sum(axis=1)
            for s, name in enumerate(view.switches):
                if name not in others.index or layer >= common_layers:
                    add(name, layer + 1, column, int(whole[s]) * len(families))
                else:
                    add(name, layer + 1, column, int(towards_gone[s]) * len(families))

    tables: dict[str, dict[str, int]] = {f: {} for f in families}
    address_ids = {}
    for f in families:
        o_ids, o_texts = old.next_hop_addresses(f)
        n_ids, n_texts = new.next_hop_addresses(f)
        o_map = np.append(_interned(o_texts, tables[f]), -1)
        n_map = np.append(_interned(n_texts, tables[f]), -1)
        address_ids[f] = (o_map[o_ids], n_map[n_ids])
    for layer in range(common_layers):
        o_nh = old.next_hop[layer][np.ix_(oi, oi)]
        n_nh = new.next_hop[layer][np.ix_(ni, ni)]
        o_has, n_has = o_nh >= 0, n_nh >= 0
        both = o_has & n_has
        o_nh_new = old_to_new[o_nh]
        changed_nh = both & (o_nh_new != n_nh)
        # Must change: the old next hop is not a shortest-path next hop in NEW's layer.
        adjacency = new.layer_adjacency(layer)
        safe_hop = np.where(o_nh_new >= 0, o_nh_new, 0)
        rows = ni[:, None]
        in_layer = (o_nh_new >= 0) & adjacency[rows, safe_hop]
        new_dist = new.dist[layer].astype(np.int64)
        closer = new_dist[safe_hop, ni[None, :]] == new_dist[rows, ni[None, :]] - 1
        must = both & ~(in_layer & closer)
        added = n_has & ~o_has
        removed = o_has & ~n_has
        for f in families:
            o_addr, n_addr = address_ids[f]
            o_route = o_addr[oi[:, None], np.where(o_nh >= 0, o_nh, 0)]
            n_route = n_addr[ni[:, None], np.where(n_nh >= 0, n_nh, 0)]
            subnet_table: dict[str, int] = {}
            o_sub = _interned(old.subnets[f][layer], subnet_table)[oi]
            n_sub = _interned(new.subnets[f][layer], subnet_table)[ni]
            changed = both & (changed_nh | (o_route != n_route) | (o_sub != n_sub)[None, :])
            for column, counts in enumerate(
                (added.sum(axis=1), removed.sum(axis=1), changed.sum(axis=1), must.sum(axis=1))
            ):
                for row in np.flatnonzero(counts):
                    add(common[row], layer + 1, column, int(counts[row]))
    for n in common:
        before, after = old.interfaces(old.index[n]), new.interfaces(new.index[n])
        change = by_name[n]
        change.interfaces_added = sorted(" ".join(t) for t in after - before)
        change.interfaces_removed = sorted(" ".join(t) for t in before - after)
    for change in by_name.values():
        if change.status == "same" and (
            any(any(c) for c in change.routes.values())
            or change.interfaces_added
            or change.interfaces_removed
        ):
            change.status = "changed"

    layers = []
    for layer in range(max(old.layer_count, new.layer_count)):
        cables_before = _layer_cables(old, layer)
        cables_after = _layer_cables(new, layer)
        layers.append(
            LayerChange(
                layer + 1,
                sorted((_cable_text(c) for c in cables_after - cables_before), key=natural_key),
                sorted((_cable_text(c) for c in cables_before - cables_after), key=natural_key),
                _layer_stats(old, layer) if layer < old.layer_count else None,
                _layer_stats(new, layer) if layer < new.layer_count else None,
            )
        )
    pairs_changed, pairs = _working_layer_pairs(old, new, oi, ni)
    old_cables, new_cables = set(old.cables), set(new.cables)
    return Change(
        old.name,
        new.name,
        families,
        sorted(by_name.values(), key=lambda s: natural_key(s.name)),
        layers,
        sorted((_cable_text(c) for c in new_cables - old_cables), key=natural_key),
        sorted((_cable_text(c) for c in old_cables - new_cables), key=natural_key),
        pairs_changed,
        pairs,
    )


def _layer_cables(view: RouteView, layer: int) -> set[tuple[str, str]]:
    if layer >= view.layer_count:
        return set()
    return {view.cables[i] for i in np.flatnonzero(view.layers[layer])}


def _working_layer_pairs(
    old: RouteView, new: RouteView, oi: np.ndarray, ni: np.ndarray
) -> tuple[int, int]:
    """Host pairs (on switches both fabrics have, distinct switches) whose number of working
    layers changes, and how many such pairs there are."""
    o_working = (old.dist[:, oi][:, :, oi] != UNREACHABLE).sum(axis=0)
    n_working = (new.dist[:, ni][:, :, ni] != UNREACHABLE).sum(axis=0)
    hosts = np.minimum(np.asarray(old.hosts)[oi], np.asarray(new.hosts)[ni]).astype(np.int64)
    weight = hosts[:, None] * hosts[None, :]
    np.fill_diagonal(weight, 0)
    return int(weight[o_working != n_working].sum()), int(weight.sum())
