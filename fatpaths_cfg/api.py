"""The public Python API. Each function is a flat list of pipeline stages (load, validate,
build, layer, route, allocate, model, render, write); the CLI is a thin shell over it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from fatpaths_cfg import _native
from fatpaths_cfg.addressing import allocate_addresses, kept_numbers
from fatpaths_cfg.analysis.convergence import clos_advice
from fatpaths_cfg.compile_budget import CompileBudget
from fatpaths_cfg.compiled import CHECKSUMMED, CHECKSUMS, CompiledFabric
from fatpaths_cfg.compiled.read import checksums_text, sha256_hex
from fatpaths_cfg.errors import UserError, UserErrors
from fatpaths_cfg.fabric import Fabric, build_fabric
from fatpaths_cfg.fabric import load_fabric as load_fabric  # a stage of the public API
from fatpaths_cfg.inventory.load import LoadedInventory, load_inventory
from fatpaths_cfg.inventory.schema import RoutingSpec
from fatpaths_cfg.lab.clab import ClabImages, clab_path, clab_runs, clab_yaml
from fatpaths_cfg.layers import Layer
from fatpaths_cfg.layers.plane_layers import fabric_layers
from fatpaths_cfg.plan.keep import EarlierCompile, earlier_numbers, kept_routing
from fatpaths_cfg.render import (
    RenderTick,
    check_platform_limits,
    no_render_tick,
    plan_render,
    vlan_limits,
)
from fatpaths_cfg.render.stage import RenderJob
from fatpaths_cfg.report import build_report, report_markdown, report_plot
from fatpaths_cfg.routing import (
    Routing,
    compute_routing,
    layer_neighbours,
    loop_free_alternates,
    route_counts,
)
from fatpaths_cfg.support.beside import available_cpus, share_out
from fatpaths_cfg.support.memory import collector_paused
from fatpaths_cfg.support.output import (
    OutputSink,
    OutputTree,
    StagedOutput,
    check_output_target,
    npz_bytes,
    output_manifest,
)
from fatpaths_cfg.topologies.base import SwitchBudget, switch_budget
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


def compile_fabric(
    inventory: Path,
    seed: int | None = None,
    progress: ProgressHook = _quiet,
    keep_layers: EarlierCompile | None = None,
    max_switches: int | None = None,
) -> CompiledFabric:
    """Inventory file -> CompiledFabric, in memory. Raises UserErrors on bad input, and on an
    inventory whose compile would not fit in memory (see `compile_budget`; `max_switches`
    replaces that estimate with a plain cap).

    `keep_layers` is an earlier compile whose sparse layers and next hops are carried over
    (see `plan.keep`) instead of being chosen afresh."""
    progress("loading inventory")
    loaded = load_inventory(inventory)
    routing_spec = loaded.spec.routing
    if seed is not None:
        routing_spec = routing_spec.model_copy(update={"seed": seed})
    return compile_loaded(loaded, routing_spec, progress, keep_layers, max_switches)


def compile_loaded(
    loaded: LoadedInventory,
    routing_spec: RoutingSpec | None = None,
    progress: ProgressHook = _quiet,
    keep_layers: EarlierCompile | None = None,
    max_switches: int | None = None,
) -> CompiledFabric:
    """A validated inventory -> CompiledFabric, with `routing_spec` in place of the inventory's
    routing block when given (sweeps compile many routings of one inventory)."""
    with collector_paused():
        return _compile_loaded(loaded, routing_spec, progress, keep_layers, max_switches)


def compile_budget(
    loaded: LoadedInventory, routing_spec: RoutingSpec, max_switches: int | None
) -> CompileBudget:
    """The budget a compile of `loaded` is checked against, located at its generator block
    or its switches."""
    field = "generate" if loaded.spec.generate is not None else "switches"
    line = loaded.source.line_of((field,))
    return CompileBudget(routing_spec.layers, max_switches, loaded.source.file, line, field)


def build_budgeted_fabric(loaded: LoadedInventory, budget: CompileBudget) -> Fabric:
    """The fabric, refused before it is built when compiling it would not fit: a generator
    is stopped on its switch count before it builds an edge, and any fabric on its switches,
    links and hosts before a Python object is made for each."""
    cap = budget.switch_cap()
    limit = SwitchBudget(cap, budget.tables_alone, budget.override(cap))
    with switch_budget(limit):
        return build_fabric(loaded, budget.check)


def _compile_loaded(
    loaded: LoadedInventory,
    routing_spec: RoutingSpec | None,
    progress: ProgressHook,
    keep_layers: EarlierCompile | None,
    max_switches: int | None,
) -> CompiledFabric:
    spec = loaded.spec
    routing_spec = routing_spec or spec.routing
    fabric = build_budgeted_fabric(loaded, compile_budget(loaded, routing_spec, max_switches))
    effective_seed = routing_spec.seed
    keep, prefer, numbers = None, None, None
    if keep_layers is not None:
        keep, prefer = kept_routing(keep_layers, fabric, routing_spec, effective_seed)
        numbers = kept_numbers(fabric, earlier_numbers(keep_layers))
    progress("building layers")
    layers = fabric_layers(
        fabric.nr,
        fabric.edges,
        fabric.plane_of_switch,
        routing_spec,
        effective_seed,
        loaded.source.file,
        loaded.source.line_of(("routing",)),
        fabric.link_keys,
        fabric.switch_keys,
        keep,
    )
    progress("computing forwarding")
    routing = compute_routing(
        fabric.nr,
        fabric.edges,
        layers,
        effective_seed,
        routing_spec.ecmp_within_layer,
        fabric.switch_keys,
        prefer,
    )
    if routing_spec.backup == "lfa":
        progress("choosing loop-free alternates")
        backup = loop_free_alternates(
            fabric.nr, fabric.edges, layers, routing, effective_seed, fabric.switch_keys
        )
        routing = replace(routing, backup=backup)
    progress("allocating addresses")
    plan = allocate_addresses(
        fabric,
        len(layers),
        spec.addressing,
        vlan_limits({s.platform for s in fabric.switches}),
        loaded.source.file,
        loaded.source.line_of,
        numbers,
    )
    progress("checking deadlock freedom")
    return CompiledFabric(
        fabric,
        routing_spec,
        spec.addressing,
        effective_seed,
        layers,
        routing,
        loaded.path.name,
        address_plan=plan,
        deadlock_free=layer_deadlock_verdicts(fabric, layers, routing),
        route_counts=route_counts(fabric.nr, fabric.edges, layers, routing),
        inventory_file=loaded.source.file,
        line_of=loaded.source.line_of,
        warnings=fabric_warnings(fabric, loaded),
    )


def fabric_warnings(fabric: Fabric, loaded: LoadedInventory) -> tuple[UserError, ...]:
    advice = clos_advice(fabric)
    if advice is None:
        return ()
    problem, hint = advice
    spec, line_of = loaded.spec, loaded.source.line_of
    if spec.defaults.host_flow_rate is not None:
        line = line_of(("defaults", "host_flow_rate"))
    else:
        line = line_of(("generate",)) if spec.generate is not None else 0
    return (UserError(loaded.source.file, line, "", problem, hint),)


def layer_deadlock_verdicts(fabric: Fabric, layers: list[Layer], routing: Routing) -> list[bool]:
    """Per layer: can its routes deadlock under PFC? Only host traffic counts: routes towards
    switches without hosts (fat-tree cores, OFT L1) carry none."""
    endpoints = np.array([bool(hosts) for hosts in fabric.hosts_of_switch], dtype=bool)
    if not routing.ecmp:
        # One next hop per destination: the native CDG check handles q=37 in well under a
        # second per layer, where numpy's unique-and-sort needs several.
        return _native.layers_are_deadlock_free(np.ascontiguousarray(routing.next_hop), endpoints)
    verdicts = []
    for i, layer in enumerate(layers):
        neighbours = layer_neighbours(fabric.nr, fabric.edges, layer.links)
        # Every equal-cost hop towards a host-carrying destination (sources unrestricted,
        # which can only add waits, so a "free" verdict stays sound).
        towards_hosts = np.ascontiguousarray(routing.dist[i][:, endpoints])
        deps = dependency_edges(routing.next_hop[i], towards_hosts, neighbours)
        verdicts.append(is_acyclic(deps))
    return verdicts


def model_output(compiled: CompiledFabric) -> OutputTree:
    """The compiler core's files: the IR, the dense tables and the layer report."""
    tree = OutputTree()
    for task in _model_tasks(tree, compiled):
        task()
    add_checksums(tree)
    return tree


