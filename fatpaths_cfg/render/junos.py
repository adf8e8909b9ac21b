"""`junos`: Juniper Junos (QFX-style switching) as `load set` commands, one file per switch.

Set commands rather than the curly hierarchy: each statement is a whole line, so the file is
loadable with `load set`, diffable line by line, and read back one statement a line.
"""

from __future__ import annotations

from fatpaths_cfg.render.base import FABRIC_MTU, Platform, SwitchView
from fatpaths_cfg.render.environment import environment
from fatpaths_cfg.render.native_ports import JUNOS_PORTS


class JunosPlatform(Platform):
    name = "junos"
    encodings = ("prefix",)
    # A QFX5120-class switch's LPM table in its default profile.
    max_routes = 131_072
    max_vlans = 4094
    max_static_macs = 0
    batfish_reads = True

    def files(self, switch: str) -> tuple[str, ...]:
        return (f"{switch}.set",)

    def port_name(self, port: str) -> str:
        return JUNOS_PORTS.name(port) or port

    def port_problems(self, ports: tuple[str, ...]) -> list[str]:
        return JUNOS_PORTS.problems(ports)

    def render(self, view: SwitchView) -> dict[str, str]:
        view = JUNOS_PORTS.renamed(view)
        text = environment().get_template("junos/set.j2").render(view=view, mtu=FABRIC_MTU)
        return {f"{view.name}.set": text}
