"""The inventory's plain rules for names, endpoints and speeds.

Apart from the pydantic schema that applies them, so that code which only reads a compiled
fabric (verify, lab, simulate) does not import pydantic's models to parse a speed.
"""

from __future__ import annotations

import re

SAFE_NAME = r"^[A-Za-z][A-Za-z0-9_-]{0,62}$"
SAFE_PORT = r"^[A-Za-z][A-Za-z0-9/._-]{0,31}$"
ENDPOINT = re.compile(
    r"^(?P<switch>[A-Za-z][A-Za-z0-9_-]{0,62}):(?P<port>[A-Za-z][A-Za-z0-9/._-]{0,31})$"
)
SPEED = re.compile(r"^(?P<value>[0-9]+(\.[0-9]+)?)\s*(?P<unit>[MGT])$")


def parse_speed_gbps(value: str | int | float) -> float:
    """'100G' -> 100.0, '400M' -> 0.4, 25 -> 25.0 (bare numbers are Gb/s)."""
    if isinstance(value, bool):
        raise ValueError("must be a speed such as 100G, 25G or 400M")
    if isinstance(value, int | float):
        if value <= 0:
            raise ValueError("must be positive")
        return float(value)
    match = SPEED.match(value.strip())
    if not match:
        raise ValueError(f"{value!r} is not a speed (write e.g. 100G, 25G or 400M)")
    scale = {"M": 1e-3, "G": 1.0, "T": 1e3}[match["unit"]]
    gbps = float(match["value"]) * scale
    if gbps <= 0:
        raise ValueError("must be positive")
    return gbps
