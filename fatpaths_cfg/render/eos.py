"""`eos`: Arista EOS running-config, for the prefix and the VLAN encoding."""

from __future__ import annotations

from fatpaths_cfg.render.base import Platform, SwitchView


class EosPlatform(Platform):
    name = "eos"
    encodings = ("prefix", "vlan")
    # Conservative figures for a Trident3-class 7050X3: LPM routes and MAC table entries.
    max_routes = 131_072
    max_vlans = 4094
    max_static_macs = 73_728

    def files(self, switch: str) -> tuple[str, ...]:
        return (f"{switch}.cfg",)

    def render(self, view: SwitchView) -> dict[str, str]:
        return {f"{view.name}.cfg": self.template(view, "running-config.j2")}
