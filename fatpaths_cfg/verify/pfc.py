"""Assigning layers to lossless PFC priorities so that no priority can deadlock.

Packets of one priority share buffers, so the channel dependency graph (CDG) that matters is
the union of the CDGs of the layers mapped to that priority. A layer whose own CDG is cyclic can
never be lossless; cycle-free layers may still form a cycle together, which is why the union is
checked, not each layer alone. Switches offer 8 priorities and usually 2 lossless ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fatpaths_cfg.verify.deadlock import is_acyclic

DEFAULT_LOSSLESS_CLASSES = 2
# The PFC priorities handed out, in order: 3 and 4 are what RoCE deployments conventionally
# make lossless, so a two-class plan lands where switch defaults already expect it.
PFC_PRIORITIES: tuple[int, ...] = (3, 4, 2, 5, 1, 6, 0, 7)
# Above this many layers the exact partition search (Bell-number growth) is not attempted.
EXACT_SEARCH_MAX_LAYERS = 12


@dataclass(frozen=True)
class PriorityClass:
    priority: int  # the PFC priority (0..7) the layers' traffic is marked with
    layers: tuple[int, ...]  # layer numbers (1-based)


@dataclass(frozen=True)
class PfcPlan:
    max_classes: int
    cycle_free_layers: tuple[int, ...]
    cyclic_layers: tuple[int, ...]
    classes: tuple[PriorityClass, ...] | None  # None: no assignment within max_classes exists
    method: str  # "greedy", "exact", or "none"
    reason: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def feasible(self) -> bool:
        return self.classes is not None

    def to_json(self) -> dict[str, Any]:
        return {
            "max_lossless_classes": self.max_classes,
            "cycle_free_layers": list(self.cycle_free_layers),
            "cyclic_layers": list(self.cyclic_layers),
            "feasible": self.feasible,
            "method": self.method,
            "classes": None
            if self.classes is None
            else [{"priority": c.priority, "layers": list(c.layers)} for c in self.classes],
            "reason": self.reason,
        }


class _UnionOracle:
    """Answers "is the union CDG of these layers acyclic?", remembering every answer."""

    def __init__(
        self, dependencies: Mapping[int, np.ndarray], cycle_free: Mapping[int, bool]
    ) -> None:
        self.dependencies = dependencies
        self.cache = {frozenset([layer]): free for layer, free in cycle_free.items()}

    def acyclic(self, layers: frozenset[int]) -> bool:
        if layers not in self.cache:
            parts = [self.dependencies[n] for n in sorted(layers)]
            union = np.concatenate(parts) if parts else np.zeros((0, 2), np.int64)
            self.cache[layers] = is_acyclic(union)
        return self.cache[layers]


def _first_fit(order: list[int], oracle: _UnionOracle, limit: int) -> list[list[int]] | None:
    classes: list[list[int]] = []
    for layer in order:
        for members in classes:
            if oracle.acyclic(frozenset([*members, layer])):
                members.append(layer)
                break
        else:
            if len(classes) == limit:
                return None
            classes.append([layer])
    return classes


def _exact(order: list[int], oracle: _UnionOracle, limit: int) -> list[list[int]] | None:
    """Backtracking over set partitions; a layer opens at most one new class (no symmetric
    duplicates), and a class is abandoned as soon as its union turns cyclic."""
    classes: list[list[int]] = []

    def place(position: int) -> bool:
        if position == len(order):
            return True
        layer = order[position]
        for members in classes:
            if oracle.acyclic(frozenset([*members, layer])):
                members.append(layer)
                if place(position + 1):
                    return True
                members.pop()
        if len(classes) < limit:
            classes.append([layer])
            if place(position + 1):
                return True
            classes.pop()
        return False

    return classes if place(0) else None


def assign_pfc_classes(
    dependencies: Mapping[int, np.ndarray],
    max_classes: int = DEFAULT_LOSSLESS_CLASSES,
    known_cycle_free: Mapping[int, bool] | None = None,
) -> PfcPlan:
    """Map every layer (number -> its CDG edges) to at most `max_classes` lossless priorities
    such that each priority's union CDG is acyclic, or explain why that is impossible.
    `known_cycle_free` passes verdicts on single layers already known (the deadlock analysis)."""
    if not 1 <= max_classes <= len(PFC_PRIORITIES):
        raise ValueError(f"max_classes must be in 1..{len(PFC_PRIORITIES)}, got {max_classes}")
    oracle = _UnionOracle(dependencies, known_cycle_free or {})
    numbers = sorted(dependencies)
    cycle_free = tuple(n for n in numbers if oracle.acyclic(frozenset([n])))
    cyclic = tuple(n for n in numbers if n not in cycle_free)
    if cyclic:
        return PfcPlan(
            max_classes,
            cycle_free,
            cyclic,
            None,
            "none",
            f"layers {', '.join(map(str, cyclic))} have cyclic dependency graphs on their own, so "
            "no lossless priority can carry them (compile with `routing.acyclic: true`, or "
            "carry them lossy)",
        )
    # Larger CDGs first: they constrain most, which is the usual first-fit-decreasing order.
    order = sorted(numbers, key=lambda n: (-len(dependencies[n]), n))
    grouped = _first_fit(order, oracle, max_classes)
    method = "greedy"
    if grouped is None and len(numbers) <= EXACT_SEARCH_MAX_LAYERS:
        grouped = _exact(order, oracle, max_classes)
        method = "exact"
    if grouped is None:
        searched = "an exhaustive search" if method == "exact" else "a first-fit search"
        return PfcPlan(
            max_classes,
            cycle_free,
            cyclic,
            None,
            "none",
            f"{searched} found no way to split {len(numbers)} cycle-free layers into "
            f"{max_classes} lossless priorities with acyclic unions (allow more classes)",
        )
    grouped = sorted((sorted(g) for g in grouped), key=lambda g: g[0])
    classes = tuple(
        PriorityClass(PFC_PRIORITIES[i], tuple(members)) for i, members in enumerate(grouped)
    )
    return PfcPlan(max_classes, cycle_free, cyclic, classes, method)
