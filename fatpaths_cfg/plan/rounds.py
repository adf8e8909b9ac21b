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
from fatpaths_cfg.support.stable_hash import natural_key

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
    # OLD's and NEW's next hops over `names` ([layer, switch, dest], -1 none), and the cables
    # up while the rounds run (OLD's and NEW's): deploy checks what it reads back against them.
    old_hops: np.ndarray
    new_hops: np.ndarray
    cables: np.ndarray
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
    hops = np.full((layers, size, size), -1, dtype=np.int32)
    dist = np.full((layers, size, size), UNREACHABLE, dtype=np.int16)
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
    destinations: np.ndarray | None = None,
) -> StateProof:
    """Walk every (layer, switch, destination) of a state: `hops[layer, s, d]` the next hop
    (-1 none), `cables` the cables that are up, `expected[layer, s, d]` where a route must exist.

    A walk loops when it never reaches d; it is blackholed when it meets a switch with no route
    to d, or a next hop across no cable that is up. Pointer doubling walks all pairs at once:
    log2(switches) rounds of indexing over (switches x destinations) tables. `every`, when
    given, receives a line per looping or blackholed (layer, switch, destination);
    `destinations` ([layer, d] bool) limits the walk to those columns: walks towards d depend on
    column d alone, so a state that changed a few columns need not walk the others again.
    """
    layers, size, _ = hops.shape
    hole = size  # a sink: a switch with no route, or a dead cable, forwards into it
    rows = np.arange(size)[:, None]
    doublings = max(1, int(np.ceil(np.log2(size + 1))) + 1)
    walked = loops = blackholes = 0
    witness = ""
    for layer in range(layers):
        cols = np.arange(size) if destinations is None else np.flatnonzero(destinations[layer])
        if not len(cols):
            continue
        width = np.arange(len(cols))
        table = hops[layer][:, cols]
        start = (table >= 0) | expected[layer][:, cols]
        start[cols, width] = False
        routed = table >= 0
        step = np.where(routed, table, hole).astype(np.int32)
        step[routed & ~cables[rows, np.where(routed, table, 0)]] = hole
        step[cols, width] = cols  # arrived walks stay at their destination
        jump = np.full((size + 1, len(cols)), hole, dtype=np.int32)
        jump[:size] = step
        for _ in range(doublings):
            jump[:size] = jump[jump[:size], width[None, :]]
        end = jump[:size]
        arrived = end == cols[None, :]
        holed = (end == hole) & start
        looped = ~arrived & ~holed & start
        walked += int(start.sum())
        loops += int(looped.sum())
        blackholes += int(holed.sum())
        if not (looped.any() or holed.any()):
            continue
        full_step = np.full((size, size), hole, dtype=np.int32)
        full_step[:, cols] = step
        if every is not None:
            for kind, mask in (("loop", looped), ("blackhole", holed)):
                for s, j in zip(*np.nonzero(mask), strict=True):
                    d = int(cols[j])
                    path = _path(full_step, int(s), d, names)
                    every.append(f"layer {layer + 1} {names[s]} -> {names[d]}: {kind} {path}")
        if not witness:
            kind = "loop" if looped.any() else "blackhole"
            s, j = (int(x[0]) for x in np.nonzero(looped if looped.any() else holed))
            d = int(cols[j])
            witness = f"layer {layer + 1} towards {names[d]}: {kind} " + _path(
                full_step, s, d, names
            )
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
    plan = UpdatePlan(names, [], old_hops, new_hops, old_cables | new_cables)
    state = old_hops.copy()
    both = (old_hops >= 0) & (new_hops >= 0)
    during = plan.cables

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

    walked_all = [False]

    def apply(number: int, kind: str, mask: np.ndarray, cables: np.ndarray) -> None:
        if kind != CLEANUP and not mask.any():
            return  # nothing to push; the state is the previous one, already proven
        state[mask] = new_hops[mask]
        # While the update runs every route of OLD and NEW must hold; at the end, NEW's.
        expected = both if kind != CLEANUP else new_hops >= 0
        # The first state and the last (other cables) are walked whole; in between, a round
        # changes the walks towards the destinations it touched only.
        columns = None if kind == CLEANUP or not walked_all[0] else np.any(mask, axis=1)
        walked_all[0] = True
        proof = walk_state(state, cables, expected, names, destinations=columns)
        plan.rounds.append(Round(number, kind, steps(mask), proof))
        plan.states.append(state.copy())

    apply(0, PREPARE, prepare, during)
    for number in range(1, top + 1):
        apply(number, ROUTES, moving & (new_dist == number), during)
    apply(top + 1, CLEANUP, removal, new_cables)
    return plan
