"""`fatpaths verify OUT` as a function: read the rendered configs of each platform back, check
forwarding, analyse deadlock and propose PFC classes, optionally ask Batfish; in memory."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fatpaths_cfg.compiled import LoadedCompiled, load_compiled
from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.platforms import PLATFORMS
from fatpaths_cfg.verify.checker import check_forwarding
from fatpaths_cfg.verify.deadlock import LayerRoutes, find_cycle, layer_route_dependencies
from fatpaths_cfg.verify.findings import ForwardingCheck
from fatpaths_cfg.verify.pfc import DEFAULT_LOSSLESS_CLASSES, PfcPlan, assign_pfc_classes
from fatpaths_cfg.verify.readers import plan_reading, rendered_platforms


@dataclass(frozen=True)
class LayerDeadlock:
    layer: int
    dependencies: int
    cycle_free: bool
    cycle: list[str]  # a witness, as "sw1->sw2" channels, when the layer is cyclic

    def to_json(self) -> dict[str, Any]:
        return {
            "layer": self.layer,
            "dependencies": self.dependencies,
            "cycle_free": self.cycle_free,
            "cycle": self.cycle,
        }


@dataclass
class VerifyReport:
    directory: Path
    fabric: str
    checks: list[ForwardingCheck] = field(default_factory=list)
    deadlock: list[LayerDeadlock] = field(default_factory=list)
    pfc: PfcPlan | None = None
    require_lossless: bool = False
    batfish: Any = None  # a batfish.BatfishResult when --batfish was given
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        lossless_ok = not self.require_lossless or (self.pfc is not None and self.pfc.feasible)
        batfish_ok = self.batfish is None or self.batfish.ok
        return all(c.ok for c in self.checks) and lossless_ok and batfish_ok


def select_platforms(loaded: LoadedCompiled, asked: list[str] | None) -> list[str | None]:
    """Platforms to verify: those asked for, else every rendered platform that covers the whole
    fabric, else (a mixed fabric) each switch's inventory platform together (None)."""
    out = loaded.directory
    present = rendered_platforms(out)
    if asked:
        unknown = [p for p in asked if p not in PLATFORMS]
        missing = [p for p in asked if p in PLATFORMS and p not in present]
        if unknown or missing:
            raise UserErrors.single(
                "--platform",
                "",
                f"cannot verify {', '.join(unknown + missing)}: "
                + ("unknown platform" if unknown else f"no configs/{missing[0]}/ in {out}"),
                f"rendered here: {', '.join(present) or 'none'}",
            )
        return list(asked)
    if not present:
        raise UserErrors.single(
            str(out / "configs"),
            "",
            "no rendered configs to verify",
            "compile with a fatpaths that renders configs (`fatpaths compile INV -o OUT`)",
        )
    own = {s.platform for s in loaded.fabric.switches}
    if len(own) > 1 and not any(_covers(loaded, p) for p in present):
        return [None]
    return [p for p in present if _covers(loaded, p)] or [None]


def _covers(loaded: LoadedCompiled, platform: str) -> bool:
    """Whether every switch has files of `platform` (a --limit render covers only some)."""
    base = loaded.directory / "configs" / platform
    files = PLATFORMS[platform].files
    return all(
        any((base / file.at(s.name)).is_file() for file in files) for s in loaded.fabric.switches
    )


def layer_dependencies(loaded: LoadedCompiled, routes: LayerRoutes) -> dict[int, np.ndarray]:
    """Channel dependency graph of each layer's rendered routes. Only routes towards switches
    with hosts carry traffic (fat-tree cores, OFT L1 have none), so only they can wait."""
    endpoints = np.array([bool(h) for h in loaded.fabric.hosts_of_switch], dtype=bool)
    return layer_route_dependencies(loaded.fabric.nr, routes, endpoints)


def layer_deadlock(loaded: LoadedCompiled, deps: dict[int, np.ndarray]) -> list[LayerDeadlock]:
    names = [s.name for s in loaded.fabric.switches]
    verdicts = []
    for layer, edges in sorted(deps.items()):
        # One strong-component pass per layer: a layer is cycle-free when it has no witness.
        cycle = [f"{names[a]}->{names[b]}" for a, b in find_cycle(edges, len(names))]
        verdicts.append(LayerDeadlock(layer, len(edges), not cycle, cycle))
    return verdicts


def verify_output(
    directory: Path,
    platforms: list[str] | None = None,
    max_lossless_classes: int = DEFAULT_LOSSLESS_CLASSES,
    require_lossless: bool = False,
) -> VerifyReport:
    """Everything `fatpaths verify` checks except Batfish. Raises UserErrors on bad input."""
    started = time.perf_counter()
    loaded = load_compiled(directory)
    report = VerifyReport(directory, loaded.fabric.name, require_lossless=require_lossless)
    report.seconds["load"] = time.perf_counter() - started

    def deadlock_and_pfc(routes: LayerRoutes) -> tuple[list[LayerDeadlock], PfcPlan, float]:
        started = time.perf_counter()
        deps = layer_dependencies(loaded, routes)
        verdicts = layer_deadlock(loaded, deps)
        cycle_free = {verdict.layer: verdict.cycle_free for verdict in verdicts}
        pfc = assign_pfc_classes(deps, max_lossless_classes, cycle_free)
        return verdicts, pfc, time.perf_counter() - started

    for platform in select_platforms(loaded, platforms):
        # The CDG is a property of the routes, identical across platforms when all verify;
        # the first platform's rendered routes stand for them.
        first = not report.checks
        parsed = plan_reading(loaded, platform)
        check = check_forwarding(loaded, parsed, deadlock_and_pfc if first else None)
        report.checks.append(check)
    report.deadlock, report.pfc, report.seconds["deadlock"] = report.checks[0].derived
    return report
