"""`nxos` running-config (see the descriptor): the release the header claims, beside the view."""

from __future__ import annotations

from dataclasses import dataclass

from fatpaths_cfg.render.base import FABRIC_MTU, SwitchView
from fatpaths_cfg.render.environment import environment


@dataclass(frozen=True)
class NxosDevice:
    version: str
    mtu: int


DEVICE = NxosDevice(version="10.3(4a)", mtu=FABRIC_MTU)


def running_config(view: SwitchView) -> str:
    template = environment().get_template("nxos/running-config.j2")
    return template.render(view=view, nxos=DEVICE)
