"""`frr`: a Linux switch running FRR (what the lab runs): iproute2 interfaces, FRR routes."""

from __future__ import annotations

from fatpaths_cfg.render.base import Platform, SwitchView


class FrrPlatform(Platform):
    name = "frr"
    encodings = ("prefix",)
    # The kernel FIB has no fixed size; this bounds what zebra installs in reasonable time.
    max_routes = 1_000_000
    max_vlans = 4094
    max_static_macs = 0

    def files(self, switch: str) -> tuple[str, ...]:
        return (f"{switch}/frr.conf", f"{switch}/interfaces.sh")

    def render(self, view: SwitchView) -> dict[str, str]:
        return {
            f"{view.name}/frr.conf": self.template(view, "frr.conf.j2"),
            f"{view.name}/interfaces.sh": self.template(view, "interfaces.sh.j2"),
        }
