"""Reads a `cumulus` interfaces file back for `fatpaths verify` (its frr.conf is read as frr's).

As everywhere in verify, every statement fatpaths renders is either read or known to carry
nothing the forwarding check needs; any other line is reported as unparsed. Interface names are
Cumulus' (`swp7`) and go back to inventory ports through the reader's name map.
"""

from __future__ import annotations

from fatpaths_cfg.verify.readers import SwitchReader

# ifupdown2 stanza properties fatpaths renders besides addresses.
_CUMULUS_INERT = (
    "auto ",
    "alias ",
    "mtu ",
    "bridge-access ",
    "bridge-vlan-aware ",
    "bridge-ports ",
    "bridge-vids ",
    "vlan-id ",
    "vlan-raw-device ",
)


def read_cumulus_interfaces(reader: SwitchReader, relative: str) -> None:
    """/etc/network/interfaces: `iface NAME` opens a stanza, `address A` inside it."""
    path = reader.open(relative)
    reader.parsed.address_file[reader.name] = reader.file
    interface = ""
    with path.open(encoding="utf-8") as handle:
        for number, raw in enumerate(handle, start=1):
            text = raw.strip()
            if not text or text[0] == "#":
                continue
            if text.startswith("iface "):
                interface = text.split()[1]
                continue
            parts = text.split()
            if parts[0] == "address" and len(parts) == 2 and interface:
                reader.address(interface, parts[1], number)
                continue
            if text.startswith(_CUMULUS_INERT):
                continue
            reader.unparsed(number, text)
