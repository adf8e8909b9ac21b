"""`eos` running-config: the device the header claims, beside the view (see the descriptor)."""

from __future__ import annotations

from dataclasses import dataclass

from fatpaths_cfg.render.base import FABRIC_MTU, SwitchView
from fatpaths_cfg.render.environment import environment


@dataclass(frozen=True)
class EosDevice:
    """What the running-config header claims about the box: parsers key on it (Batfish takes
    `! device: NAME (MODEL, EOS-x.y...)` or `boot system flash:...swi` as Arista), EOS itself
    reads those lines as comments."""

    model: str
    version: str
    mtu: int


# The 7050X3 the platform's limits describe, on the EOS release the containerlab default runs.
DEVICE = EosDevice(model="DCS-7050CX3-32S", version="4.32.0F", mtu=FABRIC_MTU)


def running_config(view: SwitchView) -> str:
    template = environment().get_template("eos/running-config.j2")
    return template.render(view=view, eos=DEVICE)
