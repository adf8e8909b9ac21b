"""Two-level orthogonal fat tree (k-OFT) from the projective plane PG(2, k-1)."""

from __future__ import annotations

import numpy as np

from .base import (
    GeneratedTopology,
    IntArray,
    ParameterSpec,
    TopologyParameterError,
    check_invariants,
    check_names,
    edge_list,
    finalize_edges,
    require_range,
    require_size,
)
from .galois import GaloisField, galois_field, is_prime_power, nearest_prime_powers

PARAMETERS = (
    ParameterSpec(
        "k", int, True, None, "k-1 a prime power; 1+k(k-1) switches per level, k hosts each"
    ),
)


def projective_points(q: int) -> IntArray:
    """Normalised homogeneous coordinates of PG(2, q): first non-zero coordinate equal to 1.

    Lines of PG(2, q) have the same normal form (by duality), so this also lists the lines.
    """
    rows = [(1, y, z) for y in range(q) for z in range(q)]
    rows += [(0, 1, z) for z in range(q)]
    rows.append((0, 0, 1))
    return np.array(rows, dtype=np.int64)


def point_line_incidence(field: GaloisField) -> IntArray:
    """Boolean matrix [point, line]: point P lies on line L iff P . L = 0 over GF(q)."""
    coords = projective_points(field.order)
    mul, add = field.mul_table, field.add_table
    prods = mul[coords[:, None, :], coords[None, :, :]]
    dot = add[add[prods[..., 0], prods[..., 1]], prods[..., 2]]
    return dot == 0


def build(params: dict[str, int | float], seed: int) -> GeneratedTopology:
    del seed  # deterministic construction
    k = require_range(params, "k", minimum=3, hint="k >= 3 with k-1 a prime power")
    q = k - 1
    # The size first: finding the prime powers near a k of 20 digits would take hours.
    require_size("k", 3 * (1 + k * (k - 1)))
    if not is_prime_power(q):
        below, above = nearest_prime_powers(q)
        candidates = f"{below + 1} or {above + 1}" if below is not None else f"{above + 1}"
        raise TopologyParameterError(
            "k", f"k-1={q} is not a prime power", f"k with k-1 a prime power, such as {candidates}"
        )
    rl = 1 + k * (k - 1)
    num = 3 * rl
    require_size("k", num)

    incidence = point_line_incidence(galois_field(q))
    point, line = np.nonzero(incidence)
    # L0 switch i and L2 switch i both attach to L1 switches of the lines through point i.
    u = np.concatenate([point, 2 * rl + point])
    v = np.concatenate([rl + line, rl + line])
    edges = finalize_edges(u, v, num)
    degrees = np.concatenate([np.full(rl, k), np.full(rl, 2 * k), np.full(rl, k)])
    check_invariants("oft", edges, num, expected_edges=2 * rl * k, degrees=degrees)

    names = [f"oft-l{level}-{i}" for level in range(3) for i in range(rl)]
    check_names(names)
    roles = ["l0"] * rl + ["l1"] * rl + ["l2"] * rl
    return GeneratedTopology(
        kind="oft",
        params={"k": k},
        switch_names=names,
        switch_roles=roles,
        edges=edge_list(edges),
        hosts_per_switch=[k] * rl + [0] * rl + [k] * rl,
    )
