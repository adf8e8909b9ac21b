"""The forwarding checker: rebuild every switch's tables from the routes read back out of the
rendered configs and walk every (layer, source, destination) pair.

All pairs are walked at once with numpy. A hop is *sound* when the route exists, its next hop
is a neighbour over a link of the layer, and that neighbour is exactly one hop closer in the
layer; a walk over sound hops can neither loop nor leave the layer, and is a shortest path.
Only the walks that meet an unsound hop are replayed in Python, to name the path and the file
and line of the route at fault.

Parallel dataplanes: a packet never changes plane. A route is *cross-plane* when its
destination's switch or its next hop lies in another plane than its own switch, and walks run
between switches of one plane only (a layer holds links of every plane, none between them).

The check is split by what it checks: `check_routes` (routes and walks), `check_macs` (the VLAN
encoding's static MAC entries and trunks), `check_backups`, `check_addresses`; they share a
`CheckContext` and add `findings.Finding`s to its result.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from fatpaths_cfg.compiled import LoadedCompiled
from fatpaths_cfg.support.beside import beside
from fatpaths_cfg.verify.check_addresses import AddressChecks
from fatpaths_cfg.verify.check_backups import BackupChecks
from fatpaths_cfg.verify.check_routes import RouteChecks
from fatpaths_cfg.verify.context import CheckContext
from fatpaths_cfg.verify.deadlock import LayerRoutes
from fatpaths_cfg.verify.findings import (
    LAYER_ONE_NOT_MINIMAL,
    MISSING_CONFIG,
    Finding,
    ForwardingCheck,
)
from fatpaths_cfg.verify.model import Location, ParsedConfigs
from fatpaths_cfg.verify.readers import read_route_files


def check_inputs(ctx: CheckContext) -> None:
    ctx.report_unparsed(ctx.parsed.unparsed)
    for switch in ctx.names:
        if switch not in ctx.parsed.switch_file:
            ctx.add(
                Finding(
                    MISSING_CONFIG,
                    f"no configuration for switch {switch}",
                    Location(f"configs/{ctx.parsed.platform}", 0),
                    source=switch,
                )
            )
    layers = ctx.loaded.layers
    minimal_layer_one = layers and layers[0].up_down_rank is None
    if minimal_layer_one and len(layers[0].links) != len(ctx.fabric.links):
        ctx.add(
            Finding(
                LAYER_ONE_NOT_MINIMAL,
                f"layer 1 holds {len(layers[0].links)} of {len(ctx.fabric.links)} "
                "links, so its paths are not minimal in the fabric",
                Location("fabric.json", 0),
                layer=1,
            )
        )


def check_forwarding(
    loaded: LoadedCompiled,
    parsed: ParsedConfigs,
    derive: Callable[[LayerRoutes], Any] | None = None,
) -> ForwardingCheck:
    """Check one platform's configs (`read_configs`, or `plan_reading` with files still to
    read) against `fabric.json`; findings say what is wrong and where, and are empty when every
    layer forwards every pair correctly. `derive`, given the routes that forward, runs after
    the walks; its value is the result's `derived`."""
    ctx = CheckContext(loaded, parsed)
    routes, backups, addresses_room = RouteChecks(ctx), BackupChecks(ctx), AddressChecks(ctx)
    started = time.perf_counter()
    # The address checks share nothing with the route checks but the fabric: they read the
    # files that hold only addresses and the host plans themselves, in a forked child, while
    # this process reads the routes, checks them and derives what they imply (the deadlock
    # analysis). A file that holds both is read before the child starts, so both have it.
    if any(pending.holds == "both" for pending in parsed.pending):
        read_route_files(parsed, loaded)
    with beside(addresses_room.address_part) as addresses:
        read_route_files(parsed, loaded)
        ctx.result.seconds["read"] = time.perf_counter() - started
        check_inputs(ctx)
        started = time.perf_counter()
        ctx.prepare_routes()
        ctx.result.seconds["reference"] = time.perf_counter() - started
        resolved = routes.resolve_routes()
        routes.check_resolved(*resolved)
        backups.check_backups(resolved[0])
        forwarding = ctx.result.forwarding
        assert forwarding is not None  # resolve_routes set it
        ctx.result.derived = derive(forwarding) if derive else None
        findings, host_addresses, seconds = addresses.result()
    ctx.result.findings.extend(findings)
    ctx.result.host_addresses += host_addresses
    ctx.result.seconds["addresses"] = seconds
    return ctx.result
