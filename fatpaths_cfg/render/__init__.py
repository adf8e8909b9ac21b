"""The render stage: per-switch configs for each platform, host plans and a Batfish snapshot.

The platform registry (`fatpaths_cfg.platforms`) is the only place that knows which platforms
exist; everything here asks a `Platform` descriptor for its capabilities and files.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fatpaths_cfg.addressing import AddressPlan
from fatpaths_cfg.compiled import CompiledFabric
from fatpaths_cfg.errors import ErrorCollector
from fatpaths_cfg.platforms import PLATFORMS, Platform

# Per-switch limit errors are capped so that a fabric far over a limit stays readable.
MAX_LIMIT_ERRORS = 10

# Called with (items done, items in total) while rendering.
RenderTick = Callable[[int, int], None]


def no_render_tick(_done: int, _total: int) -> None:
    return None


@dataclass(frozen=True)
class RenderPlan:
    """What to render: the platforms of each selected switch (index -> platform names)."""

    switches: list[int]
    platforms: dict[int, tuple[str, ...]]
    hosts: list[int]


def vlan_limits(names: set[str]) -> dict[str, int]:
    return {name: PLATFORMS[name].limits.vlans for name in names if name in PLATFORMS}


def plan_render(
    compiled: CompiledFabric, platforms: list[str] | None, limit: list[str] | None
) -> RenderPlan:
    """Resolve --platform and --limit against the fabric; unknown names are user errors."""
    fabric = compiled.fabric
    errors = ErrorCollector()
    for name in platforms or []:
        if name not in PLATFORMS:
            errors.add(
                "--platform",
                0,
                "",
                f"unknown platform '{name}'",
                "known platforms: " + ", ".join(PLATFORMS),
            )
    unknown = [name for name in limit or [] if name not in fabric.switch_index]
    for name in unknown:
        errors.add(
            "--limit",
            0,
            "",
            f"unknown switch '{name}'",
            f"switches of {fabric.name}: "
            + ", ".join(sorted(fabric.switch_index)[:5])
            + (" ..." if fabric.nr > 5 else ""),
        )
    errors.raise_if_any()
    if limit:
        switches = sorted({fabric.switch_index[name] for name in limit})
    else:
        switches = list(range(fabric.nr))
    chosen = {
        s: tuple(dict.fromkeys(platforms)) if platforms else (fabric.switches[s].platform,)
        for s in switches
    }
    selected = set(switches)
    hosts = [h.index for h in fabric.hosts if h.switch in selected]
    return RenderPlan(switches, chosen, hosts)


def check_platform_limits(compiled: CompiledFabric, plan: AddressPlan, render: RenderPlan) -> None:
    """Every switch must fit its platforms: encoding, families, ECMP, routes, VLANs and MACs."""
    errors = ErrorCollector()
    file = compiled.inventory_file or compiled.inventory_name
    families = len(plan.families)
    hosts = len(compiled.fabric.hosts)
    used = {p for names in render.platforms.values() for p in names}
    for name in sorted(used):
        for where, message, hint in _unsupported(PLATFORMS[name], compiled, plan):
            errors.add(file, compiled.line_of(where), ".".join(where), message, hint)
    for s in render.switches:
        _check_port_names(compiled, s, render.platforms[s], errors)
    over: list[str] = []
    for s in render.switches:
        switch = compiled.fabric.switches[s]
        for name in render.platforms[s]:
            platform = PLATFORMS[name]
            if plan.encoding not in platform.encodings:
                continue
            need = _platform_needs(compiled, plan, s, families, hosts)
            for what, amount, limit in (
                ("layer routes", need[0], platform.limits.routes),
                ("VLANs", need[1], platform.limits.vlans),
                ("static MAC entries", need[2], platform.limits.static_macs),
            ):
                if amount > limit:
                    over.append(
                        f"switch '{switch.name}' needs {amount} {what} but platform "
                        f"{name} holds at most {limit}"
                    )
    line = compiled.line_of(("routing", "layers"))
    for message in over[:MAX_LIMIT_ERRORS]:
        errors.add(file, line, "platform", message, "use fewer layers, or a larger platform")
    if len(over) > MAX_LIMIT_ERRORS:
        errors.add(
            file,
            line,
            "platform",
            f"... and {len(over) - MAX_LIMIT_ERRORS} more switches over a platform limit",
        )
    errors.raise_if_any()


def _unsupported(
    platform: Platform, compiled: CompiledFabric, plan: AddressPlan
) -> list[tuple[tuple[str, ...], str, str]]:
    """(inventory path, message, hint) of each capability the fabric needs and `platform`
    lacks."""
    name = platform.name
    found: list[tuple[tuple[str, ...], str, str]] = []
    if plan.encoding not in platform.encodings:
        found.append(
            (
                ("addressing", "encoding"),
                f"platform {name} does not support the {plan.encoding} encoding",
                f"{name} supports: {', '.join(platform.encodings)}",
            )
        )
    families = [f for f, t in (("ipv4", plan.v4), ("ipv6", plan.v6)) if t is not None]
    for family in families:
        if family not in platform.families:
            found.append(
                (
                    ("addressing", "family"),
                    f"platform {name} does not route {family}",
                    f"{name} routes: {', '.join(platform.families)}",
                )
            )
    if compiled.routing.ecmp and not platform.ecmp:
        found.append(
            (
                ("routing", "ecmp_within_layer"),
                f"platform {name} installs one next hop per prefix",
                "set routing.ecmp_within_layer: false",
            )
        )
    if compiled.routing.backup is not None and not platform.floating:
        found.append(
            (
                ("routing", "backup"),
                f"platform {name} cannot hold backup routes (no floating static routes)",
                "set routing.backup: none, or render for frr, sonic, cumulus, eos, nxos or junos",
            )
        )
    if compiled.routing.backup is not None and plan.encoding == "vlan":
        found.append(
            (
                ("routing", "backup"),
                "backup routes need the prefix encoding: a static MAC entry has no backup",
                "set routing.backup: none, or addressing.encoding: prefix",
            )
        )
    return found


def _entry(compiled: CompiledFabric, switch: int) -> int:
    """The `switches:` entry of a switch in the inventory (its index is its place by name)."""
    entries = compiled.fabric.switch_entries
    return entries[switch] if entries else switch


def _check_port_names(
    compiled: CompiledFabric, s: int, platforms: tuple[str, ...], errors: ErrorCollector
) -> None:
    """Platforms that rename ports (junos `et-0/0/7`...) must find a distinct name for each."""
    switch = compiled.fabric.switches[s]
    for name in platforms:
        naming = PLATFORMS[name].port_names
        if naming is None:
            continue
        for problem in naming.problems(switch.ports)[:MAX_LIMIT_ERRORS]:
            errors.add(
                compiled.inventory_file or compiled.inventory_name,
                compiled.line_of(("switches", _entry(compiled, s), "ports")),
                f"switches[{_entry(compiled, s)}].ports",
                f"switch '{switch.name}': {problem}",
                f"name the ports as {name} does, or with numbers (Ethernet7, Ethernet1/7)",
            )


def _platform_needs(
    compiled: CompiledFabric, plan: AddressPlan, switch: int, families: int, hosts: int
) -> tuple[int, int, int]:
    if plan.encoding == "vlan":
        return 0, len(plan.vlans), len(plan.vlans) * hosts
    backups = 0
    if compiled.routing.backup is not None:
        backups = int((compiled.routing.backup[:, switch] >= 0).sum())
    return (compiled.route_counts[switch] + backups) * families, 0, 0
