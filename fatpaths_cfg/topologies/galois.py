"""Finite-field arithmetic GF(p^m) for the algebraic topologies (Slim Fly, OFT).

Elements are the integers 0..q-1: the base-p digits of an integer are the coefficients of a
polynomial over GF(p) reduced modulo a primitive polynomial. Operations are precomputed as q x q
lookup tables so that generators can index them with whole numpy arrays at once.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]


def prime_power(n: int) -> tuple[int, int] | None:
    """Return (p, m) with n == p**m and p prime, or None if n is not a prime power."""
    if n < 2:
        return None
    for p in range(2, int(n**0.5) + 1):
        if n % p == 0:
            m = 0
            while n % p == 0:
                n //= p
                m += 1
            return (p, m) if n == 1 else None
    return n, 1


def is_prime_power(n: int) -> bool:
    return prime_power(n) is not None


def nearest_prime_powers(n: int, minimum: int = 2) -> tuple[int | None, int]:
    """The largest prime power below n (None if there is none >= minimum) and the smallest above.

    Used to build error hints that suggest a valid neighbouring value.
    """
    below = next((c for c in range(n - 1, minimum - 1, -1) if is_prime_power(c)), None)
    above = max(n + 1, minimum)
    while not is_prime_power(above):
        above += 1
    return below, above


def _powers_of_x(p: int, m: int, low_coeffs: list[int]) -> list[int] | None:
    """Successive powers x^0..x^(q-2) modulo x^m + sum(low_coeffs[i] x^i), as element integers.

    Returns None unless x has multiplicative order exactly q-1. That test alone proves the
    polynomial primitive: a reducible modulus gives a ring whose unit group has fewer than
    q-1 elements, so no element could have q-1 distinct powers.
    """
    q = p**m
    weights = [p**i for i in range(m)]
    digits = [1] + [0] * (m - 1)
    seen: list[int] = []
    seen_set: set[int] = set()
    for _ in range(q - 1):
        value = sum(d * w for d, w in zip(digits, weights, strict=True))
        if value in seen_set or value == 0:
            return None
        seen.append(value)
        seen_set.add(value)
        top = digits[-1]
        shifted = [0, *digits[:-1]]
        digits = [(shifted[i] - top * low_coeffs[i]) % p for i in range(m)]
    back_to_one = digits == [1] + [0] * (m - 1)
    return seen if back_to_one else None


def _exponent_table(p: int, m: int) -> list[int]:
    """Powers of a primitive element, found deterministically (smallest candidate first)."""
    q = p**m
    if m == 1:
        for g in range(1, p):
            residues = [pow(g, e, p) for e in range(p - 1)]
            if len(set(residues)) == p - 1:
                return residues
        raise AssertionError(f"GF({p}) has no primitive root")  # unreachable for prime p
    for code in range(q):
        low = [(code // p**i) % p for i in range(m)]
        if low[0] == 0:
            continue  # divisible by x: reducible
        powers = _powers_of_x(p, m, low)
        if powers is not None:
            return powers
    raise AssertionError(f"no primitive polynomial of degree {m} over GF({p})")  # unreachable


class GaloisField:
    """GF(q) with lookup tables; build it through `galois_field(q)` to share the tables."""

    def __init__(self, order: int) -> None:
        factor = prime_power(order)
        if factor is None:
            raise ValueError(f"{order} is not a prime power")
        self.order = order
        self.characteristic, self.degree = factor
        p, m, q = self.characteristic, self.degree, order

        weights = p ** np.arange(m, dtype=np.int64)
        elements = np.arange(q, dtype=np.int64)
        digits = (elements[:, None] // weights[None, :]) % p
        digit_sum = (digits[:, None, :] + digits[None, :, :]) % p
        self.add_table: IntArray = (digit_sum @ weights).astype(np.int64)
        self.neg: IntArray = ((-digits) % p) @ weights
        self.sub_table: IntArray = self.add_table[:, self.neg]

        self.exp_table: IntArray = np.array(_exponent_table(p, m), dtype=np.int64)
        self.log_table: IntArray = np.full(q, -1, dtype=np.int64)
        self.log_table[self.exp_table] = np.arange(q - 1, dtype=np.int64)
        self.primitive = int(self.exp_table[1]) if q > 2 else 1

        logs = self.log_table
        log_sum = (logs[:, None] + logs[None, :]) % (q - 1)
        mul = self.exp_table[log_sum]
        mul[0, :] = 0
        mul[:, 0] = 0
        self.mul_table: IntArray = mul.astype(np.int64)

    def power(self, exponent: int) -> int:
        """xi**exponent for the primitive element xi."""
        return int(self.exp_table[exponent % (self.order - 1)])


@lru_cache(maxsize=32)
def galois_field(order: int) -> GaloisField:
    return GaloisField(order)
