"""`linux` deploy: a NAPALM driver for a plain Linux switch (the compiled iproute2 script,
configs/linux/, is the whole configuration, the kernel's tables are the running config), and
the compiled routes it compares with the kernel's."""

from __future__ import annotations

from pathlib import Path

from fatpaths_cfg.deploy.linux_box import LinuxBoxDriver
from fatpaths_cfg.deploy.state import RouteTable, script_items


class LinuxDriver(LinuxBoxDriver):
    """`linux` platform: see LinuxBoxDriver for the commit, check and rollback contract."""

    script_name = "switch.sh"
    routes_in_kernel_view = True


def script_compiled_table(script: str) -> RouteTable:
    return {item.dst: frozenset(item.via) for item in script_items(script) if item.via}


def script_candidate_routes(script: Path) -> RouteTable:
    return script_compiled_table(script.read_text(encoding="utf-8"))
