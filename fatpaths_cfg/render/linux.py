"""`linux`: a plain Linux box as a switch, one iproute2 script with addresses and routes."""

from __future__ import annotations

from fatpaths_cfg.render.base import Platform, SwitchView


class LinuxPlatform(Platform):
    name = "linux"
    encodings = ("prefix",)
    max_routes = 1_000_000
    max_vlans = 4094
    max_static_macs = 0

    def files(self, switch: str) -> tuple[str, ...]:
        return (f"{switch}.sh",)

    def render(self, view: SwitchView) -> dict[str, str]:
        return {f"{view.name}.sh": self.template(view, "switch.sh.j2")}
