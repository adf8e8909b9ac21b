"""Batfish checks against a real Batfish server at $BATFISH_HOST (no fake server).

Marked `batfish`: CI deselects them (`-m "not batfish"`); selected without BATFISH_HOST they
fail, because a silently skipped proof is no proof. Start a server with
`docker run -d -p 9996:9996 -p 9997:9997 batfish/allinone`, then
`BATFISH_HOST=localhost pytest -m batfish`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.cli import build_app
from fatpaths_cfg.platforms import PLATFORMS
from fatpaths_cfg.verify.batfish import BatfishResult, check_with_batfish, is_ipv6_statement

INVENTORY = Path(__file__).resolve().parent.parent / "inventories" / "slimfly-q5.yaml"
DUAL = Path(__file__).resolve().parent / "golden" / "hand6-dual.yaml"
HAND6 = INVENTORY.parent / "hand-6.yaml"

pytestmark = pytest.mark.batfish


def _host() -> str:
    host = os.environ.get("BATFISH_HOST")
    if not host:
        pytest.fail("BATFISH_HOST is not set: these tests need a real Batfish server")
    return host


def _compile(out: Path, platform: str, inventory: Path = INVENTORY) -> Path:
    compiled = api.compile_fabric(inventory)
    api.build_output(compiled, platforms=[platform], batfish=True).commit(out)
    return out


# The platforms Batfish reads as they are (the others are modelled as one of these).
BATFISH_NATIVE = [name for name, p in PLATFORMS.items() if p.snapshot.folder is not None]


def _failures(result: BatfishResult) -> list[str]:
    return [f"{c.name}: {f}" for c in result.checks if not c.ok for f in c.failures or [c.detail]]


@pytest.mark.parametrize("platform", BATFISH_NATIVE)
def test_batfish_agrees_with_the_compiled_fabric(tmp_path: Path, platform: str) -> None:
    host = _host()
    out = _compile(tmp_path / platform, platform)
    result = check_with_batfish(out, host)
    assert _failures(result) == []
    names = [c.name for c in result.checks]
    assert names == [
        "files parsed",
        "no parse warnings",
        "no init issues",
        "no undefined references",
        "static routes match fabric.json",
        "traceroutes follow compiled paths",
    ]
    traceroutes = result.checks[-1]
    assert traceroutes.detail.startswith("48 host pairs")  # 4 layers x 12 sampled pairs


def test_batfish_sees_a_route_moved_to_another_neighbour(tmp_path: Path) -> None:
    host = _host()
    out = _compile(tmp_path / "eos", "eos")
    config = sorted((out / "batfish" / "configs").glob("*.cfg"))[0]
    text = config.read_text()
    match = re.search(r"^ip route (\S+) (\S+)$", text, flags=re.MULTILINE)
    assert match is not None
    other = next(
        hop
        for hop in re.findall(r"^ip route \S+ (\S+)$", text, flags=re.MULTILINE)
        if hop != match.group(2)
    )
    config.write_text(text.replace(match.group(0), f"ip route {match.group(1)} {other}", 1))
    result = check_with_batfish(out, host)
    routes = next(c for c in result.checks if c.name == "static routes match fabric.json")
    assert not routes.ok
    assert any(match.group(1) in failure for failure in routes.failures)


def _parse_eos(tmp_path: Path, inventory: Path, name: str) -> tuple[Any, Any]:
    from pybatfish.client.session import Session

    out = _compile(tmp_path / name, "eos", inventory)
    bf = Session(host=_host())
    bf.set_network("fatpaths-eos-format")
    bf.init_snapshot(str(out / "batfish"), name=name, overwrite=True)
    status = bf.q.fileParseStatus().answer().frame()
    return status[
        status["File_Name"].str.startswith("configs/")
    ], bf.q.parseWarning().answer().frame()


# The vendor format Batfish must detect from each platform's snapshot file alone.
VENDOR_FORMATS = {"cumulus": "CUMULUS_CONCATENATED", "junos": "FLAT_JUNIPER", "nxos": "CISCO_NX"}


@pytest.mark.parametrize("platform", sorted(VENDOR_FORMATS))
def test_vendor_configs_parse_in_their_own_format_with_no_warning(
    tmp_path: Path, platform: str
) -> None:
    from pybatfish.client.session import Session

    out = _compile(tmp_path / platform, platform)
    bf = Session(host=_host())
    bf.set_network(f"fatpaths-{platform}-format")
    bf.init_snapshot(str(out / "batfish"), name=platform, overwrite=True)
    status = bf.q.fileParseStatus().answer().frame()
    configs = status[status["File_Name"].str.startswith("configs/")]
    assert len(configs) == 50
    assert set(configs["File_Format"]) == {VENDOR_FORMATS[platform]}
    assert set(configs["Status"]) == {"PASSED"}
    assert len(bf.q.parseWarning().answer().frame()) == 0
    assert len(bf.q.initIssues().answer().frame()) == 0
    # Layer-1 edges name the vendor ports, so every fabric link is an L3 edge in Batfish.
    fabric = api.compile_fabric(INVENTORY).fabric
    switches = {s.name.lower() for s in fabric.switches}
    edges = bf.q.layer3Edges().answer().frame()
    between_switches = [
        row
        for _, row in edges.iterrows()
        if row["Interface"].hostname in switches and row["Remote_Interface"].hostname in switches
    ]
    assert len(between_switches) == 2 * len(fabric.links)


def test_eos_configs_parse_as_arista_with_no_warning(tmp_path: Path) -> None:
    configs, warnings = _parse_eos(tmp_path, HAND6, "eos-v4")
    assert len(configs) == 6
    assert set(configs["File_Format"]) == {"ARISTA"}
    assert set(configs["Status"]) == {"PASSED"}
    assert len(warnings) == 0


def test_dual_stack_eos_parses_as_arista_and_only_ipv6_lines_may_be_unparsed(
    tmp_path: Path,
) -> None:
    """Batfish releases before mid-2026 do not parse `ipv6 unicast-routing` on Arista; newer
    ones do. Either way the files are Arista and nothing but IPv6 statements is left unread."""
    configs, warnings = _parse_eos(tmp_path, DUAL, "eos-dual")
    assert set(configs["File_Format"]) == {"ARISTA"}
    assert set(configs["Status"]) <= {"PASSED", "PARTIALLY_UNRECOGNIZED"}
    assert all(is_ipv6_statement(str(text)) for text in warnings["Text"])


@pytest.mark.parametrize("platform", BATFISH_NATIVE)
def test_dual_stack_fabric_passes_on_ipv4_and_reports_ipv6_as_internal(
    tmp_path: Path, platform: str
) -> None:
    host = _host()
    out = _compile(tmp_path / platform, platform, DUAL)
    result = check_with_batfish(out, host)
    assert _failures(result) == []
    assert result.families == ("v4",) and result.internal_only == ("v6",)
    routes = next(c for c in result.checks if c.name == "static routes match fabric.json")
    assert routes.detail == "90 IPv4 routes"
    # The command line says it plainly and passes.
    command = CliRunner().invoke(build_app(), ["verify", str(out), "--batfish", host])
    assert command.exit_code == 0, command.output
    assert "IPv6 routes checked by the internal checker only" in command.output
    assert "PASS" in command.output
