"""The native route reader reads exactly what the Python reader reads: same rows, same names,
same unparsed lines, and files it cannot vouch for handed back to Python."""

from __future__ import annotations

from pathlib import Path

import pytest

from fatpaths_cfg import _native
from fatpaths_cfg.verify.model import ParsedConfigs
from fatpaths_cfg.verify.readers import FrrRouteBatch, _SwitchReader

FRR_CONF = (
    "frr defaults traditional\n"
    "hostname s0\n"
    "!\n"
    "ip route 10.0.1.0/24 10.1.0.1\n"
    "  ipv6 route fd00:0:0:1::/64   fd01::1  \r\n"
    "\n"
    "ip route 10.0.2.0/24\n"
    "ip route 10.0.3.0/24 10.1.0.1 extra\n"
    "router bgp 65000\n"
    "line vty\n"
    "ip route 10.0.1.0/24 10.1.0.3\n"
)
# A form feed and a non-ASCII next hop: Python's splitlines/strip decide these lines.
ODD_CONF = "ip route 10.0.4.0/24 10.1.0.9\x0c\nip route 10.0.5.0/24 10.1.0.\u00e9\n"


def _rows(parsed: ParsedConfigs) -> list[tuple[int, str, str, int, int]]:
    block = parsed.routes.interned()
    return [
        (
            int(block.switch[i]),
            block.prefix_names[block.prefix[i]],
            block.hop_names[block.next_hop[i]],
            int(block.file[i]),
            int(block.line[i]),
        )
        for i in range(len(block))
    ]


def _read(tmp_path: Path, texts: list[str], batched: bool) -> ParsedConfigs:
    parsed = ParsedConfigs("frr")
    batch = FrrRouteBatch()
    for switch, text in enumerate(texts):
        relative = f"s{switch}.conf"
        (tmp_path / relative).write_text(text, encoding="utf-8", newline="")
        reader = _SwitchReader(parsed, tmp_path, f"s{switch}", switch, {})
        reader.batch = batch if batched else None
        reader.frr_routes(relative)
    batch.read(parsed)
    return parsed


@pytest.mark.parametrize("texts", [[FRR_CONF], [FRR_CONF, ODD_CONF, FRR_CONF]])
def test_native_and_python_readers_agree(tmp_path: Path, texts: list[str]) -> None:
    native = _read(tmp_path, texts, batched=True)
    python = _read(tmp_path, texts, batched=False)
    assert sorted(_rows(native)) == sorted(_rows(python))
    assert sorted(native.unparsed) == sorted(python.unparsed)
    assert native.switch_file == python.switch_file
    assert (0, 7, "ip route 10.0.2.0/24") in native.unparsed
    assert (0, 9, "router bgp 65000") in native.unparsed
    assert len(native.routes.blocks) == 1


def test_native_reader_leaves_odd_text_to_python(tmp_path: Path) -> None:
    (tmp_path / "odd.conf").write_text(ODD_CONF, encoding="utf-8")
    (tmp_path / "plain.conf").write_text(FRR_CONF, encoding="utf-8")
    paths = [str(tmp_path / "odd.conf"), str(tmp_path / "plain.conf")]
    prefixes, hops, file, line, prefix, hop, _other, unread = _native.read_route_lines(paths)
    assert unread == [0]
    assert set(file.tolist()) == {1}
    assert [prefixes[p] for p in prefix] == ["10.0.1.0/24", "fd00:0:0:1::/64", "10.0.1.0/24"]
    assert [hops[h] for h in hop] == ["10.1.0.1", "fd01::1", "10.1.0.3"]
    assert line.tolist() == [4, 5, 11]
