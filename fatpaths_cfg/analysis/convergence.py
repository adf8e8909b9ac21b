"""Distributed adaptive routing in a two-level Clos(n, r, m): how many iterations until no link
carries more than p flows, for flows at 1/p of the link rate.

Two views of the same system (Zahavi et al., "Distributed Adaptive Routing Convergence to
Non-Blocking DCN Routing Assignments"; restated in docs/):

* the Last-Step Markov model: every output switch is either good or one move away from good;
  by symmetry the chain only needs U, the number of bad output switches, so its r+1 states
  replace the paper's 2^r binary states without changing the expected absorption time;
* the abstract iteration simulation of the paper's Algorithm 3: a permutation of flows, each
  output switch asks for one flow of its fullest incoming link to move, the input switch moves
  it to a random middle switch and swaps with a flow already there when that up-link is full.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from math import comb

import numpy as np

from fatpaths_cfg.fabric import Fabric


@dataclass(frozen=True)
class ClosShape:
    n: int  # hosts (flows) per input switch
    r: int  # input switches = output switches
    m: int  # middle switches
    p: int  # flows a link carries at full rate: each flow takes 1/p of a link

    @property
    def rearrangeable(self) -> bool:
        """m * p >= n: every permutation has a routing with at most p flows per link."""
        return self.m * self.p >= self.n


def _clamp(value: float) -> float:
    return min(1.0, max(0.0, value))


def last_step_probabilities(shape: ClosShape, bad: int) -> tuple[float, float]:
    """(B, C) with `bad` output switches bad: B = a good switch turns bad in one iteration,
    C = a bad switch turns good (equations 1-5 for p=1, 12-15 for p=2 of the paper).

    The paper writes C_ind for p=2 as U * 3/n * (m-t)/m; like its p=1 form (eq. 4) the induced
    move lands on this switch with probability U/r, which we use, keeping C a probability.
    """
    n, r, m = shape.n, shape.r, shape.m
    induced = bad / r
    if shape.p == 1:
        leave_good = induced
        improve = (m - n + 1) / m
        improve_induced = induced * (2 / n) * improve
    elif shape.p == 2:
        leave_good = induced * (n / 2 - 1) / m
        improve = 1 - (n / 2 - 2) / m
        improve_induced = induced * (3 / n) * _clamp(improve)
    else:
        raise ValueError(f"the Last-Step model is defined for p=1 and p=2, not p={shape.p}")
    improve, improve_induced = _clamp(improve), _clamp(improve_induced)
    recover = improve + improve_induced - improve * improve_induced
    return _clamp(leave_good), _clamp(recover)


def _binomial(count: int, probability: float) -> np.ndarray:
    k = np.arange(count + 1)
    coefficients = np.array([comb(count, int(i)) for i in k], dtype=float)
    return coefficients * probability**k * (1 - probability) ** (count - k)


def last_step_transition_matrix(shape: ClosShape) -> np.ndarray:
    """P[U, U'] over U = 0..r bad output switches; U = 0 is absorbing."""
    r = shape.r
    matrix = np.zeros((r + 1, r + 1))
    for bad in range(r + 1):
        leave_good, recover = last_step_probabilities(shape, bad)
        stay_bad = _binomial(bad, 1 - recover)  # how many of the bad ones stay bad
        turn_bad = _binomial(r - bad, leave_good)  # how many of the good ones turn bad
        matrix[bad] = np.convolve(stay_bad, turn_bad)
    return matrix


def expected_iterations(shape: ClosShape) -> float:
    """Expected iterations from every output switch bad (U = r) to none (the paper's start);
    infinite where m * p < n, since then no routing is free of bad links."""
    if not shape.rearrangeable:
        return math.inf
    matrix = last_step_transition_matrix(shape)
    transient = matrix[1:, 1:]
    steps = np.linalg.solve(np.eye(shape.r) - transient, np.ones(shape.r))
    return float(steps[-1])


@dataclass(frozen=True)
class SimulatedRun:
    iterations: int
    converged: bool  # False: stopped at the iteration cap with a bad link left


def random_permutation(shape: ClosShape, rng: random.Random) -> list[int]:
    destinations = list(range(shape.n * shape.r))
    rng.shuffle(destinations)
    return destinations


def worst_permutation(shape: ClosShape, rng: random.Random) -> list[int]:
    """Each output switch receives its n flows from n different input switches where r >= n,
    the hardest case the paper identifies (the inputs must coordinate without talking)."""
    n, r = shape.n, shape.r
    destinations = [0] * (n * r)
    offsets = rng.sample(range(r), r)
    for source_switch in range(r):
        for k in range(n):
            target_switch = (source_switch + offsets[k % r] + k) % r
            destinations[source_switch * n + k] = target_switch * n + k
    return destinations


def simulate_iterations(
    shape: ClosShape, destinations: list[int], rng: random.Random, max_iterations: int
) -> SimulatedRun:
    """Algorithm 3 of the paper on one permutation (destination host of each source host)."""
    n, m, p = shape.n, shape.m, shape.p
    flows = len(destinations)
    source_switch = [f // n for f in range(flows)]
    target_switch = [d // n for d in destinations]
    middle = _semi_random_assignment(shape, rng)
    up = [[0] * m for _ in range(shape.r)]
    # into[o][j]: flows on the link from middle j down to output switch o.
    into: list[list[set[int]]] = [[set() for _ in range(m)] for _ in range(shape.r)]
    for f in range(flows):
        up[source_switch[f]][middle[f]] += 1
        into[target_switch[f]][middle[f]].add(f)

    def move(f: int, j: int) -> None:
        into[target_switch[f]][middle[f]].discard(f)
        up[source_switch[f]][middle[f]] -= 1
        middle[f] = j
        into[target_switch[f]][j].add(f)
        up[source_switch[f]][j] += 1

    for iteration in range(max_iterations + 1):
        requests = []
        for links in into:
            fullest = max(links, key=len)
            if len(fullest) > p:
                requests.append(rng.choice(sorted(fullest)))
        if not requests:
            return SimulatedRun(iteration, True)
        if iteration == max_iterations:
            break
        rng.shuffle(requests)
        for f in requests:
            old = middle[f]
            new = rng.choice([j for j in range(m) if j != old]) if m > 1 else old
            if up[source_switch[f]][new] >= p:
                # The input switch never puts more than p flows on one up-link: swap instead.
                there = [
                    g for links in into for g in links[new] if source_switch[g] == source_switch[f]
                ]
                move(rng.choice(sorted(there)), old)
            move(f, new)
    return SimulatedRun(max_iterations, False)


def _semi_random_assignment(shape: ClosShape, rng: random.Random) -> list[int]:
    """Each input switch spreads its own flows at random, at most p per up-link where it can."""
    middle = []
    for _ in range(shape.r):
        slots = [j for j in range(shape.m) for _ in range(shape.p)]
        rng.shuffle(slots)
        while len(slots) < shape.n:  # m*p < n: not rearrangeable, some up-links overfill
            slots.append(rng.randrange(shape.m))
        middle.extend(slots[: shape.n])
    return middle


@dataclass(frozen=True)
class ConvergencePoint:
    shape: ClosShape
    model: float | None  # None where the model does not apply (p > 2)
    mean: float
    p95: float
    maximum: int
    unconverged: int
    permutations: int


def convergence_point(
    shape: ClosShape, permutations: int, seed: int, max_iterations: int, worst: bool = False
) -> ConvergencePoint:
    rng = random.Random(f"{seed}/{shape.n}/{shape.r}/{shape.m}/{shape.p}")
    draw = worst_permutation if worst else random_permutation
    runs = [
        simulate_iterations(shape, draw(shape, rng), rng, max_iterations)
        for _ in range(permutations)
    ]
    counts = np.array([run.iterations for run in runs])
    model = expected_iterations(shape) if shape.p in (1, 2) else None
    return ConvergencePoint(
        shape,
        model,
        float(counts.mean()),
        float(np.percentile(counts, 95)),
        int(counts.max()),
        sum(not run.converged for run in runs),
        permutations,
    )


def clos_shape(fabric: Fabric) -> tuple[int, int, int] | None:
    """(n, r, m) when the fabric is a two-level Clos: every host-carrying leaf links once to
    every middle switch, middles carry no hosts, leaves hold equal host counts, no other
    links. None otherwise."""
    hosts = [len(h) for h in fabric.hosts_of_switch]
    leaves = {s for s in range(fabric.nr) if hosts[s] > 0}
    middles = fabric.nr - len(leaves)
    pairs = {(int(a), int(b)) for a, b in fabric.edges}
    bipartite = all((a in leaves) != (b in leaves) for a, b in pairs)
    complete = len(pairs) == len(fabric.edges) == len(leaves) * middles
    if not (leaves and middles and bipartite and complete):
        return None
    counts = {hosts[s] for s in leaves}
    return (counts.pop(), len(leaves), middles) if len(counts) == 1 else None


def clos_advice(fabric: Fabric) -> tuple[str, str] | None:
    """(problem, what to change) when adaptive or flowlet re-routing on this fabric would not
    settle quickly: m*p < n (no routing without an overloaded link for some permutations) or
    flows at the full link rate (p = 1: iterations grow exponentially with r)."""
    shape = clos_shape(fabric)
    if shape is None or not fabric.hosts:
        return None
    n, r, m = shape
    link = min(link.speed_gbps for link in fabric.links)
    flow = min(h.pacing_gbps or h.speed_gbps for h in fabric.hosts)
    p = max(int(link // flow), 0) if flow > 0 else 0
    half = f"{link / 2:g}G"
    if m * p < n:
        needed = math.ceil(n / m)
        return (
            f"Clos(n={n}, r={r}, m={m}) with flows at {flow:g}G on {link:g}G links (p={p}): "
            f"m*p = {m * p} < n = {n}, so some permutations leave a link overloaded whatever "
            "adaptive routing does",
            f"shape hosts to {link / needed:g}G or less (defaults.host_flow_rate) or add "
            f"middle switches (m >= {math.ceil(n / max(p, 1))})",
        )
    if p < 2:
        return (
            f"Clos(n={n}, r={r}, m={m}) with flows at the full link rate (p=1): adaptive or "
            f"flowlet re-routing converges in a number of iterations exponential in r",
            f"shape hosts to half the link rate (defaults.host_flow_rate: {half}, p=2), "
            "which converges in a few iterations",
        )
    return None
