"""Parallel dataplanes, host side: host plans with one uplink per plane, the low-latency table,
and the forwarding checker's proof that no packet changes plane."""

from __future__ import annotations

import csv
import io
import ipaddress
import json
import re
import shutil
from collections import deque
from pathlib import Path
from typing import Any

import pytest

from fatpaths_cfg import api
from fatpaths_cfg.compiled import load_compiled
from fatpaths_cfg.verify.checker import check_forwarding
from fatpaths_cfg.verify.findings import CROSS_PLANE, Finding
from fatpaths_cfg.verify.readers import read_configs

REPO = Path(__file__).resolve().parent.parent
HAND2 = REPO / "inventories" / "hand-2planes.yaml"
JELLYFISH4 = REPO / "inventories" / "jellyfish-4planes.yaml"


def compiled(inventory: Path, out: Path) -> Path:
    api.build_output(api.compile_fabric(inventory)).commit(out)
    return out


@pytest.fixture(scope="module")
def hand2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compiled(HAND2, tmp_path_factory.mktemp("hand2") / "out")


@pytest.fixture(scope="module")
def hand2_dual(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hand2-dual")
    text = HAND2.read_text().replace("fabric: hand-2planes", "fabric: hand-2planes-dual")
    inventory = folder / "hand-2planes-dual.yaml"
    inventory.write_text(text + "addressing: {family: dual}\n")
    return compiled(inventory, folder / "out")


def rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text())))


def fabric_json(out: Path) -> Any:
    """fabric.json as written (these tests check the file itself)."""
    return json.loads((out / "fabric.json").read_text(encoding="utf-8"))


def plane_hops(out: Path) -> dict[tuple[str, str], int]:
    """Switch-to-switch hop counts by BFS over fabric.json's links (links never cross planes)."""
    data = fabric_json(out)
    neighbours: dict[str, list[str]] = {s["name"]: [] for s in data["switches"]}
    for link in data["links"]:
        a, b = link["a"]["switch"], link["b"]["switch"]
        neighbours[a].append(b)
        neighbours[b].append(a)
    hops: dict[tuple[str, str], int] = {}
    for source in neighbours:
        seen, queue = {source: 0}, deque([source])
        while queue:
            here = queue.popleft()
            for there in neighbours[here]:
                if there not in seen:
                    seen[there] = seen[here] + 1
                    queue.append(there)
        hops.update({(source, t): d for t, d in seen.items()})
    return hops


def test_host_plan_has_one_uplink_address_set_and_route_per_plane(hand2: Path) -> None:
    data = fabric_json(hand2)
    addresses = rows(hand2 / "hosts" / "addresses.csv")
    gateways = {
        (s["name"], sub["layer"]): sub["gateway_v4"]
        for s in data["addressing"]["switches"]
        for sub in s["subnets"]
    }
    for host in data["hosts"]:
        plan = (hand2 / "hosts" / f"{host['name']}.sh").read_text()
        for uplink in host["uplinks"]:
            device = f"eth{uplink['plane']}"
            cable = f"{device} to {uplink['switch']} {uplink['port']}"
            assert f"# plane {uplink['plane']}: {cable}\n" in plan
            mine = [
                r["address"]
                for r in addresses
                if r["host"] == host["name"] and int(r["plane"]) == uplink["plane"]
            ]
            assert len(mine) == len(data["layers"])
            for address in mine:
                assert f"ip addr replace {address} dev {device}\n" in plan
            # One route per plane: that plane's block via its layer-1 gateway, from its address.
            route = re.search(rf"ip route replace (\S+) via (\S+) dev {device} src (\S+)\n", plan)
            assert route is not None, plan
            block, gateway, source = route.groups()
            assert gateway == gateways[(uplink["switch"], 1)]
            assert source == mine[0].split("/")[0]
            assert all(
                (int(r["plane"]) == uplink["plane"]) == _inside(r["address"].split("/")[0], block)
                for r in addresses
            )


def _inside(address: str, block: str) -> bool:
    return ipaddress.ip_address(address) in ipaddress.ip_network(block)


