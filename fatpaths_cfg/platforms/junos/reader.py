"""Reads a `junos` set-command file back for `fatpaths verify`.

As everywhere in verify, every statement fatpaths renders is either read or known to carry
nothing the forwarding check needs; any other line is reported as unparsed. Interface names are
Junos' (`et-0/0/7`) and go back to inventory ports through the reader's name map.
"""

from __future__ import annotations

from fatpaths_cfg.render.base import BACKUP_DISTANCE
from fatpaths_cfg.verify.readers import LOOPBACK, SwitchReader

_JUNOS_INERT = (
    "set system host-name ",
    "set vlans ",
)
# Per-interface Junos statements that carry nothing to check (after `set interfaces IF`).
_JUNOS_INTERFACE_INERT = ("description ", "unit 0 family ethernet-switching ")
_JUNOS_LOOPBACK = "lo0"


def read_junos_set(reader: SwitchReader, relative: str) -> None:
    """`load set` commands: static routes, and interface addresses by family."""
    path = reader.open(relative)
    reader.parsed.switch_file[reader.name] = reader.file
    reader.parsed.address_file[reader.name] = reader.file
    prefixes: list[str] = []
    hops: list[str] = []
    lines: list[int] = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        text = raw.strip()
        parts = text.split()
        if text.startswith("set routing-options "):
            # `set routing-options [rib inet6.0] static route P next-hop H`
            words = parts[4:] if parts[2:4] == ["rib", "inet6.0"] else parts[2:]
            if len(words) == 5 and words[:2] == ["static", "route"] and words[3] == "next-hop":
                prefixes.append(words[2])
                hops.append(words[4])
                lines.append(number)
                continue
            # A backup: `static route P qualified-next-hop H preference 250`.
            if (
                len(words) == 7
                and words[:2] == ["static", "route"]
                and words[3] == "qualified-next-hop"
                and words[5:] == ["preference", str(BACKUP_DISTANCE)]
            ):
                reader.backup(words[2], words[4], number)
                continue
        elif text.startswith("set interfaces ") and len(parts) > 3:
            rest = parts[3:]
            if _junos_address(reader, parts[2], rest, number):
                continue
            if _junos_inert(rest):
                continue
        elif not text or text[0] == "#" or text.startswith(_JUNOS_INERT):
            continue
        reader.unparsed(number, text)
    reader.routes(prefixes, hops, lines)


def _junos_address(reader: SwitchReader, interface: str, rest: list[str], line: int) -> bool:
    """`unit U family inet|inet6 address A`: lo0 is the loopback, irb.U a host gateway."""
    if not (len(rest) == 6 and rest[0] == "unit" and rest[2] == "family"):
        return False
    if rest[3] not in ("inet", "inet6") or rest[4] != "address":
        return False
    if interface == _JUNOS_LOOPBACK:
        port = LOOPBACK
    elif interface == "irb":
        port = f"irb.{rest[1]}"
    else:
        port = interface
    reader.address(port, rest[5], line)
    return True


def _junos_inert(rest: list[str]) -> bool:
    """Descriptions (of the port or a unit), family MTUs, host ports' switching statements."""
    if " ".join(rest).startswith(_JUNOS_INTERFACE_INERT):
        return True
    unit = len(rest) > 2 and rest[0] == "unit"
    return unit and (rest[2] == "description" or (len(rest) == 6 and rest[4] == "mtu"))