def add_checksums(sink: OutputSink) -> None:
    """`checksums.sha256` of the files later stages trust, read back as written: what
    `load_compiled` checks them against, so a file damaged after compile is refused."""
    digests = {name: sha256_hex(sink.read_back(name)) for name in CHECKSUMMED}
    sink.add_text(CHECKSUMS, checksums_text(digests))


def _model_tasks(sink: OutputSink, compiled: CompiledFabric) -> list[Callable[[], int]]:
    """The model's files as tasks (see `share_out`), each one of the longest of a render."""

    def fabric_json() -> int:
        sink.add_json_records("fabric.json", compiled.to_json())
        return 0

    def routing_npz() -> int:
        sink.add_bytes("routing.npz", npz_bytes(compiled.routing_arrays()))
        return 0

    def report_files() -> int:
        report = build_report(compiled)
        sink.add_json("report.json", report)
        sink.add_text("report.md", report_markdown(report))
        sink.add_bytes("report.png", report_plot(report))
        return 0

    return [fabric_json, routing_npz, report_files]


def emit_output(
    compiled: CompiledFabric,
    sink: OutputSink,
    progress: ProgressHook = _quiet,
    platforms: list[str] | None = None,
    limit: list[str] | None = None,
    tick: RenderTick = no_render_tick,
    batfish: bool = False,
    jobs: int = 1,
) -> None:
    """Every file of the compiled output directory, into `sink`.

    `platforms` overrides each switch's inventory platform (rendering each one listed);
    `limit` renders configs and host plans of those switches only; `batfish` adds the Batfish
    snapshot (`batfish/`), which only `verify --batfish` reads. Raises UserErrors for unknown
    names and for switches over a platform limit, before anything is rendered. With `jobs` > 1
    and a `StagedOutput`, the work is shared out over that many processes; the files are the
    same byte for byte.
    """
    selection = plan_render(compiled, platforms, limit)
    plan = compiled.address_plan
    check_platform_limits(compiled, plan, selection)
    progress("writing the model, configs and host plans")
    render = RenderJob(sink, compiled, plan, selection, batfish)
    # The long single files first: taken early, they balance against the many short tasks.
    tasks = _model_tasks(sink, compiled)
    if clab_runs(compiled.fabric):

        def clab_file() -> int:
            fabric = compiled.fabric
            sink.add_text(clab_path(fabric), clab_yaml(fabric, ClabImages()))
            return 0

        tasks.append(clab_file)
    tasks += render.tasks()

    def items_done(items: int) -> None:
        tick(items, render.items)

    if isinstance(sink, StagedOutput) and jobs > 1:
        mark = len(sink.journal)
        share_out(tasks, jobs, lambda: sink.journal[mark:], sink.adopt, items_done)
    else:
        share_out(tasks, 1, lambda: None, lambda _: None, items_done)
    add_checksums(sink)


