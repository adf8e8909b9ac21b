"""`eos`: Arista EOS running-config, for the prefix and the VLAN encoding."""

from __future__ import annotations

from dataclasses import dataclass

from fatpaths_cfg.render.base import FABRIC_MTU, Platform, SwitchView
from fatpaths_cfg.render.environment import environment


@dataclass(frozen=True)
class EosDevice:
    """What the running-config header claims about the box: parsers key on it (Batfish takes
    `! device: NAME (MODEL, EOS-x.y...)` or `boot system flash:...swi` as Arista), EOS itself
    reads those lines as comments."""

    model: str
    version: str
    mtu: int


# The 7050X3 the limits below describe, on the EOS release the containerlab default runs.
DEVICE = EosDevice(model="DCS-7050CX3-32S", version="4.32.0F", mtu=FABRIC_MTU)


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
        template = environment().get_template("eos/running-config.j2")
        return {f"{view.name}.cfg": template.render(view=view, eos=DEVICE)}
