"""`junos` file (see the descriptor): set commands rather than the curly hierarchy, because
each statement is then a whole line: loadable with `load set`, diffable line by line, and read
back one statement a line."""

from __future__ import annotations

from fatpaths_cfg.render.base import FABRIC_MTU, SwitchView
from fatpaths_cfg.render.environment import environment


def set_commands(view: SwitchView) -> str:
    return environment().get_template("junos/set.j2").render(view=view, mtu=FABRIC_MTU)