def build_output(
    compiled: CompiledFabric,
    progress: ProgressHook = _quiet,
    platforms: list[str] | None = None,
    limit: list[str] | None = None,
    tick: RenderTick = no_render_tick,
    batfish: bool = False,
) -> OutputTree:
    """Every file of the compiled output directory, in memory (see `emit_output`)."""
    tree = OutputTree()
    emit_output(compiled, tree, progress, platforms, limit, tick, batfish)
    return tree


def refuse_running_lab(target: Path) -> None:
    """Compiling swaps the whole directory, which would orphan a running lab's state file (and
    with it `lab down`)."""
    state = target / "lab" / "state.json"
    if state.is_file():
        raise UserErrors.single(
            str(state),
            "",
            "a lab is running from this output directory",
            f"run `fatpaths lab down {target}` first, or compile into another directory",
        )


# Rendered per switch or host: the parts of an earlier output that a --limit run keeps.
RENDERED_FOLDERS = ("configs", "hosts", "batfish")


def keep_earlier_output(tree: OutputSink, target: Path, batfish: bool = False) -> None:
    """Carry over rendered files of an earlier output that this (limited) run did not produce,
    so that rendering a subset of switches updates them without deleting the others. Only files
    the earlier run listed as its own are carried: nothing foreign joins the new output. An
    earlier Batfish snapshot is carried only into a run that renders one (else it would mix
    old devices with new configs)."""
    manifest = output_manifest(target) if target.is_dir() else None
    if manifest is None:
        return
    folders = RENDERED_FOLDERS if batfish else tuple(f for f in RENDERED_FOLDERS if f != "batfish")
    for relative in sorted(manifest):
        path = target / relative
        if relative.split("/", 1)[0] in folders and relative not in tree and path.is_file():
            tree.add_bytes(relative, path.read_bytes())


