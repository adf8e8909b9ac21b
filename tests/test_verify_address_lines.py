"""The native readers of switch scripts and host plans read exactly what the Python readers
read: same addresses, host routes and unparsed lines in the same order, and text they cannot
vouch for left to Python."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fatpaths_cfg import _native
from fatpaths_cfg.verify import readers
from fatpaths_cfg.verify.model import ParsedConfigs
from fatpaths_cfg.verify.readers import _SwitchReader

SWITCH_SCRIPT = (
    "#!/bin/sh\n"
    "set -e\n"
    "sysctl -qw net.ipv4.ip_forward=1\n"
    "ip link set dev lo up\n"
    "  ip addr replace 192.168.0.1/32 dev lo  \r\n"
    "ip -6 addr replace fd00::1/64 dev e1 noprefixroute\n"
    "ip route replace 10.0.0.2/32 dev e2\n"
    "ip -6 route replace fd00::2/128 dev e2\n"
    "ip route replace 10.0.0.3/32 dev e2 metric 5\n"
    "ip route replace 10.0.1.0/24 via 172.16.0.1\n"
    "ip addr replace 10.0.0.4/31\n"
    "ip -6 neigh replace proxy fd00::9 dev e1\n"
    "\n"
    "x addr replace 10.0.0.5/31 dev e3\n"
    "bogus\n"
)
# A form feed and a non-ASCII interface: Python's strip/split decide these lines.
ODD_SCRIPT = "ip addr replace 10.0.0.6/31 dev e4\x0c\nip addr replace 10.0.0.7/31 dev \u00e9\n"
HOST_PLAN = (
    "#!/bin/sh\n"
    "# addresses: one per layer (addr replace)\n"
    "ip addr replace 10.0.0.2/27 dev eth1\n"
    "ip -6 addr replace fd00::2/64\n"
    "ip addr replace 10.0.0.3/27 dev\n"
    "ip route replace default via 10.0.0.1\n"
    "ip mptcp endpoint add 10.0.0.2 dev eth0 signal\n"
)
ODD_PLAN = "ip addr replace 10.0.0.9/27 dev eth\u00e9\n"


def _no_native(*_args: Any) -> None:
    return None


def _read_switches(tmp_path: Path, texts: list[str]) -> ParsedConfigs:
    parsed = ParsedConfigs("frr")
    for switch, text in enumerate(texts):
        relative = f"s{switch}.sh"
        (tmp_path / relative).write_text(text, encoding="utf-8", newline="")
        reader = _SwitchReader(parsed, tmp_path, f"s{switch}", switch, {"e1": "Ethernet1"})
        reader.shell(relative, routes=False)
    return parsed


@pytest.mark.parametrize("texts", [[SWITCH_SCRIPT], [SWITCH_SCRIPT, ODD_SCRIPT, SWITCH_SCRIPT]])
def test_native_and_python_switch_readers_agree(
    tmp_path: Path, texts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    native = _read_switches(tmp_path, texts)
    monkeypatch.setattr(_native, "read_shell_addresses", _no_native)
    python = _read_switches(tmp_path, texts)
    assert native.switch_addresses == python.switch_addresses
    assert native.host_routes == python.host_routes
    assert native.unparsed == python.unparsed
    assert native.address_file == python.address_file
    assert ("s0", "Ethernet1", "fd00::1/64", 0, 6) in native.switch_addresses
    assert ("s0", "e2", "fd00::2/128", 0, 8) in native.host_routes
    assert (0, 9, "ip route replace 10.0.0.3/32 dev e2 metric 5") in native.unparsed


def test_native_switch_reader_leaves_odd_text_to_python(tmp_path: Path) -> None:
    (tmp_path / "odd.sh").write_text(ODD_SCRIPT, encoding="utf-8")
    assert _native.read_shell_addresses(str(tmp_path / "odd.sh")) is None
    assert _native.read_shell_addresses(str(tmp_path / "missing.sh")) is None


def test_native_and_python_host_plan_readers_agree(tmp_path: Path) -> None:
    paths = []
    for name, text in (("plain", HOST_PLAN), ("odd", ODD_PLAN)):
        (tmp_path / f"{name}.sh").write_text(text, encoding="utf-8", newline="")
        paths.append(str(tmp_path / f"{name}.sh"))
    native = _native.read_host_plans([*paths, str(tmp_path / "missing.sh")])
    assert native[0] == readers._host_plan_addresses(paths[0])
    assert native[0] == [
        (3, "eth1", "10.0.0.2/27"),
        (4, "eth0", "fd00::2/64"),
        (5, "eth0", "10.0.0.3/27"),
    ]
    assert native[1:] == [None, None]
    assert readers._host_plan_addresses(paths[1]) == [(1, "eth\u00e9", "10.0.0.9/27")]
