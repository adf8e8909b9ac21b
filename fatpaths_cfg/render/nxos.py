"""`nxos`: Cisco NX-OS running-config (Nexus 9000), one file per switch."""

from __future__ import annotations

from dataclasses import dataclass

from fatpaths_cfg.render.base import FABRIC_MTU, Platform, SwitchView
from fatpaths_cfg.render.environment import environment
from fatpaths_cfg.render.native_ports import NXOS_PORTS


@dataclass(frozen=True)
class NxosDevice:
    version: str
    mtu: int


DEVICE = NxosDevice(version="10.3(4a)", mtu=FABRIC_MTU)


class NxosPlatform(Platform):
    name = "nxos"
    encodings = ("prefix",)
    # A Nexus 9300-EX/FX-class switch's IPv4 LPM table in the default routing template.
    max_routes = 131_072
    max_vlans = 3967  # NX-OS reserves VLANs 3968-4094
    max_static_macs = 0
    batfish_reads = True

    def files(self, switch: str) -> tuple[str, ...]:
        return (f"{switch}.cfg",)

    def port_name(self, port: str) -> str:
        return NXOS_PORTS.name(port) or port

    def port_problems(self, ports: tuple[str, ...]) -> list[str]:
        return NXOS_PORTS.problems(ports)

    def render(self, view: SwitchView) -> dict[str, str]:
        view = NXOS_PORTS.renamed(view)
        template = environment().get_template("nxos/running-config.j2")
        return {f"{view.name}.cfg": template.render(view=view, nxos=DEVICE)}