def check_compile_target(inventory: Path, out: Path, force: bool = False) -> None:
    """Raises UserErrors when `out` may not be (re)placed by a compile of `inventory`."""
    check_output_target(out, "compile", [inventory], force)
    refuse_running_lab(out)


# Processes one compile may fork to render and write: beyond the CPUs of any machine it runs on.
MAX_JOBS = 256


def write_output(
    compiled: CompiledFabric,
    inventory: Path,
    target: Path,
    force: bool = False,
    progress: ProgressHook = _quiet,
    platforms: list[str] | None = None,
    limit: list[str] | None = None,
    tick: RenderTick = no_render_tick,
    batfish: bool = False,
    jobs: int | None = None,
) -> CompileSummary:
    """`emit_output` into the directory `target`, each file written as it is rendered and the
    whole swapped in at the end (see `StagedOutput`); `jobs` processes (default: one per CPU,
    or one from any thread but the main one: a fork copies the locks that the process's other
    threads hold, and a Dask or web worker's threads may hold any). Raises UserErrors, before
    anything is written, when `target` is not the compiler's to replace."""
    check_compile_target(inventory, target, force)
    if jobs is not None and jobs > MAX_JOBS:
        # Each job is a forked process: `-j 100000` on a large fabric forked one per file.
        raise UserErrors.single(
            "--jobs", "", f"{jobs} is more processes than {MAX_JOBS}", "at most one per CPU pays"
        )
    if jobs is None:
        jobs = available_cpus() if threading.current_thread() is threading.main_thread() else 1
    with StagedOutput(target, "compile", [inventory], force) as staged:
        emit_output(compiled, staged, progress, platforms, limit, tick, batfish, jobs)
        if limit:
            keep_earlier_output(staged, target, batfish)
        written, unchanged = staged.commit()
    return CompileSummary(target, written, unchanged, staged.total_bytes)


def compile_to_directory(
    inventory: Path,
    out: Path,
    seed: int | None = None,
    progress: ProgressHook = _quiet,
    force: bool = False,
    batfish: bool = False,
    jobs: int | None = None,
) -> CompileSummary:
    compiled = compile_fabric(inventory, seed, progress)
    return write_output(compiled, inventory, out, force, progress, batfish=batfish, jobs=jobs)
