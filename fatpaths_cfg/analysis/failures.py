"""Failure what-if of static layered routes: which (host pair, layer) paths a failed cable,
switch or plane breaks, and what k random failed cables or switches leave of each host pair.

Static routes do not reconverge. A route whose next hop's cable is down is withdrawn and the
switch drops that (layer, destination)'s traffic; hosts move their flowlets to another layer
(OPERATIONS.md, section 3). So after a failure a (plane, layer) path from one switch to another
works iff walking the layer's unchanged next-hop table from the source to the destination uses
no failed cable and no failed switch.

Hosts with the same uplink switches (one per plane) are interchangeable: a *rack*. A host pair
(a, b) counts as the ordered rack pair of a and b, weighted by its host pairs, hosts(r) *
hosts(r') (or hosts(r) * (hosts(r) - 1) within a rack). Its *options* are the (plane, layer)
paths between its switches; inside a rack, each plane's one switch (which always works while
the switch is up). A host whose every uplink switch failed is gone: host pairs with such a
host leave the denominator of every share.

Every (rack pair, option) path is walked once, and each cable and switch on it is recorded:
the index, per failure element, of the paths it breaks. The sum of the index's sizes is the sum
of the path lengths (the in-tree walk towards each destination visits exactly the sources below
a tree edge), so all single failures cost one sort of it, and a random k-failure draws k of its
segments.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fatpaths_cfg.fabric import Fabric
from fatpaths_cfg.support.stable_hash import stream

# What random failures fail: cables (the default), switches, or either from one pool.
RANDOM_KINDS = ("cables", "switches", "any")

# Called as a stage makes progress: (task description, steps done, steps in all).
ProgressHook = Callable[[str, int, int], None]


@dataclass(frozen=True)
class PathIndex:
    """Every (rack pair, option) path of a fabric and the failure elements on it.

    Elements are the cables (0 .. cables-1, in the fabric's link order) then the switches;
    `broken[offsets[e] : offsets[e + 1]]` are the ids (pair * options + option) of the working
    paths element e lies on. A switch is recorded where it is a path's endpoint only when the
    fabric has more than one plane: with one plane a failed switch takes its hosts with it.
    """

    names: tuple[str, ...]  # per element: cable `a:port - b:port`, switch name
    cables: int
    racks: int
    planes: int
    layers: int
    rack_switches: np.ndarray  # (planes, racks) switch of each rack in each plane
    switch_planes: np.ndarray  # (switches,) each switch's plane
    rack_hosts: np.ndarray  # (racks,) hosts per rack
    weight: np.ndarray  # (racks * racks,) ordered host pairs per ordered rack pair
    working: np.ndarray  # (racks * racks,) options that work with nothing failed
    working_per_plane: np.ndarray  # (planes, racks * racks)
    offsets: np.ndarray  # (elements + 1,)
    broken: np.ndarray  # path ids, grouped by element

    @property
    def options(self) -> int:
        return self.planes * self.layers

    @property
    def elements(self) -> int:
        return len(self.names)

    def segment(self, element: int) -> np.ndarray:
        return self.broken[self.offsets[element] : self.offsets[element + 1]]


@dataclass(frozen=True)
class FailureTable:
    """One row per failure (columns as arrays): what it leaves of the host pairs."""

    names: tuple[str, ...]
    kinds: tuple[str, ...]  # cable, switch, plane
    host_pairs: np.ndarray  # ordered host pairs with both hosts up (the denominator)
    lost_hosts: np.ndarray  # hosts cut off (every uplink switch failed)
    broken_paths: np.ndarray  # (host pair, option) paths that worked and no longer do
    broken_switch_paths: np.ndarray  # (rack pair, option) paths that worked and no longer do
    lost_all: np.ndarray  # host pairs that had a working option and have none left
    keep_one: np.ndarray  # host pairs with >= 1 working option
    keep_two: np.ndarray  # host pairs with >= 2 working options

    def __len__(self) -> int:
        return len(self.names)

    def share(self, column: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.host_pairs > 0, column / np.maximum(self.host_pairs, 1), np.nan)

    def rows(self) -> list[dict[str, Any]]:
        one, two, lost = (
            self.share(self.keep_one),
            self.share(self.keep_two),
            self.share(self.lost_all),
        )
        return [
            {
                "failure": self.names[i],
                "kind": self.kinds[i],
                "host_pairs": int(self.host_pairs[i]),
                "lost_hosts": int(self.lost_hosts[i]),
                "broken_paths": int(self.broken_paths[i]),
                "broken_switch_paths": int(self.broken_switch_paths[i]),
                "lost_all": int(self.lost_all[i]),
                "keep_one": int(self.keep_one[i]),
                "keep_two": int(self.keep_two[i]),
                "share_keep_one": _rounded(one[i]),
                "share_keep_two": _rounded(two[i]),
                "share_lost_all": _rounded(lost[i]),
            }
            for i in range(len(self))
        ]


@dataclass(frozen=True)
class RandomPoint:
    """k random failures, `samples` draws: shares of host pairs, mean and worst draw."""

    k: int
    kind: str
    samples: int
    # None where no draw left a host pair to count
    mean_keep_one: float | None
    worst_keep_one: float | None
    mean_keep_two: float | None
    worst_keep_two: float | None
    mean_lost_all: float | None
    mean_broken_paths: float


def cable_name(fabric: Fabric, link: int) -> str:
    """`a:port - b:port`, the ends in name order, so a cable's name does not depend on which
    end the inventory wrote first."""
    cable = fabric.links[link]
    ends = sorted(
        (
            f"{fabric.switches[cable.a].name}:{cable.a_port}",
            f"{fabric.switches[cable.b].name}:{cable.b_port}",
        )
    )
    return f"{ends[0]} - {ends[1]}"


def racks_of(fabric: Fabric) -> tuple[np.ndarray, np.ndarray]:
    """(planes, racks) switch per rack and plane, and the hosts per rack; racks in order of
    their first host."""
    planes = fabric.planes
    rack: dict[tuple[int, ...], int] = {}
    counts: list[int] = []
    for host in fabric.hosts:
        if len(host.uplinks) != planes:
            raise ValueError(
                f"host {host.name} has {len(host.uplinks)} uplinks, the fabric has {planes} planes"
            )
        key = tuple(u.switch for u in host.uplinks)
        if key not in rack:
            rack[key] = len(rack)
            counts.append(0)
        counts[rack[key]] += 1
    switches = np.array(list(rack), dtype=np.int64).reshape(-1, planes).T
    return switches, np.array(counts, dtype=np.int64)


def index_paths(
    fabric: Fabric, next_hop: np.ndarray, progress: ProgressHook | None = None
) -> PathIndex:
    """Walk every (rack pair, plane, layer) path of `next_hop[layer, switch, destination]` and
    index the cables and switches on each."""
    layers, nr = next_hop.shape[0], fabric.nr
    if next_hop.shape[1:] != (nr, nr):
        raise ValueError(f"next hops are for {next_hop.shape[1]} switches, the fabric has {nr}")
    rack_switches, rack_hosts = racks_of(fabric)
    planes, racks = rack_switches.shape
    options, pairs = planes * layers, racks * racks
    cable_of = np.full((nr, nr), -1, dtype=np.int64)
    for number, link in enumerate(fabric.links):  # cables are numbered by position
        cable_of[link.a, link.b] = cable_of[link.b, link.a] = number
    cables = len(fabric.links)
    elements_in_all = cables + nr
    paths_in_all = pairs * options
    working_per_plane = np.zeros((planes, pairs), dtype=np.int64)
    # One int64 key per (element, path), sorted once: grouped by element, paths in order.
    keys: list[np.ndarray] = []
    for plane in range(planes):
        src = np.repeat(rack_switches[plane], racks)
        dst = np.tile(rack_switches[plane], racks)
        for layer in range(layers):
            elements, pair_ids, works = _walk(next_hop[layer], cable_of, src, dst, planes > 1)
            option = plane * layers + layer
            keep = works[pair_ids]
            # Elements are numbered cables first: a switch is `cables + switch`.
            element = np.where(elements < 0, cables + ~elements, elements)[keep]
            keys.append(element * paths_in_all + (pair_ids[keep] * options + option))
            working_per_plane[plane] += works
            if progress:
                progress("walking layer paths", option + 1, options)
    key = np.concatenate(keys) if keys else np.zeros(0, np.int64)
    del keys
    key.sort()
    offsets = np.zeros(elements_in_all + 1, dtype=np.int64)
    offsets[1:] = np.searchsorted(key, np.arange(1, elements_in_all + 1) * paths_in_all)
    path_type = np.int32 if paths_in_all < 2**31 else np.int64
    broken = (key % paths_in_all).astype(path_type)
    del key
    weight = np.outer(rack_hosts, rack_hosts)
    weight[np.diag_indices(racks)] -= rack_hosts
    return PathIndex(
        names=tuple(cable_name(fabric, i) for i in range(cables))
        + tuple(s.name for s in fabric.switches),
        cables=cables,
        racks=racks,
        planes=planes,
        layers=layers,
        rack_switches=rack_switches,
        switch_planes=fabric.plane_of_switch,
        rack_hosts=rack_hosts,
        weight=weight.ravel(),
        working=working_per_plane.sum(axis=0),
        working_per_plane=working_per_plane,
        offsets=offsets,
        broken=broken,
    )


def _walk(
    table: np.ndarray, cable_of: np.ndarray, src: np.ndarray, dst: np.ndarray, endpoints: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Follow one layer's next hops from every src to its dst at once. Returns the elements
    met (cable index >= 0, switch s as ~s), the pair of each, and per pair whether it arrives
    (a missing route, a next hop that is no neighbour or a loop means it does not)."""
    pairs = len(src)
    works = np.ones(pairs, dtype=bool)
    elements: list[np.ndarray] = []
    pair_ids: list[np.ndarray] = []
    if endpoints:  # with planes, a failed switch breaks its plane's paths, not its hosts
        every = np.arange(pairs)
        elements += [~src, ~dst[src != dst]]
        pair_ids += [every, every[src != dst]]
    active = np.flatnonzero(src != dst)
    current = src[active]
    for _ in range(len(table)):
        if active.size == 0:
            break
        target = dst[active]
        hop = table[current, target]
        cable = cable_of[current, np.maximum(hop, 0)]
        lost = (hop < 0) | (cable < 0)
        works[active[lost]] = False
        active, hop, cable, target = active[~lost], hop[~lost], cable[~lost], target[~lost]
        elements.append(cable)
        pair_ids.append(active)
        on = hop != target
        active, current = active[on], hop[on]
        elements.append(~current)
        pair_ids.append(active)
    works[active] = False  # still walking after as many hops as switches: a loop
    if not elements:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), works
    return np.concatenate(elements), np.concatenate(pair_ids), works


