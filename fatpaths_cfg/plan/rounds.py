"""Update rounds that never loop, and their proof (OPERATIONS.md, section 2).

For one (layer, destination d) the routes form an in-tree towards d, old and new. A switch takes
its new route only after every switch on its new path already forwards on the new one: round r
changes the routes whose *new* distance to d is r. After every round, a packet at a switch not
yet updated follows old pointers (acyclic) until d or an updated switch, and from an updated
switch new pointers to d. Routes of switches and destinations that are new go first (round 0:
nothing sends to them yet), routes that disappear last (the cleanup round), with the cables:
new cables are up from round 0, removed ones stay up until the cleanup.

Every intermediate state is built as a table and walked for every (switch, destination) pair
before anything is pushed: the plan's proof. The same walk checks a state read back from the
switches (`walk_state`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fatpaths_cfg.plan.view import UNREACHABLE, RouteView
from fatpaths_cfg.stable_hash import natural_key

PREPARE = "prepare"
ROUTES = "routes"
CLEANUP = "cleanup"


@dataclass(frozen=True)
class RouteStep:
    """One switch's route towards one destination in one layer, from `old` to `new` next hop
    (switch names; None: no route)."""

    switch: str
    layer: int  # 1-based
    destination: str
    old: str | None
    new: str | None


@dataclass
class StateProof:
    """The walk of one state: every (layer, switch, destination) with a route."""

    walked: int
    loops: int
    blackholes: int
    witness: str = ""  # the first looping or blackholed path, by names

    @property
    def ok(self) -> bool:
        return not self.loops and not self.blackholes

    def to_json(self) -> dict[str, Any]:
        return {
            "walked": self.walked,
            "loops": self.loops,
            "blackholes": self.blackholes,
            "witness": self.witness,
        }


@dataclass
class Round:
    number: int
    kind: str  # PREPARE, ROUTES or CLEANUP
    steps: list[RouteStep]
    proof: StateProof | None = None  # of the state after this round

    @property
    def switches(self) -> list[str]:
        return sorted({step.switch for step in self.steps}, key=natural_key)

    def to_json(self) -> dict[str, Any]:
        return {
            "round": self.number,
            "kind": self.kind,
            "routes": len(self.steps),
            "switches": self.switches,
            "proof": None if self.proof is None else self.proof.to_json(),
        }


@dataclass
class UpdatePlan:
    """The rounds, the union of both fabrics' switches they are written over, and the tables
    of every state (for deploy, which checks what it reads back against them)."""

    names: list[str]
    rounds: list[Round]
    states: list[np.ndarray] = field(default_factory=list)  # [layer, switch, dest] per round

    @property
    def proven(self) -> bool:
        return all(r.proof is not None and r.proof.ok for r in self.rounds)

    def failed_round(self) -> Round | None:
        return next((r for r in self.rounds if r.proof is not None and not r.proof.ok), None)


def _union_tables(
    view: RouteView, names: list[str], layers: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The view's next hops and distances over the union of names, and its cables as a
    union adjacency ([layer-independent] nr x nr)."""
    where = {name: i for i, name in enumerate(names)}
    to_union = np.array([where[n] for n in view.switches] + [-1], dtype=np.int64)
    size = len(names)
    hops = np.full((layers, size, size), -1, dtype=np.int64)
    dist = np.full((layers, size, size), UNREACHABLE, dtype=np.int64)
    rows = to_union[:-1]
    for layer in range(min(layers, view.layer_count)):
        table = view.next_hop[layer].astype(np.int64)
        hops[layer][np.ix_(rows, rows)] = to_union[table]
        dist[layer][np.ix_(rows, rows)] = view.dist[layer]
    cables = np.zeros((size, size), dtype=bool)
    ends = rows[view.ends] if len(view.ends) else np.zeros((0, 2), dtype=np.int64)
    cables[ends[:, 0], ends[:, 1]] = True
    cables[ends[:, 1], ends[:, 0]] = True
    return hops, dist, cables


