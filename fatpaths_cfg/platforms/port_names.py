"""Vendor interface names for inventory port names, as platform data (cumulus, junos, nxos).

Those NOSes only know their own port names (`swp7`, `et-0/0/7`, `Ethernet1/7`), so an inventory
written with generic names (`Ethernet7`, what generated fabrics use) is renamed by the numbers
in the port name; a name already in the vendor's form is kept. The rename is a function of the
name alone, so the verify readers invert it from the switch's port list. A platform's descriptor
holds its `PortNaming`; render applies it (`render.native_ports`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


def port_numbers(port: str) -> tuple[int, ...]:
    """`Ethernet1/12` -> (1, 12); `Ethernet7` -> (7,)."""
    return tuple(int(n) for n in re.findall(r"\d+", port))


@dataclass(frozen=True)
class PortNaming:
    """How one vendor names front-panel ports: its own names, and a form per count of numbers
    in a generic name (`{0}` is the first number)."""

    vendor: str
    native: re.Pattern[str]
    forms: dict[int, str]

    def name(self, port: str) -> str | None:
        """The vendor name of `port`, or None when its numbers fit no form."""
        if self.native.fullmatch(port):
            return port
        form = self.forms.get(len(port_numbers(port)))
        return form.format(*port_numbers(port)) if form else None

    def problems(self, ports: tuple[str, ...]) -> list[str]:
        """Ports that have no vendor name, or share one with another port."""
        found: list[str] = []
        taken: dict[str, str] = {}
        for port in ports:
            name = self.name(port)
            if name is None:
                counts = " or ".join(str(n) for n in sorted(self.forms))
                found.append(f"port '{port}' has no {self.vendor} name (it needs {counts} numbers)")
            elif name in taken:
                found.append(
                    f"ports '{taken[name]}' and '{port}' both become {self.vendor} port {name}"
                )
            else:
                taken[name] = port
        return found

    def names(self, ports: tuple[str, ...]) -> dict[str, str]:
        """vendor name -> inventory port, for the readers."""
        return {name: port for port in ports if (name := self.name(port)) is not None}
