"""Reads an `eos` running-config back for `fatpaths verify` (see verify.readers): every
statement the templates render is read or known to carry nothing the forwarding check needs;
any other line is reported as unparsed."""

from __future__ import annotations

from fatpaths_cfg.verify.model import TrunkLine
from fatpaths_cfg.verify.readers import BACKUP, LOOPBACK, SwitchReader, lines_of

# EOS statements that carry nothing the forwarding check needs (descriptions, VLAN names,
# switchport modes, storm control, routing switches). Anything else must be understood.
_EOS_INERT = (
    "hostname ",
    "vlan ",
    "name ",
    "description ",
    "no switchport",
    "switchport ",
    "ipv6 enable",
    "ip routing",
    "ipv6 unicast-routing",
    "spanning-tree ",
    "storm-control ",
    "mtu ",
    "end",
)


def parse_vlan_list(text: str) -> frozenset[int] | None:
    """EOS allowed-VLAN lists: `100-102,105` or `none`; None when it is neither."""
    if text == "none":
        return frozenset()
    vlans: set[int] = set()
    for part in text.split(","):
        low, _, high = part.partition("-")
        if not low.isdigit() or (high and not high.isdigit()):
            return None
        vlans.update(range(int(low), int(high or low) + 1))
    return frozenset(vlans)


def read_eos(reader: SwitchReader, relative: str) -> None:
    """The running-config: routes, interface addresses, static MACs and trunks' VLANs."""
    path = reader.open(relative)
    reader.parsed.switch_file[reader.name] = reader.file
    interface = ""
    for number, text in lines_of(path):
        if text.startswith(("ip route ", "ipv6 route ")):
            parts = text.split()
            if len(parts) == 4:
                reader.route(parts[2], parts[3], number)
                continue
            if len(parts) == 5 and parts[4] == BACKUP:
                reader.backup(parts[2], parts[3], number)
                continue
        elif text.startswith("interface "):
            interface = text.split(None, 1)[1]
            continue
        elif text.startswith(("ip address ", "ipv6 address ")):
            parts = text.split()
            if interface and (len(parts) == 3 or parts[3:] == ["secondary"]):
                port = LOOPBACK if interface == "Loopback0" else interface
                reader.address(port, parts[2], number)
                continue
        elif text.startswith("mac address-table static "):
            parts = text.split()
            if (
                len(parts) == 8
                and parts[4] == "vlan"
                and parts[5].isdigit()
                and parts[6] == "interface"
            ):
                reader.mac_entry(int(parts[5]), parts[3], parts[7], number)
                continue
        elif text.startswith("switchport trunk allowed vlan ") and interface:
            vlans = parse_vlan_list(text.split()[-1])
            if vlans is not None:
                reader.parsed.trunks.append(
                    TrunkLine(reader.name, interface, vlans, reader.file, number)
                )
                continue
        elif not text or text.startswith("!") or text.startswith(_EOS_INERT):
            if text == "!":
                interface = ""
            continue
        reader.unparsed(number, text)
