"""Drives the render: one view per switch, every requested platform, host plans, Batfish.

Views are built and dropped one switch at a time; a Slim Fly q=19 holds 4.7M routes in all.
"""

from __future__ import annotations

import json

from fatpaths_cfg.addressing import AddressPlan
from fatpaths_cfg.compiled import CompiledFabric
from fatpaths_cfg.output import OutputTree
from fatpaths_cfg.platforms import PLATFORMS, Platform, SwitchFile, resolve
from fatpaths_cfg.render import RenderPlan, RenderTick
from fatpaths_cfg.render.base import SwitchView, render_file, render_switch
from fatpaths_cfg.render.batfish import (
    ROOT,
    device_path,
    host_file,
    layer1_topology,
    snapshot_format,
)
from fatpaths_cfg.render.hosts import LowLatencyTable, addresses_csv, host_view, render_host
from fatpaths_cfg.render.native_ports import platform_port
from fatpaths_cfg.render.switch_view import ViewBuilder


def _no_tick(_done: int, _total: int) -> None:
    return None


def render_into(
    tree: OutputTree,
    compiled: CompiledFabric,
    plan: AddressPlan,
    selection: RenderPlan,
    tick: RenderTick = _no_tick,
    batfish: bool = False,
) -> None:
    """Configs and host plans into `tree`; with `batfish`, the Batfish snapshot too."""
    fabric = compiled.fabric
    tree.add_text("hosts/addresses.csv", addresses_csv(fabric, plan))
    tree.add_text("hosts/addresses.json", _addresses_json(compiled))
    builder = ViewBuilder(compiled, plan)
    total = len(selection.switches) + len(selection.hosts)
    done = 0
    for s in selection.switches:
        platforms = selection.platforms[s]
        view = builder.view(s, platforms[0])
        rendered: dict[str, dict[str, bytes]] = {}
        for name in platforms:
            rendered[name] = _encoded(render_switch(PLATFORMS[name], view))
            for relative, data in rendered[name].items():
                tree.add_bytes(f"configs/{name}/{relative}", data)
        if batfish:
            snapshot = snapshot_format(platforms[0])
            files = _snapshot_files(view, snapshot, rendered)
            if PLATFORMS[snapshot].snapshot.builder is not None:
                files = resolve(PLATFORMS[snapshot].snapshot.builder)(view.name, files)
            for relative, data in files.items():
                tree.add_bytes(device_path(snapshot, relative), data)
        done += 1
        tick(done, total)
    low_latency = LowLatencyTable(fabric, plan) if fabric.planes > 1 else None
    for h in selection.hosts:
        host = fabric.hosts[h]
        tree.add_text(f"hosts/{host.name}.sh", render_host(host_view(fabric, plan, host)))
        if low_latency is not None:
            tree.add_text(f"hosts/{host.name}.low-latency.csv", low_latency.csv(host))
        if batfish:
            tree.add_json(f"{ROOT}/hosts/{host.name}.json", host_file(fabric, plan, host))
        done += 1
        tick(done, total)
    if batfish:

        def snapshot_port(switch: int, port: str) -> str:
            platform = selection.platforms.get(switch, (fabric.switches[switch].platform,))[0]
            return platform_port(PLATFORMS[snapshot_format(platform)], port)

        tree.add_json(
            f"{ROOT}/batfish/layer1_topology.json",
            layer1_topology(fabric, set(range(fabric.nr)), snapshot_port),
        )


def _encoded(files: dict[str, str]) -> dict[str, bytes]:
    return {relative: text.encode("utf-8") for relative, text in files.items()}


def _snapshot_files(
    view: SwitchView, snapshot: str, rendered: dict[str, dict[str, bytes]]
) -> dict[str, bytes]:
    if snapshot in rendered:
        return rendered[snapshot]
    # Files a rendered platform declares valid for its model as they are (frr's frr.conf in a
    # SONiC device) keep their bytes rather than render millions of route lines twice.
    shared: dict[str, bytes] = {}
    for name, files in rendered.items():
        if PLATFORMS[name].snapshot.model == snapshot:
            for path in PLATFORMS[name].snapshot.shared:
                relative = path.format(switch=view.name)
                shared.setdefault(relative, files[relative])
    model = PLATFORMS[snapshot]
    return {
        file.at(view.name): _shared_or_rendered(shared, model, file, view) for file in model.files
    }


def _shared_or_rendered(
    shared: dict[str, bytes], model: Platform, file: SwitchFile, view: SwitchView
) -> bytes:
    relative = file.at(view.name)
    if relative in shared:
        return shared[relative]
    return render_file(model, file, view).encode("utf-8")


def _addresses_json(compiled: CompiledFabric) -> str:
    """One host per line: readable, and json's C encoder (no `indent`) keeps 10k hosts fast."""
    plan = compiled.plan_json
    hosts = ",\n".join(f"    {json.dumps(host)}" for host in plan.get("hosts", []))
    return f'{{\n  "vlans": {json.dumps(plan.get("vlans", []))},\n  "hosts": [\n{hosts}\n  ]\n}}\n'
