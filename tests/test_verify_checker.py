"""The checker core on routes built in memory from a compiled fabric (no renderer involved).

The address plan here is a minimal one of the contract's shape, so that these tests pin the
checker's logic independently of the renderer; tests/test_verify_mutations.py does the same
on the real rendered files.
"""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path

import numpy as np
import pytest

from fatpaths_cfg import api
from fatpaths_cfg.compiled import LoadedCompiled, load_compiled
from fatpaths_cfg.verify.checker import (
    BAD_NEXT_HOP,
    MISSING_ADDRESS,
    MISSING_ROUTE,
    NOT_SHORTEST,
    OUTSIDE_LAYER,
    UP_DOWN_TURN,
    check_forwarding,
)
from fatpaths_cfg.verify.model import AddressLine, ParsedConfigs

INVENTORIES = Path(__file__).resolve().parent.parent / "inventories"


def _plan(data: dict[str, object]) -> dict[str, object]:
    switches = data["switches"]  # type: ignore[index]
    links = data["links"]  # type: ignore[index]
    layers = len(data["layers"])  # type: ignore[arg-type]
    subnets = ipaddress.ip_network("10.0.0.0/8").subnets(new_prefix=24)
    p2p = ipaddress.ip_network("172.16.0.0/12").subnets(new_prefix=31)
    plan_switches = []
    for sw in switches:  # type: ignore[attr-defined]
        entries = []
        for layer in range(1, layers + 1):
            net = next(subnets)
            entries.append({"layer": layer, "v4": str(net), "gateway_v4": str(net[1])})
        plan_switches.append({"name": sw["name"], "subnets": entries})
    plan_links = []
    for link in links:  # type: ignore[attr-defined]
        net = next(p2p)
        plan_links.append({"index": link["index"], "a_v4": f"{net[0]}/31", "b_v4": f"{net[1]}/31"})
    return {
        "encoding": "prefix",
        "family": "ipv4",
        "switches": plan_switches,
        "links": plan_links,
        "hosts": [],
        "vlans": [],
    }


@pytest.fixture(scope="module", params=["slimfly-q5", "slimfly-q5-acyclic"])
def compiled_dir(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp(request.param)
    api.compile_to_directory(INVENTORIES / f"{request.param}.yaml", out)
    data = json.loads((out / "fabric.json").read_text())
    data["addressing"] = _plan(data)
    (out / "fabric.json").write_text(json.dumps(data))
    return out


def _configs(loaded: LoadedCompiled) -> ParsedConfigs:
    """Routes exactly as fabric.json and routing.npz say, one file per switch."""
    plan = loaded.data["addressing"]
    fabric = loaded.fabric
    parsed = ParsedConfigs("test")
    subnet = {
        (e["layer"], i): e["v4"] for i, sw in enumerate(plan["switches"]) for e in sw["subnets"]
    }
    for s in fabric.switches:
        file = parsed.file_index(f"configs/test/{s.name}.conf")
        parsed.switch_file[s.name] = file
        parsed.configured_switches.add(s.name)
        line = 1
        for link in plan["links"]:
            wiring = fabric.links[link["index"]]
            for side, owner, port in (
                ("a", wiring.a, wiring.a_port),
                ("b", wiring.b, wiring.b_port),
            ):
                if owner == s.index:
                    parsed.switch_addresses.append(
                        AddressLine(s.name, port, link[f"{side}_v4"], file, line)
                    )
                    line += 1
        for entry in plan["switches"][s.index]["subnets"]:
            gateway = f"{entry['gateway_v4']}/24"
            parsed.switch_addresses.append(AddressLine(s.name, "Ethernet9", gateway, file, line))
            line += 1
        for layer in range(loaded.next_hop.shape[0]):
            for t in range(fabric.nr):
                n = int(loaded.next_hop[layer, s.index, t])
                if n < 0:
                    continue
                link = plan["links"][fabric.link_between[(s.index, n)]]
                wiring = fabric.links[link["index"]]
                address = link["a_v4"] if wiring.a == n else link["b_v4"]
                parsed.routes.switch.append(s.index)
                parsed.routes.prefix.append(subnet[(layer + 1, t)])
                parsed.routes.next_hop.append(address.split("/")[0])
                parsed.routes.file.append(file)
                parsed.routes.line.append(line)
                line += 1
    return parsed


def _row(parsed: ParsedConfigs, loaded: LoadedCompiled, layer: int, s: int, t: int) -> int:
    prefix = loaded.data["addressing"]["switches"][t]["subnets"][layer - 1]["v4"]
    for i, (sw, p) in enumerate(zip(parsed.routes.switch, parsed.routes.prefix, strict=True)):
        if sw == s and p == prefix:
            return i
    raise AssertionError("route not found")


def _neighbour_address(loaded: LoadedCompiled, s: int, n: int) -> str:
    link_index = loaded.fabric.link_between[(s, n)]
    link = loaded.data["addressing"]["links"][link_index]
    side = "a" if loaded.fabric.links[link_index].a == n else "b"
    return str(link[f"{side}_v4"].split("/")[0])


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
    expected_kind = UP_DOWN_TURN if loaded.data["layers"][0]["up_down_rank"] else NOT_SHORTEST
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
