"""Reads an `nxos` running-config back for `fatpaths verify`.

As everywhere in verify, every statement fatpaths renders is either read or known to carry
nothing the forwarding check needs; any other line is reported as unparsed. Interface names are
NX-OS' (`Ethernet1/7`) and go back to inventory ports through the reader's name map.
"""

from __future__ import annotations

from fatpaths_cfg.render.base import BACKUP_DISTANCE
from fatpaths_cfg.verify.readers import LOOPBACK, SwitchReader

_NXOS_INERT = (
    "version ",
    "hostname ",
    "feature ",
    "no system default switchport",
    "vlan ",
    "name ",
    "description ",
    "no shutdown",
    "mtu ",
    "switchport",
    "no switchport",
)
_NXOS_LOOPBACK = "loopback0"


def read_nxos(reader: SwitchReader, relative: str) -> None:
    """NX-OS running-config: global `ip route`s, and addresses of the interface whose indented
    block they sit in (a line at column 0 closes the block)."""
    path = reader.open(relative)
    reader.parsed.switch_file[reader.name] = reader.file
    prefixes: list[str] = []
    hops: list[str] = []
    lines: list[int] = []
    interface = ""
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        text = raw.strip()
        if raw[:1] not in (" ", "\t"):
            interface = ""
        if text.startswith(("ip route ", "ipv6 route ")) and not interface:
            parts = text.split()
            if len(parts) == 4:
                prefixes.append(parts[2])
                hops.append(parts[3])
                lines.append(number)
                continue
            if len(parts) == 5 and parts[4] == str(BACKUP_DISTANCE):
                reader.backup(parts[2], parts[3], number)
                continue
        elif text.startswith("interface ") and raw[0] == "i":
            interface = text.split(None, 1)[1]
            continue
        elif text.startswith(("ip address ", "ipv6 address ")) and interface:
            parts = text.split()
            if len(parts) == 3 or parts[3:] == ["secondary"]:
                port = LOOPBACK if interface == _NXOS_LOOPBACK else interface
                reader.address(port, parts[2], number)
                continue
        elif not text or text[0] == "!" or text.startswith(_NXOS_INERT):
            continue
        reader.unparsed(number, text)
    reader.routes(prefixes, hops, lines)
