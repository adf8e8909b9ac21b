"""The public Python API. Each function is a flat list of pipeline stages (load, validate,
build, layer, route, allocate, model, render, write); the CLI is a thin shell over it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fatpaths_cfg import _native
from fatpaths_cfg.compiled import CompiledFabric
from fatpaths_cfg.fabric import Fabric, build_fabric
from fatpaths_cfg.inventory.load import LoadedInventory, load_inventory
from fatpaths_cfg.layers import layers_or_user_error
from fatpaths_cfg.output import OutputTree, npz_bytes
from fatpaths_cfg.report import build_report, report_markdown, route_counts
from fatpaths_cfg.routing import compute_routing, layer_neighbours
from fatpaths_cfg.verify.deadlock import dependency_edges, is_acyclic

ProgressHook = Callable[[str], None]


def _quiet(_: str) -> None:
    return None


@dataclass(frozen=True)
class CompileSummary:
    directory: Path
    files_written: int
    files_unchanged: int
    bytes_total: int


def load_fabric(inventory: Path) -> tuple[LoadedInventory, Fabric]:
    loaded = load_inventory(inventory)
    return loaded, build_fabric(loaded)


def compile_fabric(
    inventory: Path, seed: int | None = None, progress: ProgressHook = _quiet
) -> CompiledFabric:
    """Inventory file -> CompiledFabric, in memory. Raises UserErrors on bad input."""
    progress("loading inventory")
    loaded, fabric = load_fabric(inventory)
    spec = loaded.spec
    routing_spec = spec.routing if seed is None else spec.routing.model_copy(update={"seed": seed})
    effective_seed = routing_spec.seed
    progress("building layers")
    layers = layers_or_user_error(
        fabric.nr,
        fabric.edges,
        routing_spec,
        effective_seed,
        loaded.source.file,
        loaded.source.line_of(("routing",)),
    )
    progress("computing forwarding")
    routing = compute_routing(
        fabric.nr, fabric.edges, layers, effective_seed, routing_spec.ecmp_within_layer
    )
    compiled = CompiledFabric(
        fabric, routing_spec, spec.addressing, effective_seed, layers, routing, inventory.name
    )
    progress("checking deadlock freedom")
    compiled.deadlock_free = layer_deadlock_verdicts(compiled)
    compiled.route_counts = route_counts(compiled)
    return compiled


def layer_deadlock_verdicts(compiled: CompiledFabric) -> list[bool]:
    fabric, routing = compiled.fabric, compiled.routing
    verdicts = []
    for i, layer in enumerate(compiled.layers):
        if routing.ecmp:
            neighbours = layer_neighbours(fabric.nr, fabric.edges, layer.links)
            deps = dependency_edges(routing.next_hop[i], routing.dist[i], neighbours)
            verdicts.append(is_acyclic(deps))
        else:
            # One next hop per destination: the native CDG check handles q=37 in well under
            # a second per layer, where numpy's unique-and-sort needs several.
            table = np.ascontiguousarray(routing.next_hop[i])
            verdicts.append(_native.layer_is_deadlock_free(table))
    return verdicts


def build_output(compiled: CompiledFabric, progress: ProgressHook = _quiet) -> OutputTree:
    """Every file of the compiled output directory, in memory."""
    tree = OutputTree()
    progress("writing the model")
    tree.add_json("fabric.json", compiled.to_json())
    tree.add_bytes("routing.npz", npz_bytes(compiled.routing_arrays()))
    report = build_report(compiled)
    tree.add_json("report.json", report)
    tree.add_text("report.md", report_markdown(report))
    return tree


def compile_to_directory(
    inventory: Path, out: Path, seed: int | None = None, progress: ProgressHook = _quiet
) -> CompileSummary:
    compiled = compile_fabric(inventory, seed, progress)
    tree = build_output(compiled, progress)
    written, unchanged = tree.commit(out)
    return CompileSummary(out, written, unchanged, tree.total_bytes)
