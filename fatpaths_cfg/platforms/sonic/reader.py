"""Reads a `sonic` config_db.json back for `fatpaths verify` (its frr.conf is read as frr's)."""

from __future__ import annotations

import json

from fatpaths_cfg.verify.readers import LOOPBACK, SwitchReader


def read_config_db(reader: SwitchReader, relative: str) -> None:
    """SONiC config_db.json: addresses are the `PORT|ADDRESS` keys of the interface tables;
    the line is found by locating the key in the text (json keeps no positions)."""
    path = reader.open(relative)
    reader.parsed.address_file[reader.name] = reader.file
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        reader.unparsed(exc.lineno, f"invalid JSON: {exc.msg}")
        return
    line_of = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if stripped.startswith('"') and "|" in stripped:
            line_of[stripped.split('"')[1]] = number
    for table in ("INTERFACE", "LOOPBACK_INTERFACE", "VLAN_INTERFACE"):
        for key in data.get(table, {}):
            if "|" not in key:
                continue
            interface, address = key.split("|", 1)
            port = LOOPBACK if table == "LOOPBACK_INTERFACE" else interface
            reader.address(port, address, line_of.get(key, 0))
