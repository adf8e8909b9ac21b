"""Slim Fly, the McKay-Miller-Siran (MMS) diameter-2 graph (docs/topologies.md, Slim Fly)."""

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
    host_count,
    require_size,
)
from .galois import galois_field, is_prime_power, nearest_prime_powers

PARAMETERS = (
    ParameterSpec("q", int, True, None, "prime power q >= 3; Nr = 2q^2 switches"),
    ParameterSpec("p", int, False, None, "hosts per switch (default ceil(k'/2))"),
)


def slimfly_delta(q: int) -> tuple[int, int]:
    """(w, delta) with q = 4w + delta and delta in {-1, 0, 1}."""
    for delta in (-1, 0, 1):
        if (q - delta) % 4 == 0:
            return (q - delta) // 4, delta
    raise ValueError(f"q={q} is not of the form 4w+delta with delta in {{-1, 0, 1}}")


def network_radix(q: int) -> int:
    _, delta = slimfly_delta(q)
    return (3 * q - delta) // 2


def generator_exponents(q: int) -> tuple[list[int], list[int]]:
    """Exponents e of xi**e forming the generator sets X and X' of docs/topologies.md, verbatim."""
    w, delta = slimfly_delta(q)
    if delta == 1:
        x = [e for e in range(0, q - 2) if e % 2 == 0]
        x_prime = [e for e in range(1, q - 1) if e % 2 == 1]
    elif delta == 0:
        x = [e for e in range(0, q - 1) if e % 2 == 0]
        x_prime = [e for e in range(1, q) if e % 2 == 1]
    else:
        x = [e for e in range(0, 2 * w - 1) if e % 2 == 0]
        x += [e for e in range(2 * w - 1, 4 * w - 2) if e % 2 == 1]
        x_prime = [e for e in range(1, 2 * w) if e % 2 == 1]
        x_prime += [e for e in range(2 * w, 4 * w - 1) if e % 2 == 0]
    return x, x_prime


def _validate_q(q: int) -> None:
    if q < 3 or not is_prime_power(q):
        below, above = nearest_prime_powers(q, minimum=3)
        examples = f"{below} or {above}" if below is not None else f"{above}"
        # q=2 is a prime power but 2 = 4w+2 fits none of the three MMS cases.
        reason = "is not a prime power" if not is_prime_power(q) else "is not 4w+delta, |delta|<=1"
        raise TopologyParameterError(
            "q", f"q={q} {reason}", f"a prime power q >= 3 such as {examples}"
        )


def build(params: dict[str, int | float], seed: int) -> GeneratedTopology:
    del seed  # deterministic construction
    q = int(params["q"])
    # The size first: finding the prime powers near a q of 20 digits (for the hint) would
    # take hours.
    if q >= 3:
        require_size("q", 2 * q * q)
    _validate_q(q)
    k_net = network_radix(q)
    p = host_count(params, "p", (k_net + 1) // 2)

    field = galois_field(q)
    exps_x, exps_xp = generator_exponents(q)
    gen_x = field.exp_table[np.array(exps_x, dtype=np.int64) % (q - 1)]
    gen_xp = field.exp_table[np.array(exps_xp, dtype=np.int64) % (q - 1)]

    elems = np.arange(q, dtype=np.int64)
    # All (a, b) pairs, a = x or m (major), b = y or c, in switch index order.
    a = np.repeat(elems, q)
    b = np.tile(elems, q)
    offset = q * q

    def local_edges(generators: IntArray, base: int) -> tuple[IntArray, IntArray]:
        # (a, b) ~ (a, b') iff b - b' is a generator, i.e. b' = b - g.
        other = field.sub_table[b[:, None], generators[None, :]]
        u = np.broadcast_to((base + a * q + b)[:, None], other.shape)
        v = base + a[:, None] * q + other
        return u.reshape(-1), v.reshape(-1)

    u0, v0 = local_edges(gen_x, 0)
    u1, v1 = local_edges(gen_xp, offset)
    # (0, x, y) ~ (1, m, c) iff y = m*x + c; enumerate all (m, c) and every x.
    m_idx, c_idx = a, b
    y = field.add_table[field.mul_table[m_idx[:, None], elems[None, :]], c_idx[:, None]]
    u2 = (elems[None, :] * q + y).reshape(-1)
    v2 = np.broadcast_to((offset + m_idx * q + c_idx)[:, None], y.shape).reshape(-1)

    num = 2 * q * q
    edges = finalize_edges(np.concatenate([u0, u1, u2]), np.concatenate([v0, v1, v2]), num)
    check_invariants("slimfly", edges, num, expected_edges=num * k_net // 2, degrees=k_net)

    names = [f"sf-0-{x}-{yy}" for x in range(q) for yy in range(q)]
    names += [f"sf-1-{m}-{c}" for m in range(q) for c in range(q)]
    check_names(names)
    return GeneratedTopology(
        kind="slimfly",
        params={"q": q, "p": p},
        switch_names=names,
        switch_roles=["switch"] * num,
        edges=edge_list(edges),
        hosts_per_switch=[p] * num,
    )