def _rack_sums(index: PathIndex) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per rack, the host pairs (all, >= 1 option, >= 2 options) it is a source or destination
    of: what its hosts being cut off takes out of the totals."""
    r = index.racks
    columns = []
    for column in (
        index.weight,
        index.weight * (index.working >= 1),
        index.weight * (index.working >= 2),
    ):
        square = column.reshape(r, r)
        columns.append(square.sum(axis=0) + square.sum(axis=1) - np.diag(square))
    return columns[0], columns[1], columns[2]


# Path entries counted at once by `single_failures`: bounds its temporaries to a few 100 MB.
_CHUNK = 2_000_000


def single_failures(index: PathIndex, progress: ProgressHook | None = None) -> FailureTable:
    """Every cable, every switch and (with more than one plane) every plane failed alone."""
    elements = index.elements
    counts = np.zeros((4, elements), dtype=np.int64)  # broken host/rack paths, lost 1, lost 2
    first = 0
    while first < elements:
        last = int(np.searchsorted(index.offsets, index.offsets[first] + _CHUNK, "right")) - 1
        last = min(max(last, first + 1), elements)
        counts[:, first:last] = _broken_counts(index, first, last)
        first = last
        if progress:
            progress("counting broken paths", first, elements)
    total = np.full(elements, int(index.weight.sum()), dtype=np.int64)
    keep_one = np.full(elements, int((index.weight * (index.working >= 1)).sum()), np.int64)
    keep_two = np.full(elements, int((index.weight * (index.working >= 2)).sum()), np.int64)
    lost_hosts = np.zeros(elements, dtype=np.int64)
    if index.planes == 1:  # a failed switch cuts its rack's hosts off
        rack_total, rack_one, rack_two = _rack_sums(index)
        element = index.cables + index.rack_switches[0]
        total[element] -= rack_total
        keep_one[element] -= rack_one
        keep_two[element] -= rack_two
        lost_hosts[element] = index.rack_hosts
    table = FailureTable(
        names=index.names,
        kinds=("cable",) * index.cables + ("switch",) * (elements - index.cables),
        host_pairs=total,
        lost_hosts=lost_hosts,
        broken_paths=counts[0],
        broken_switch_paths=counts[1],
        lost_all=counts[2],
        keep_one=keep_one - counts[2],  # a pair losing its last option is one losing all
        keep_two=keep_two - counts[3],
    )
    return _joined(table, plane_failures(index)) if index.planes > 1 else table


def _broken_counts(index: PathIndex, first: int, last: int) -> np.ndarray:
    """For elements first..last-1 alone: (host pair, option) paths broken, (rack pair, option)
    paths broken, host pairs losing every option, host pairs falling below two options."""
    offsets = index.offsets[first : last + 1] - index.offsets[first]
    pair = index.broken[index.offsets[first] : index.offsets[last]] // index.options
    # Within an element paths, so rack pairs, come in order: a run of one rack pair is the
    # options the element breaks for it.
    starts = np.ones(pair.size, dtype=bool)
    starts[1:] = pair[1:] != pair[:-1]
    starts[offsets[:-1][np.diff(offsets) > 0]] = True
    at = np.flatnonzero(starts)
    run = np.diff(np.r_[at, pair.size])
    element = np.searchsorted(offsets, at, side="right") - 1
    pair = pair[at]
    weight = index.weight[pair]
    before = index.working[pair]
    after = before - run
    size = last - first
    fell = (before >= 2) & (after < 2)
    return (
        np.stack(
            [
                np.bincount(element, weight * run, minlength=size),
                np.bincount(element, run, minlength=size),
                np.bincount(element[after == 0], weight[after == 0], minlength=size),
                np.bincount(element[fell], weight[fell], minlength=size),
            ]
        )
        .round()
        .astype(np.int64)
    )


def plane_failures(index: PathIndex) -> FailureTable:
    """Each plane failed whole: every host keeps its other planes."""
    rows = [_leftover(index, index.working_per_plane[p], None, 0) for p in range(index.planes)]
    return FailureTable(
        names=tuple(f"plane {p}" for p in range(index.planes)),
        kinds=("plane",) * index.planes,
        **{
            field: np.array([row[field] for row in rows], dtype=np.int64)
            for field in rows[0]
            if field not in ("names", "kinds")
        },
    )


def _joined(first: FailureTable, second: FailureTable) -> FailureTable:
    return FailureTable(
        names=first.names + second.names,
        kinds=first.kinds + second.kinds,
        **{
            field: np.concatenate([getattr(first, field), getattr(second, field)])
            for field in (
                "host_pairs",
                "lost_hosts",
                "broken_paths",
                "broken_switch_paths",
                "lost_all",
                "keep_one",
                "keep_two",
            )
        },
    )


def _leftover(
    index: PathIndex, broken: np.ndarray, failed_switches: np.ndarray | None, lost_hosts: int
) -> dict[str, int]:
    """What a failure set leaves, given the options it breaks per rack pair and the switches
    it fails (racks whose every switch failed leave the denominator)."""
    alive = np.ones(index.racks * index.racks, dtype=bool)
    if failed_switches is not None and failed_switches.size:
        dead = np.asarray(np.isin(index.rack_switches, failed_switches).all(axis=0))
        if dead.any():
            alive = ~(dead[:, None] | dead[None, :]).ravel()
            lost_hosts = int(index.rack_hosts[dead].sum())
    weight = np.where(alive, index.weight, 0)
    after = index.working - broken
    return {
        "host_pairs": int(weight.sum()),
        "lost_hosts": lost_hosts,
        "broken_paths": int((weight * broken).sum()),
        "broken_switch_paths": int(broken[alive].sum()),
        "lost_all": int((weight * ((index.working >= 1) & (after == 0))).sum()),
        "keep_one": int((weight * (after >= 1)).sum()),
        "keep_two": int((weight * (after >= 2)).sum()),
    }


def failed_together(index: PathIndex, elements: Sequence[int] | np.ndarray) -> dict[str, int]:
    """What failing these elements at once leaves (a random draw, or any chosen set)."""
    chosen = np.asarray(elements, dtype=np.int64)
    switches = chosen[chosen >= index.cables] - index.cables
    return _leftover(index, _broken_per_pair(index, chosen), switches, 0)


def pairs_losing_all(index: PathIndex, elements: Sequence[int] | np.ndarray) -> np.ndarray:
    """(n, 2) rack pairs (source, destination), with hosts on both ends still up, that these
    elements failed together leave without a working option; by source, then destination."""
    chosen = np.asarray(elements, dtype=np.int64)
    after = index.working - _broken_per_pair(index, chosen)
    lost = (index.working >= 1) & (after == 0) & (index.weight > 0)
    failed = chosen[chosen >= index.cables] - index.cables
    dead = np.asarray(np.isin(index.rack_switches, failed).all(axis=0))
    lost &= ~(dead[:, None] | dead[None, :]).ravel()
    pairs = np.flatnonzero(lost)
    return np.stack([pairs // index.racks, pairs % index.racks], axis=1)


def rack_name(index: PathIndex, rack: int) -> str:
    """A rack by its switches' names, one per plane: `leaf1`, or `a1/b1` with two planes."""
    return "/".join(index.names[index.cables + int(s)] for s in index.rack_switches[:, rack])


