"""`cumulus`: Cumulus Linux with ifupdown2 and FRR: /etc/network/interfaces and /etc/frr/frr.conf.

Batfish reads Cumulus as one concatenated file (hostname, interfaces, ports.conf, frr.conf, in
that order, each found by its first line), so the snapshot joins the two device files; the
ports.conf part stays empty because no port is split or renamed by speed.
"""

from __future__ import annotations

from fatpaths_cfg.render.base import FABRIC_MTU, Platform, SwitchView
from fatpaths_cfg.render.environment import environment
from fatpaths_cfg.render.native_ports import CUMULUS_PORTS

# The FRR release of Cumulus Linux 5.x; Batfish finds the frr.conf part by its `frr version`.
FRR_VERSION = "8.4.3"
PORTS_CONF_HEADER = "# ports.conf --\n"


class CumulusPlatform(Platform):
    name = "cumulus"
    encodings = ("prefix",)
    # Spectrum-class switches (the Cumulus hardware line): the smallest LPM table among them.
    max_routes = 65_536
    max_vlans = 4094
    max_static_macs = 0
    batfish_reads = True

    def files(self, switch: str) -> tuple[str, ...]:
        return (f"{switch}/interfaces", f"{switch}/frr.conf")

    def port_name(self, port: str) -> str:
        return CUMULUS_PORTS.name(port) or port

    def port_problems(self, ports: tuple[str, ...]) -> list[str]:
        return CUMULUS_PORTS.problems(ports)

    def render(self, view: SwitchView) -> dict[str, str]:
        view = CUMULUS_PORTS.renamed(view)
        env = environment()
        interfaces = env.get_template("cumulus/interfaces.j2").render(view=view, mtu=FABRIC_MTU)
        frr = env.get_template("cumulus/frr.conf.j2").render(view=view, frr_version=FRR_VERSION)
        return {f"{view.name}/interfaces": interfaces, f"{view.name}/frr.conf": frr}

    def snapshot(self, switch: str, files: dict[str, bytes]) -> dict[str, bytes]:
        joined = b"".join(
            (
                f"{switch}\n".encode(),
                files[f"{switch}/interfaces"],
                PORTS_CONF_HEADER.encode(),
                files[f"{switch}/frr.conf"],
            )
        )
        return {f"{switch}.cfg": joined}
