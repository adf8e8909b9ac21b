"""Drives the render: one view per switch, every requested platform, host plans, Batfish.

Views are built and dropped one switch at a time; a Slim Fly q=19 holds 4.7M routes in all.
The work comes as tasks, so that it can be shared out over processes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import partial

from fatpaths_cfg.addressing import AddressPlan
from fatpaths_cfg.compiled import CompiledFabric
from fatpaths_cfg.platforms import PLATFORMS, Platform, SwitchFile, resolve
from fatpaths_cfg.render import RenderPlan
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
from fatpaths_cfg.support.output import OutputSink

# Switches and hosts per task when the render is shared out over processes: small enough to
# balance, large enough that taking a task costs nothing beside it.
SWITCHES_PER_TASK = 4
HOSTS_PER_TASK = 64
# However large the fabric, at most about this many tasks of each kind.
TASKS_PER_KIND = 2048


class RenderJob:
    """Configs and host plans of one render as independent tasks, each adding its files to
    `sink` and returning how many switches or hosts it rendered. Tasks share nothing but
    what they read, so they can run in any order and in any process (see `share_out`)."""

    def __init__(
        self,
        sink: OutputSink,
        compiled: CompiledFabric,
        plan: AddressPlan,
        selection: RenderPlan,
        batfish: bool = False,
    ) -> None:
        self.sink = sink
        self.compiled = compiled
        self.plan = plan
        self.selection = selection
        self.batfish = batfish
        self.builder = ViewBuilder(compiled, plan)
        fabric = compiled.fabric
        self.low_latency = LowLatencyTable(fabric, plan) if fabric.planes > 1 else None

    @property
    def items(self) -> int:
        return len(self.selection.switches) + len(self.selection.hosts)

    def tasks(self) -> list[Callable[[], int]]:
        """Longest first, as they balance better taken early: the address lists (one
        task), the switches, then the hosts."""
        tasks: list[Callable[[], int]] = [self.addresses]
        switches, hosts = self.selection.switches, self.selection.hosts
        for chunk in _chunks(switches, SWITCHES_PER_TASK):
            tasks.append(partial(self.switches, chunk))
        for chunk in _chunks(hosts, HOSTS_PER_TASK):
            tasks.append(partial(self.hosts, chunk))
        if self.batfish:
            tasks.append(self.batfish_topology)
        return tasks

    def addresses(self) -> int:
        self.sink.add_text("hosts/addresses.csv", addresses_csv(self.compiled.fabric, self.plan))
        self.sink.add_text("hosts/addresses.json", _addresses_json(self.compiled))
        return 0

    def switches(self, chosen: Sequence[int]) -> int:
        tree, selection = self.sink, self.selection
        for s in chosen:
            platforms = selection.platforms[s]
            view = self.builder.view(s, platforms[0])
            rendered: dict[str, dict[str, bytes]] = {}
            for name in platforms:
                rendered[name] = _encoded(render_switch(PLATFORMS[name], view))
                for relative, data in rendered[name].items():
                    tree.add_bytes(f"configs/{name}/{relative}", data)
            if self.batfish:
                snapshot = snapshot_format(platforms[0])
                files = _snapshot_files(view, snapshot, rendered)
                if PLATFORMS[snapshot].snapshot.builder is not None:
                    files = resolve(PLATFORMS[snapshot].snapshot.builder)(view.name, files)
                for relative, data in files.items():
                    tree.add_bytes(device_path(snapshot, relative), data)
        return len(chosen)

    def hosts(self, chosen: Sequence[int]) -> int:
        fabric, plan, tree = self.compiled.fabric, self.plan, self.sink
        for h in chosen:
            host = fabric.hosts[h]
            tree.add_text(f"hosts/{host.name}.sh", render_host(host_view(fabric, plan, host)))
            if self.low_latency is not None:
                tree.add_text(f"hosts/{host.name}.low-latency.csv", self.low_latency.csv(host))
            if self.batfish:
                tree.add_json(f"{ROOT}/hosts/{host.name}.json", host_file(fabric, plan, host))
        return len(chosen)

    def batfish_topology(self) -> int:
        fabric, selection = self.compiled.fabric, self.selection

        def snapshot_port(switch: int, port: str) -> str:
            platform = selection.platforms.get(switch, (fabric.switches[switch].platform,))[0]
            return platform_port(PLATFORMS[snapshot_format(platform)], port)

        self.sink.add_json(
            f"{ROOT}/batfish/layer1_topology.json",
            layer1_topology(fabric, set(range(fabric.nr)), snapshot_port),
        )
        return 0


def _chunks(items: list[int], size: int) -> list[list[int]]:
    size = max(size, -(-len(items) // TASKS_PER_KIND))
    return [items[i : i + size] for i in range(0, len(items), size)]


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