def elements_of(index: PathIndex, table: FailureTable, row: int) -> np.ndarray:
    """The elements a row of `single_failures` fails: one cable or switch, or a whole plane."""
    if row < index.elements:
        return np.array([row])
    plane = int(table.names[row].split()[-1])
    return index.cables + np.flatnonzero(index.switch_planes == plane)


def _broken_per_pair(index: PathIndex, chosen: np.ndarray) -> np.ndarray:
    """Per rack pair, the working options the chosen elements break together."""
    segments = [index.segment(int(e)) for e in chosen]
    paths = np.unique(np.concatenate(segments)) if segments else np.zeros(0, np.int64)
    return np.bincount(paths.astype(np.int64) // index.options, minlength=index.racks**2)


def random_pool(index: PathIndex, kind: str) -> np.ndarray:
    """The elements random failures draw from, ordered by name: a draw picks names, so it does
    not change when the fabric lists its cables in another order."""
    if kind not in RANDOM_KINDS:
        raise ValueError(f"random failures of {kind!r}: one of {', '.join(RANDOM_KINDS)}")
    first = 0 if kind in ("cables", "any") else index.cables
    last = index.cables if kind == "cables" else index.elements
    pool = np.arange(first, last)
    return pool[np.argsort(np.array(index.names[first:last]), kind="stable")]


def random_failures(
    index: PathIndex,
    k_values: Sequence[int],
    samples: int,
    seed: int,
    kind: str = "cables",
    progress: ProgressHook | None = None,
) -> list[RandomPoint]:
    """k failures drawn uniformly without replacement from the pool of `kind`, `samples` times
    per k. Draw j of a k is the same for any sample count above j."""
    pool = random_pool(index, kind)
    points = []
    done, steps = 0, len(k_values) * samples
    for k in k_values:
        if not 1 <= k <= len(pool):
            raise ValueError(f"k={k}: the fabric has {len(pool)} {kind} to fail")
        rng = stream(seed, f"failures.random.{kind}.k={k}")
        draws = []
        for _ in range(samples):
            draws.append(failed_together(index, pool[rng.choice(len(pool), k, replace=False)]))
            done += 1
            if progress:
                progress(f"random failures of {kind}", done, steps)
        points.append(_point(k, kind, draws))
    return points


def _point(k: int, kind: str, draws: list[dict[str, int]]) -> RandomPoint:
    """Mean and worst shares over the draws that left a host pair to count."""
    counted = [d for d in draws if d["host_pairs"]]
    broken = round(float(np.mean([d["broken_paths"] for d in draws])), 2) if draws else 0.0
    if not counted:  # no draws, or every draw cut every host off
        return RandomPoint(k, kind, len(draws), None, None, None, None, None, broken)

    def shares(column: str) -> np.ndarray:
        return np.array([d[column] / d["host_pairs"] for d in counted])

    one, two = shares("keep_one"), shares("keep_two")
    return RandomPoint(
        k=k,
        kind=kind,
        samples=len(draws),
        mean_keep_one=_rounded(one.mean()),
        worst_keep_one=_rounded(one.min()),
        mean_keep_two=_rounded(two.mean()),
        worst_keep_two=_rounded(two.min()),
        mean_lost_all=_rounded(shares("lost_all").mean()),
        mean_broken_paths=broken,
    )


# The kinds of single failure each random pool holds.
POOL_KINDS = {"cables": ("cable",), "switches": ("switch",), "any": ("cable", "switch")}


def single_point(table: FailureTable, pool: str) -> RandomPoint:
    """k = 1 from the exhaustive single failures of a pool (`cables`, `switches`, `any`,
    `planes`), every failure in it equally likely."""
    kinds = POOL_KINDS.get(pool, ("plane",))
    rows = [i for i, kind in enumerate(table.kinds) if kind in kinds]
    draws = [
        {
            "host_pairs": int(table.host_pairs[i]),
            "keep_one": int(table.keep_one[i]),
            "keep_two": int(table.keep_two[i]),
            "lost_all": int(table.lost_all[i]),
            "broken_paths": int(table.broken_paths[i]),
        }
        for i in rows
    ]
    return _point(1, pool, draws)


def worst(table: FailureTable, count: int) -> list[int]:
    """Rows of the `count` worst failures: most host pairs losing every layer, then fewest
    keeping two, then most broken paths (shares, so a switch's lost hosts do not flatter it);
    ties by name."""
    lost, two = table.share(table.lost_all), table.share(table.keep_two)
    broken = table.broken_paths / np.maximum(table.host_pairs, 1)
    order = sorted(
        range(len(table)),
        key=lambda i: (-np.nan_to_num(lost[i]), np.nan_to_num(two[i]), -broken[i], table.names[i]),
    )
    return order[:count]


def _rounded(value: float) -> float | None:
    """A share for JSON: six decimals, None where there was nothing to share."""
    return round(float(value), 6) if np.isfinite(value) else None
