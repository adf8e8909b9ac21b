"""Shared types and helpers of the topology generators."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]

SWITCH_NAME_PATTERN = re.compile(r"^[a-z][a-z0-9-]*$")

# Generators build dense numpy arrays; this keeps a typo such as q=1000 from exhausting memory
# instead of failing with a parameter error.
MAX_SWITCHES = 200_000
# Hosts a generated switch may carry: beyond any switch's ports, and low enough that a typo
# (`p=10000000000`) is refused at once rather than written out host by host.
MAX_HOSTS_PER_SWITCH = 1024


@dataclass(frozen=True)
class GeneratedTopology:
    kind: str
    params: dict[str, int | float]
    switch_names: list[str]
    switch_roles: list[str]
    edges: list[tuple[int, int]]
    hosts_per_switch: list[int]

    def __post_init__(self) -> None:
        n = len(self.switch_names)
        if len(self.switch_roles) != n or len(self.hosts_per_switch) != n:
            raise ValueError("switch_names, switch_roles and hosts_per_switch differ in length")

    @property
    def num_switches(self) -> int:
        return len(self.switch_names)

    @property
    def num_hosts(self) -> int:
        return sum(self.hosts_per_switch)

    def degrees(self) -> list[int]:
        """Switch-to-switch degree (network radix used) of every switch."""
        return degree_array(self.edges, self.num_switches).tolist()


class TopologyParameterError(ValueError):
    """A parameter is missing, unknown, of the wrong type, out of range or inconsistent."""

    def __init__(self, field: str, message: str, hint: str) -> None:
        super().__init__(f"{field}: {message} (expected {hint})")
        self.field = field
        self.message = message
        self.hint = hint


@dataclass(frozen=True)
class ParameterSpec:
    name: str
    kind: type
    required: bool
    default: int | float | None
    help: str


def degree_array(edges: Iterable[tuple[int, int]] | IntArray, num_switches: int) -> IntArray:
    arr = np.asarray(list(edges) if not isinstance(edges, np.ndarray) else edges, dtype=np.int64)
    if arr.size == 0:
        return np.zeros(num_switches, dtype=np.int64)
    return np.bincount(arr.reshape(-1), minlength=num_switches).astype(np.int64)


def finalize_edges(u: IntArray, v: IntArray, num_switches: int) -> IntArray:
    """Canonical edge array: rows (lo, hi) with lo < hi, sorted, duplicates merged.

    Generators may emit each undirected edge from both endpoints; merging here keeps them simple.
    """
    u = np.asarray(u, dtype=np.int64).reshape(-1)
    v = np.asarray(v, dtype=np.int64).reshape(-1)
    if np.any(u == v):
        raise AssertionError("generator produced a self loop")
    lo = np.minimum(u, v)
    hi = np.maximum(u, v)
    # Sorted, then each key unlike its predecessor: what np.unique returns for integers,
    # without its first call importing numpy.ma (a fifth of a small simulation's start-up).
    keys = np.sort(lo * num_switches + hi)
    keys = keys[np.concatenate((keys[:1] == keys[:1], keys[1:] != keys[:-1]))]
    return np.stack([keys // num_switches, keys % num_switches], axis=1)


def edge_list(edges: IntArray) -> list[tuple[int, int]]:
    return [(int(a), int(b)) for a, b in edges.tolist()]


def is_connected(num_switches: int, edges: IntArray) -> bool:
    """Connectivity without paying scipy's import time for a check run on every randomised
    generation (see `island_labels`)."""
    if num_switches <= 1:
        return True
    return bool(np.all(island_labels(num_switches, edges) == 0))


def island_labels(num_switches: int, edges: IntArray) -> IntArray:
    """Per switch, the smallest switch index of its island (connected component).

    Min-label propagation with pointer jumping: about log(diameter) rounds on the low-diameter
    graphs fatpaths builds, and no scipy import (a quarter of a second) for the commands that
    need nothing else from it.
    """
    labels = np.arange(num_switches, dtype=np.int64)
    if len(edges) == 0:
        return labels
    u, v = edges[:, 0], edges[:, 1]
    while True:
        previous = labels.copy()
        np.minimum.at(labels, u, labels[v])
        np.minimum.at(labels, v, labels[u])
        labels = labels[labels]
        if np.array_equal(labels, previous):
            return labels


def check_invariants(
    kind: str,
    edges: IntArray,
    num_switches: int,
    expected_edges: int | None = None,
    degrees: IntArray | int | None = None,
) -> None:
    """Fail loudly if a generator broke a closed form; that is a bug, not a user error."""
    if expected_edges is not None and len(edges) != expected_edges:
        raise AssertionError(f"{kind}: {len(edges)} edges, closed form says {expected_edges}")
    if degrees is not None:
        actual = degree_array(edges, num_switches)
        if not np.array_equal(actual, np.broadcast_to(degrees, actual.shape)):
            raise AssertionError(f"{kind}: switch degrees differ from the closed form")


def require_range(
    params: dict[str, int | float],
    name: str,
    minimum: int | None = None,
    maximum: int | None = None,
    hint: str | None = None,
) -> int:
    value = int(params[name])
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        if hint is None:
            if maximum is None:
                hint = f"an integer >= {minimum}"
            elif minimum is None:
                hint = f"an integer <= {maximum}"
            else:
                hint = f"an integer in {minimum}..{maximum}"
        raise TopologyParameterError(name, f"{name}={value} is out of range", hint)
    return value


@dataclass(frozen=True)
class SwitchBudget:
    """A lower switch cap set by a caller that knows what each switch will cost it (the
    simulator's switch-pair tables), checked before any edge is built."""

    switches: int
    # Says what the cap is derived from, e.g. "simulating it needs about 13 GB, 9 GB available".
    why: Callable[[int], str]
    override: str


_budget: ContextVar[SwitchBudget | None] = ContextVar("switch_budget", default=None)


@contextmanager
def switch_budget(budget: SwitchBudget | None) -> Iterator[None]:
    token = _budget.set(budget)
    try:
        yield
    finally:
        _budget.reset(token)


def require_size(field: str, num_switches: int) -> None:
    if num_switches > MAX_SWITCHES:
        raise TopologyParameterError(
            field,
            f"the topology would have {num_switches} switches",
            f"a value giving at most {MAX_SWITCHES} switches",
        )
    budget = _budget.get()
    if budget is not None and num_switches > budget.switches:
        raise TopologyParameterError(
            field,
            f"the topology would have {num_switches} switches: {budget.why(num_switches)}",
            f"a value giving at most {budget.switches} switches, or {budget.override}",
        )


def host_count(params: dict[str, int | float], name: str, default: int) -> int:
    """Fill in a derived default for a hosts-per-switch parameter and range-check it."""
    if params.get(name) is None:
        params[name] = default
    return require_range(params, name, minimum=1, maximum=MAX_HOSTS_PER_SWITCH)


def check_names(names: list[str]) -> None:
    bad = next((n for n in names if not SWITCH_NAME_PATTERN.match(n)), None)
    if bad is not None:
        raise AssertionError(f"generated switch name {bad!r} is not a safe name")
