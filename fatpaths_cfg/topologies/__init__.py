"""Topology generators: every kind of docs/topologies.md behind one validated entry point."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from numbers import Integral, Real

from . import clique, clos, dragonfly, fattree, hyperx, jellyfish, mlfm, oft, slimfly, xpander
from .base import GeneratedTopology, ParameterSpec, TopologyParameterError

__all__ = [
    "KINDS",
    "GeneratedTopology",
    "ParameterSpec",
    "TopologyParameterError",
    "generate",
]

_Builder = Callable[[dict[str, int | float], int], GeneratedTopology]

_MODULES = {
    "slimfly": slimfly,
    "dragonfly": dragonfly,
    "jellyfish": jellyfish,
    "xpander": xpander,
    "hyperx": hyperx,
    "fattree": fattree,
    "clique": clique,
    "mlfm": mlfm,
    "oft": oft,
    "clos": clos,
}

KINDS: dict[str, tuple[ParameterSpec, ...]] = {
    kind: module.PARAMETERS for kind, module in _MODULES.items()
}
_BUILDERS: dict[str, _Builder] = {kind: module.build for kind, module in _MODULES.items()}


def _coerce(spec: ParameterSpec, value: object) -> int | float:
    # bool is an Integral subclass; "q: true" in a YAML file is a mistake, not q=1.
    if isinstance(value, bool):
        raise TopologyParameterError(
            spec.name, f"{spec.name} must be a number, got a boolean", _type_hint(spec)
        )
    if spec.kind is int:
        if isinstance(value, Integral):
            return int(value)
        raise TopologyParameterError(
            spec.name,
            f"{spec.name} must be an integer, got {type(value).__name__} {value!r}",
            _type_hint(spec),
        )
    if isinstance(value, Real) and math.isfinite(float(value)):
        return float(value)
    raise TopologyParameterError(
        spec.name,
        f"{spec.name} must be a finite number, got {type(value).__name__} {value!r}",
        _type_hint(spec),
    )


def _type_hint(spec: ParameterSpec) -> str:
    noun = "an integer" if spec.kind is int else "a number"
    return f"{noun}: {spec.help}"


def generate(kind: str, params: Mapping[str, int | float], seed: int) -> GeneratedTopology:
    """Validate kind and parameters, fill in defaults, and build the topology.

    Deterministic: the same kind, params and seed give an identical result. Only jellyfish and
    xpander consume the seed, through numpy.random.default_rng(seed).
    """
    if not isinstance(kind, str) or kind not in KINDS:
        raise TopologyParameterError(
            "kind", f"unknown topology kind {kind!r}", "one of " + ", ".join(sorted(KINDS))
        )
    if isinstance(seed, bool) or not isinstance(seed, Integral) or seed < 0:
        raise TopologyParameterError("seed", f"seed={seed!r} is invalid", "an integer >= 0")
    specs = KINDS[kind]
    known = [spec.name for spec in specs]
    unknown = sorted(name for name in params if name not in known)
    if unknown:
        raise TopologyParameterError(
            unknown[0],
            f"unknown parameter {unknown[0]!r} for kind {kind!r}",
            f"parameters of {kind}: " + ", ".join(known),
        )
    resolved: dict[str, int | float] = {}
    for spec in specs:
        if spec.name in params:
            resolved[spec.name] = _coerce(spec, params[spec.name])
        elif spec.required:
            raise TopologyParameterError(
                spec.name,
                f"missing required parameter {spec.name!r} for kind {kind!r}",
                _type_hint(spec),
            )
        elif spec.default is not None:
            resolved[spec.name] = spec.default
    # Builders fill in derived defaults (such as p = ceil(k'/2)) and check ranges.
    return _BUILDERS[kind](resolved, int(seed))