def walk_state(
    hops: np.ndarray,
    cables: np.ndarray,
    expected: np.ndarray,
    names: list[str],
    every: list[str] | None = None,
) -> StateProof:
    """Walk every (layer, switch, destination) of a state: `hops[layer, s, d]` the next hop
    (-1 none), `cables` the cables that are up, `expected[layer, s, d]` where a route must exist.

    A walk loops when it never reaches d; it is blackholed when it meets a switch with no route
    to d, or a next hop across no cable that is up. Pointer doubling walks all pairs at once:
    log2(switches) rounds of indexing over (switches x switches) tables. `every`, when given,
    receives a line per looping or blackholed (layer, switch, destination).
    """
    layers, size, _ = hops.shape
    hole = size  # a sink: a switch with no route, or a dead cable, forwards into it
    columns = np.arange(size)[None, :]
    rows = np.arange(size)[:, None]
    walked = loops = blackholes = 0
    witness = ""
    for layer in range(layers):
        table = hops[layer]
        start = (table >= 0) | expected[layer]
        np.fill_diagonal(start, False)
        step = np.where(table >= 0, table, hole)
        dead = (table >= 0) & ~cables[rows, np.where(table >= 0, table, 0)]
        step = np.where(dead, hole, step)
        np.fill_diagonal(step, np.arange(size))  # arrived walks stay at their destination
        jump = np.vstack([step, np.full((1, size), hole)])
        for _ in range(max(1, int(np.ceil(np.log2(size + 1))) + 1)):
            jump = np.vstack([jump[jump[:-1], columns], np.full((1, size), hole)])
        end = jump[:-1]
        arrived = end == np.arange(size)[None, :]
        holed = (end == hole) & start
        looped = ~arrived & ~holed & start
        walked += int(start.sum())
        loops += int(looped.sum())
        blackholes += int(holed.sum())
        if every is not None:
            for kind, mask in (("loop", looped), ("blackhole", holed)):
                for s, d in zip(*np.nonzero(mask), strict=True):
                    path = _path(step, int(s), int(d), names)
                    every.append(f"layer {layer + 1} {names[s]} -> {names[d]}: {kind} {path}")
        if not witness and (looped.any() or holed.any()):
            kind = "loop" if looped.any() else "blackhole"
            s, d = (int(x[0]) for x in np.nonzero(looped if looped.any() else holed))
            witness = f"layer {layer + 1} towards {names[d]}: {kind} " + _path(step, s, d, names)
    return StateProof(walked, loops, blackholes, witness)


def _path(step: np.ndarray, s: int, d: int, names: list[str]) -> str:
    hole = step.shape[0]
    seen: list[int] = [s]
    node = s
    while node != d:
        node = int(step[node, d])
        if node == hole:
            return " -> ".join(names[n] for n in seen) + " -> (no route)"
        if node in seen:
            return " -> ".join(names[n] for n in [*seen, node])
        seen.append(node)
    return " -> ".join(names[n] for n in seen)


def update_rounds(old: RouteView, new: RouteView) -> UpdatePlan:
    """The rounds from OLD to NEW, each state after a round walked."""
    names = sorted(set(old.switches) | set(new.switches), key=natural_key)
    layers = max(old.layer_count, new.layer_count)
    old_hops, _, old_cables = _union_tables(old, names, layers)
    new_hops, new_dist, new_cables = _union_tables(new, names, layers)
    in_old = np.array([n in old.index for n in names])
    changed = old_hops != new_hops
    fresh = ~in_old[None, :, None] | ~in_old[None, None, :]  # switch or destination is new
    removal = changed & (new_hops < 0)
    prepare = changed & ~removal & fresh
    moving = changed & ~removal & ~fresh
    top = int(new_dist[moving].max(initial=0))
    plan = UpdatePlan(names, [])
    state = old_hops.copy()
    both = (old_hops >= 0) & (new_hops >= 0)
    during = old_cables | new_cables

    def steps(mask: np.ndarray) -> list[RouteStep]:
        found = []
        for layer, s, d in zip(*np.nonzero(mask), strict=True):
            before, after = int(old_hops[layer, s, d]), int(new_hops[layer, s, d])
            found.append(
                RouteStep(
                    names[s],
                    int(layer) + 1,
                    names[d],
                    names[before] if before >= 0 else None,
                    names[after] if after >= 0 else None,
                )
            )
        return found

    def apply(number: int, kind: str, mask: np.ndarray, cables: np.ndarray) -> None:
        if kind != CLEANUP and not mask.any():
            return  # nothing to push; the state is the previous one, already proven
        state[mask] = new_hops[mask]
        # While the update runs every route of OLD and NEW must hold; at the end, NEW's.
        expected = both if kind != CLEANUP else new_hops >= 0
        proof = walk_state(state, cables, expected, names)
        plan.rounds.append(Round(number, kind, steps(mask), proof))
        plan.states.append(state.copy())

    apply(0, PREPARE, prepare, during)
    for number in range(1, top + 1):
        apply(number, ROUTES, moving & (new_dist == number), during)
    apply(top + 1, CLEANUP, removal, new_cables)
    return plan
