"""The checker core on routes built in memory from a compiled fabric (no renderer involved).

The routes and addresses come straight from the compiled model, so that these tests pin the
checker's logic independently of the renderer; tests/test_verify_mutations.py does the same
on the real rendered files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fatpaths_cfg import api
from fatpaths_cfg.compiled import FamilyAddresses, LoadedCompiled, load_compiled
from fatpaths_cfg.verify.checker import check_forwarding
from fatpaths_cfg.verify.findings import (
    BAD_NEXT_HOP,
    MISSING_ADDRESS,
    MISSING_ROUTE,
    NOT_SHORTEST,
    OUTSIDE_LAYER,
    UP_DOWN_TURN,
)
from fatpaths_cfg.verify.model import AddressLine, ParsedConfigs

INVENTORIES = Path(__file__).resolve().parent.parent / "inventories"


@pytest.fixture(scope="module", params=["slimfly-q5", "slimfly-q5-acyclic"])
def compiled_dir(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp(request.param)
    api.compile_to_directory(INVENTORIES / f"{request.param}.yaml", out)
    return out


def _v4(loaded: LoadedCompiled) -> FamilyAddresses:
    assert loaded.addresses is not None and loaded.addresses.v4 is not None
    return loaded.addresses.v4


def _configs(loaded: LoadedCompiled) -> ParsedConfigs:
    """Routes exactly as fabric.json and routing.npz say, one file per switch."""
    plan = _v4(loaded)
    assert plan.gateways is not None
    fabric = loaded.fabric
    parsed = ParsedConfigs("test")
    for s in fabric.switches:
        file = parsed.file_index(f"configs/test/{s.name}.conf")
        parsed.switch_file[s.name] = file
        parsed.configured_switches.add(s.name)
        line = 1
        loopback = AddressLine(s.name, "lo", plan.loopbacks[s.index], file, line)
        parsed.switch_addresses.append(loopback)
        line += 1
        for wiring, sides in zip(fabric.links, plan.links, strict=True):
            for address, owner, port in (
                (sides[0], wiring.a, wiring.a_port),
                (sides[1], wiring.b, wiring.b_port),
            ):
                if owner == s.index:
                    parsed.switch_addresses.append(AddressLine(s.name, port, address, file, line))
                    line += 1
        for layer, row in enumerate(plan.gateways):
            length = plan.subnets[layer][s.index].split("/")[1]
            gateway = f"{row[s.index]}/{length}"
            parsed.switch_addresses.append(AddressLine(s.name, "Ethernet9", gateway, file, line))
            line += 1
        for layer in range(loaded.next_hop.shape[0]):
            for t in range(fabric.nr):
                n = int(loaded.next_hop[layer, s.index, t])
                if n < 0:
                    continue
                link_index = fabric.link_between[(s.index, n)]
                wiring = fabric.links[link_index]
                address = plan.links[link_index][0 if wiring.a == n else 1]
                parsed.routes.switch.append(s.index)
                parsed.routes.prefix.append(plan.subnets[layer][t])
                parsed.routes.next_hop.append(address.split("/")[0])
                parsed.routes.file.append(file)
                parsed.routes.line.append(line)
                line += 1
    return parsed


def _row(parsed: ParsedConfigs, loaded: LoadedCompiled, layer: int, s: int, t: int) -> int:
    prefix = _v4(loaded).subnets[layer - 1][t]
    for i, (sw, p) in enumerate(zip(parsed.routes.switch, parsed.routes.prefix, strict=True)):
        if sw == s and p == prefix:
            return i
    raise AssertionError("route not found")


def _neighbour_address(loaded: LoadedCompiled, s: int, n: int) -> str:
    link_index = loaded.fabric.link_between[(s, n)]
    side = 0 if loaded.fabric.links[link_index].a == n else 1
    return _v4(loaded).links[link_index][side].split("/")[0]


def test_correct_tables_pass_and_every_pair_is_walked(compiled_dir: Path) -> None:
    loaded = load_compiled(compiled_dir)
    result = check_forwarding(loaded, _configs(loaded))
    assert [str(f) for f in result.findings] == []
    layers, nr = loaded.next_hop.shape[:2]
    assert result.walks == layers * nr * (nr - 1)
    assert result.routes == layers * nr * (nr - 1)


def test_deleted_route_is_a_black_hole_at_that_switch(compiled_dir: Path) -> None:
    loaded = load_compiled(compiled_dir)
    parsed = _configs(loaded)
    row = _row(parsed, loaded, 2, 3, 17)
    for column in ("switch", "prefix", "next_hop", "file", "line"):
        del getattr(parsed.routes, column)[row]
    findings = check_forwarding(loaded, parsed).findings
    names = [s.name for s in loaded.fabric.switches]
    assert [(f.kind, f.layer, f.source, f.destination) for f in findings] == [
        (MISSING_ROUTE, 2, names[3], names[17])
    ]
    assert findings[0].location is not None and findings[0].location.line == 0
    assert findings[0].walks_broken >= 1
    assert "is dropped" in findings[0].message


def test_route_towards_a_farther_neighbour_loops_and_names_the_line(compiled_dir: Path) -> None:
    loaded = load_compiled(compiled_dir)
    parsed = _configs(loaded)
    layer, s = 1, 0
    nh = loaded.next_hop[layer - 1]
    # Send s's traffic for t to a neighbour n that routes t straight back through s: a loop.
    candidates = [
        (t, n)
        for t in range(loaded.fabric.nr)
        for n in np.flatnonzero(loaded.fabric.adjacency[s].toarray()[0])
        if t != s and nh[n, t] == s
    ]
    t, n = candidates[0]
    row = _row(parsed, loaded, layer, s, t)
    parsed.routes.next_hop[row] = _neighbour_address(loaded, s, int(n))
    findings = check_forwarding(loaded, parsed).findings
    assert len(findings) == 1
    (finding,) = findings
    expected_kind = UP_DOWN_TURN if loaded.layers[0].up_down_rank else NOT_SHORTEST
    assert finding.kind in (NOT_SHORTEST, expected_kind)
    assert finding.location is not None
    assert finding.location.line == parsed.routes.line[row]
    assert "loops" in finding.message
    assert finding.path[0] == finding.path[2] == loaded.fabric.switches[s].name


def test_route_over_a_link_outside_the_layer_is_caught(compiled_dir: Path) -> None:
    loaded = load_compiled(compiled_dir)
    parsed = _configs(loaded)
    mask = loaded.layer_masks[1]
    fabric = loaded.fabric
    outside = int(np.flatnonzero(~mask)[0])
    link = fabric.links[outside]
    s, n = link.a, link.b
    t = int(np.flatnonzero(np.arange(fabric.nr) != s)[0])
    t = n if t == s else t
    row = _row(parsed, loaded, 2, s, t)
    parsed.routes.next_hop[row] = _neighbour_address(loaded, s, n)
    findings = check_forwarding(loaded, parsed).findings
    assert [f.kind for f in findings] == [OUTSIDE_LAYER]
    assert findings[0].location is not None
    assert findings[0].location.line == parsed.routes.line[row]
    assert f"link {outside}" in findings[0].message


def test_next_hop_of_a_stranger_and_missing_address_are_named(compiled_dir: Path) -> None:
    loaded = load_compiled(compiled_dir)
    parsed = _configs(loaded)
    row = _row(parsed, loaded, 1, 0, 5)
    # An address of a link between two other switches: not reachable from switch 0.
    stranger = next(li for li in loaded.fabric.links if 0 not in (li.a, li.b))
    parsed.routes.next_hop[row] = _neighbour_address(loaded, stranger.a, stranger.b)
    dropped = parsed.switch_addresses.pop(0)
    findings = check_forwarding(loaded, parsed).findings
    kinds = sorted(f.kind for f in findings)
    assert kinds == sorted([BAD_NEXT_HOP, MISSING_ADDRESS])
    missing = next(f for f in findings if f.kind == MISSING_ADDRESS)
    assert dropped.port in missing.message and missing.source == dropped.owner
