"""`linux` deploy: a NAPALM driver for a plain Linux switch (the compiled iproute2 script,
configs/linux/, is the whole configuration, the kernel's tables are the running config), and
the compiled routes it compares with the kernel's."""

from __future__ import annotations

import shlex
from pathlib import Path

from fatpaths_cfg.deploy.linux_box import LinuxBoxDriver
from fatpaths_cfg.deploy.state import RouteLine, RouteTable, script_items


class LinuxDriver(LinuxBoxDriver):
    """`linux` platform: see LinuxBoxDriver for the commit, check and rollback contract."""

    script_name = "switch.sh"
    routes_in_kernel_view = True

    def route_change_command(self, add: list[RouteLine], remove: list[RouteLine]) -> str:
        """`replace` swaps a route's next hop in one step; a route with no successor is
        deleted."""
        replaced = {(family, prefix) for family, prefix, _ in add}
        lines = ["set -e"]
        for family, prefix, hop in add:
            six = " -6" if family == "v6" else ""
            lines.append(f"ip{six} route replace {shlex.quote(prefix)} via {shlex.quote(hop)}")
        for family, prefix, hop in remove:
            if (family, prefix) in replaced:
                continue
            six = " -6" if family == "v6" else ""
            lines.append(f"ip{six} route del {shlex.quote(prefix)} via {shlex.quote(hop)}")
        return "\n".join(lines) + "\n"


def script_compiled_table(script: str) -> RouteTable:
    return {item.dst: frozenset(item.via) for item in script_items(script) if item.via}


def script_candidate_routes(script: Path) -> RouteTable:
    return script_compiled_table(script.read_text(encoding="utf-8"))