def test_every_uplink_is_shaped(tmp_path: Path) -> None:
    inventory = tmp_path / "shaped.yaml"
    shaped = "  link_speed: 50G\n  host_flow_rate: 10G"
    text = HAND2.read_text().replace("  link_speed: 50G", shaped)
    inventory.write_text(text)
    plan = (compiled(inventory, tmp_path / "out") / "hosts" / "h3.sh").read_text()
    shaped = re.findall(r"tc qdisc replace dev (eth\d) root fq maxrate 10000mbit", plan)
    assert shaped == ["eth0", "eth1"]


def test_mptcp_endpoints_on_every_plane_and_layer(hand2: Path) -> None:
    addresses = rows(hand2 / "hosts" / "addresses.csv")
    plan = (hand2 / "hosts" / "h1.sh").read_text()
    endpoints = re.findall(r"ip mptcp endpoint add (\S+) dev (\S+) signal", plan)
    mine = [
        (r["address"].split("/")[0], f"eth{r['plane']}") for r in addresses if r["host"] == "h1"
    ]
    # Every (plane, layer) address but the one a connection opens on (plane 0, layer 1).
    assert endpoints == mine[1:]
    assert len(endpoints) == 2 * 2 - 1
    assert "ip mptcp limits set subflow 6 add_addr_accepted 3\n" in plan


def test_mptcp_limits_per_family_sized_to_planes_times_layers(hand2_dual: Path) -> None:
    plan = (hand2_dual / "hosts" / "h2.sh").read_text()
    endpoints = re.findall(r"ip mptcp endpoint add (\S+) dev (eth\d) signal", plan)
    v6 = [e for e in endpoints if ":" in e[0]]
    v4 = [e for e in endpoints if ":" not in e[0]]
    assert len(v6) == len(v4) == 2 * 2 - 1
    assert endpoints == v6 + v4  # IPv6 first, see render/hosts.py
    assert {device for _, device in endpoints} == {"eth0", "eth1"}
    assert "ip mptcp limits set subflow 6 add_addr_accepted 3\n" in plan
    assert re.search(r"ip -6 route replace \S+ via \S+ dev eth1 src \S+\n", plan)


def test_mptcp_limits_capped_by_the_kernel(tmp_path: Path) -> None:
    out = compiled(JELLYFISH4, tmp_path / "jf4")
    plan = (out / "hosts" / f"{load_compiled(out).fabric.hosts[0].name}.sh").read_text()
    endpoints = re.findall(r"ip mptcp endpoint add \S+ dev (eth\d) signal", plan)
    layers = len(load_compiled(out).layers)
    assert len(endpoints) == 4 * layers - 1
    assert {f"eth{p}" for p in range(4)} == set(endpoints)
    accepted = min(4 * layers - 1, 8)
    subflows = min(2 * accepted, 8)
    assert f"ip mptcp limits set subflow {subflows} add_addr_accepted {accepted}\n" in plan


def test_low_latency_table_takes_the_fewest_hop_plane(hand2: Path) -> None:
    data = fabric_json(hand2)
    hops = plane_hops(hand2)
    uplinks = {h["name"]: [u["switch"] for u in h["uplinks"]] for h in data["hosts"]}
    number = {h["name"]: h["index"] for h in data["hosts"]}
    address = {
        (r["host"], int(r["plane"]), int(r["layer"])): r["address"].split("/")[0]
        for r in rows(hand2 / "hosts" / "addresses.csv")
    }
    chose_each_plane = set()
    for host in uplinks:
        table = rows(hand2 / "hosts" / f"{host}.low-latency.csv")
        assert sorted(r["destination"] for r in table) == sorted(set(uplinks) - {host})
        for row in table:
            dest = row["destination"]
            per_plane = [hops[(a, b)] for a, b in zip(uplinks[host], uplinks[dest], strict=True)]
            plane = int(row["plane"])
            assert int(row["hops"]) == per_plane[plane] == min(per_plane)
            # Ties rotate by the host pair, the same plane both ways.
            tied = [p for p, hops in enumerate(per_plane) if hops == min(per_plane)]
            assert plane == tied[(number[host] + number[dest]) % len(tied)]
            assert row["address"] == address[(dest, plane, 1)]
            assert row["source"] == address[(host, plane, 1)]
            chose_each_plane.add(plane)
    # The two rings are cabled in different orders: some pairs are nearer in each plane.
    assert chose_each_plane == {0, 1}


