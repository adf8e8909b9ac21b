"""Hashes of names, for choices that must not depend on where a thing sits in a list.

A compile stays stable under change when every random choice about a named thing (a cable, a
switch) is a function of its name: removing one cable then changes nothing about any other, and
reordering the inventory changes nothing at all (OPERATIONS.md, "Churn").
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

_MASK = (1 << 64) - 1
_DIGITS = re.compile(r"(\d+)")


def name_key(text: str) -> int:
    """A 64-bit key of a name: the same on every machine and in every Python process (the
    built-in `hash` of a str is salted per process)."""
    # Imported on first use (later ones are a dictionary lookup): loading OpenSSL's hashes is
    # a few milliseconds that a simulation drawing nothing by name need not pay at start-up.
    import hashlib

    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


def name_keys(names: Iterable[str]) -> np.ndarray:
    return np.fromiter((name_key(n) for n in names), dtype=np.uint64)


def mix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser over a uint64 array (wrapping arithmetic), as the crate's `mix64`."""
    x = x + np.uint64(0x9E37_79B9_7F4A_7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58_476D_1CE4_E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D0_49BB_1331_11EB)
    return x ^ (x >> np.uint64(31))


def salt(*parts: int | str) -> int:
    """One 64-bit salt for a named stream, e.g. salt("layer", seed, 3)."""
    return name_key("\x1f".join(str(p) for p in parts))


def unit_draws(keys: np.ndarray, stream: int) -> np.ndarray:
    """A uniform draw in [0, 1) per key, independent between streams and between keys."""
    mixed = mix64(keys ^ np.uint64(stream & _MASK))
    return (mixed >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


def stream(seed: int, name: str) -> np.random.Generator:
    """The random stream of the choice `name` (e.g. "analyze.pairs"), derived from `seed`.

    Every random choice draws from a stream of its own, so a knob changes only what it names:
    sampling more pairs does not change the permutation a throughput figure is measured on.
    """
    import hashlib

    key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little")
    return np.random.default_rng(np.random.SeedSequence([seed, key]))


def natural_key(name: str) -> tuple[str | int, ...]:
    """Sort key that orders `sf-2` before `sf-10`, as operators number their switches; the
    text between numbers is compared as text, so any two names compare."""
    parts = _DIGITS.split(name)
    return tuple(int(p) if i % 2 else p for i, p in enumerate(parts))


def plane_seed(seed: int, plane: int) -> int:
    """A per-plane seed (wiring or layers): plane 0 keeps `seed`, so a one-plane fabric and
    the first plane of many draw the same; the others derive theirs from (seed, plane)."""
    if plane == 0:
        return seed
    return int(np.random.SeedSequence([seed, plane]).generate_state(1, np.uint32)[0])