def test_containerlab_topology_cables_every_plane(hand2: Path) -> None:
    text = (hand2 / "lab" / "hand-2planes.clab.yml").read_text()
    for host in fabric_json(hand2)["hosts"]:
        for uplink in host["uplinks"]:
            switch_end = f"    - {uplink['switch']}:{uplink['port']}\n"
            cable = f"{switch_end}    - {host['name']}:eth{uplink['plane']}\n"
            assert cable in text, text


def test_single_plane_fabrics_get_no_low_latency_table(tmp_path: Path) -> None:
    out = compiled(REPO / "inventories" / "hand-6.yaml", tmp_path / "hand6")
    assert not list((out / "hosts").glob("*.low-latency.csv"))


def _findings(out: Path) -> list[Finding]:
    loaded = load_compiled(out)
    return check_forwarding(loaded, read_configs(loaded, "frr")).findings


def test_verify_passes_a_multi_plane_fabric(hand2: Path) -> None:
    loaded = load_compiled(hand2)
    result = check_forwarding(loaded, read_configs(loaded, "frr"))
    assert result.ok, [str(f) for f in result.findings]
    # Walks only within a plane: 2 planes x 4 switches x 3 destinations, per layer.
    assert result.walks == len(loaded.layers) * 2 * 4 * 3


def _subnet(out: Path, switch: str, layer: int) -> str:
    loaded = load_compiled(out)
    assert loaded.addresses is not None and loaded.addresses.v4 is not None
    return loaded.addresses.v4.subnets[layer - 1][loaded.fabric.switch_index[switch]]


def _replace_route(out: Path, switch: str, prefix: str, new: str) -> int:
    path = out / "configs" / "frr" / switch / "frr.conf"
    lines = path.read_text().splitlines(keepends=True)
    for number, text in enumerate(lines, start=1):
        if text.startswith(f"ip route {prefix} "):
            lines[number - 1] = new
            path.write_text("".join(lines))
            return number
    raise AssertionError(f"no route to {prefix} in {path}")


def test_a_route_into_another_plane_is_a_cross_plane_fault(hand2: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(hand2, out)
    # a1 (plane 0) routes b3's layer-1 subnet (plane 1) instead of a3's, via its own neighbour.
    mine, theirs = _subnet(out, "a3", 1), _subnet(out, "b3", 1)
    path = out / "configs" / "frr" / "a1" / "frr.conf"
    hop = next(line.split()[3] for line in path.read_text().splitlines() if f" {mine} " in line)
    line = _replace_route(out, "a1", mine, f"ip route {theirs} {hop}\n")
    findings = _findings(out)
    crossing = [f for f in findings if f.kind == CROSS_PLANE]
    assert len(crossing) == 1, [str(f) for f in findings]
    found = crossing[0]
    assert found.location is not None
    assert (found.location.file, found.location.line) == ("configs/frr/a1/frr.conf", line)
    assert "destination b3 is in plane 1" in found.message
    assert found.source == "a1"


def test_a_next_hop_in_another_plane_is_a_cross_plane_fault(hand2: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(hand2, out)
    loaded = load_compiled(out)
    # A next hop on a plane-1 link: the far end (b-side) of the first plane-1 link.
    index = next(k.index for k in loaded.fabric.links if loaded.fabric.switches[k.a].plane == 1)
    assert loaded.addresses is not None and loaded.addresses.v4 is not None
    far = loaded.addresses.v4.links[index][1].split("/")[0]
    mine = _subnet(out, "a3", 1)
    line = _replace_route(out, "a1", mine, f"ip route {mine} {far}\n")
    crossing = [f for f in _findings(out) if f.kind == CROSS_PLANE]
    assert len(crossing) == 1
    assert crossing[0].location is not None and crossing[0].location.line == line
    assert "next hop" in crossing[0].message and "plane 1" in crossing[0].message
