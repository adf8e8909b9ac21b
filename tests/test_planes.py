"""Parallel dataplanes (P-Net): the fabric model, the inventory forms and the compile."""

from __future__ import annotations

import csv
import io
import ipaddress
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.api import load_fabric
from fatpaths_cfg.cli import build_app
from fatpaths_cfg.compiled import CompiledFabric, load_compiled
from fatpaths_cfg.fabric import Fabric, Host, Link, Switch, Uplink
from fatpaths_cfg.render.hosts import host_view, render_host
from fatpaths_cfg.render.switch_view import ViewBuilder
from fatpaths_cfg.routing import UNREACHABLE
from fatpaths_cfg.topology_stats import topology_stats


def two_plane_fabric() -> Fabric:
    """Two planes of two switches each; h0 and h1 attach to both planes."""
    switches = [
        Switch(i, f"p{i // 2 + 1}-s{i % 2}", "frr", "switch", ("e1", "e2", "e3"), None, i // 2)
        for i in range(4)
    ]
    links = [Link(0, 0, "e1", 1, "e1", 50.0), Link(1, 2, "e1", 3, "e1", 50.0)]
    hosts = [
        Host(0, "h0", 0, "e2", 50.0, None, (Uplink(0, 0, "e2"), Uplink(1, 2, "e2"))),
        Host(1, "h1", 1, "e2", 50.0, None, (Uplink(0, 1, "e2"), Uplink(1, 3, "e2"))),
    ]
    return Fabric("two", switches, links, hosts)


def test_single_plane_host_gets_its_one_uplink() -> None:
    host = Host(0, "h", 3, "Ethernet5", 100.0)
    assert host.uplinks == (Uplink(0, 3, "Ethernet5"),)
    fabric = Fabric("one", [Switch(0, "s", "frr", "switch", ("e1",))], [], [])
    assert fabric.planes == 1
    assert fabric.switches_of_plane(0) == [0]


def test_two_plane_model_invariants() -> None:
    fabric = two_plane_fabric()
    assert fabric.planes == 2
    assert fabric.switches_of_plane(0) == [0, 1]
    assert fabric.switches_of_plane(1) == [2, 3]
    assert fabric.hosts_of_switch == [[0], [1], [0], [1]]
    for host in fabric.hosts:
        assert [u.plane for u in host.uplinks] == [0, 1]
        assert (host.switch, host.port) == (host.uplinks[0].switch, host.uplinks[0].port)
        assert all(fabric.switches[u.switch].plane == u.plane for u in host.uplinks)


def test_host_rejects_inconsistent_uplinks() -> None:
    with pytest.raises(ValueError, match="first uplink"):
        Host(0, "h", 1, "e2", 1.0, None, (Uplink(0, 0, "e2"),))
    with pytest.raises(ValueError, match="one per plane"):
        Host(0, "h", 0, "e2", 1.0, None, (Uplink(0, 0, "e2"), Uplink(0, 1, "e2")))


ROOT = Path(__file__).resolve().parent.parent
HAND = ROOT / "inventories" / "hand-2planes.yaml"
JELLYFISH = ROOT / "inventories" / "jellyfish-4planes.yaml"


def fabric_of(tmp_path: Path, text: str) -> Fabric:
    path = tmp_path / "inventory.yaml"
    path.write_text(text, encoding="utf-8")
    return load_fabric(path)[1]


def plane_edges(fabric: Fabric, plane: int) -> set[tuple[str, str]]:
    """A plane's links by switch names without the plane prefix."""

    def rack(switch: int) -> str:
        return fabric.switches[switch].name.split("-", 1)[1]

    return {
        tuple(sorted((rack(link.a), rack(link.b))))  # type: ignore[misc]
        for link in fabric.links
        if fabric.switches[link.a].plane == plane
    }


def test_hand_written_two_planes() -> None:
    fabric = load_fabric(HAND)[1]
    assert fabric.planes == 2
    assert [fabric.switches[s].name for s in fabric.switches_of_plane(1)] == [
        "b1",
        "b2",
        "b3",
        "b4",
    ]
    for host in fabric.hosts:
        assert len(host.uplinks) == 2
        assert [fabric.switches[u.switch].plane for u in host.uplinks] == [0, 1]
    for link in fabric.links:
        assert fabric.switches[link.a].plane == fabric.switches[link.b].plane


def test_planes_inferred_from_uplink_order_match_the_explicit_ones(tmp_path: Path) -> None:
    text = HAND.read_text(encoding="utf-8").replace(", plane: 0", "").replace(", plane: 1", "")
    assert "plane: 0" not in text and "plane: 1" not in text
    inferred = fabric_of(tmp_path, text)
    explicit = load_fabric(HAND)[1]
    assert [s.plane for s in inferred.switches] == [s.plane for s in explicit.switches]
    assert inferred.hosts == explicit.hosts


def test_uplinks_listed_out_of_plane_order_are_sorted_by_plane(tmp_path: Path) -> None:
    text = HAND.read_text(encoding="utf-8").replace(
        "[a2:Ethernet3, b2:Ethernet3]", "[b2:Ethernet3, a2:Ethernet3]"
    )
    fabric = fabric_of(tmp_path, text)
    assert fabric.hosts == load_fabric(HAND)[1].hosts


def test_heterogeneous_planes_differ_and_homogeneous_repeat(tmp_path: Path) -> None:
    mixed = load_fabric(JELLYFISH)[1]
    assert mixed.planes == 4
    assert len({frozenset(plane_edges(mixed, p)) for p in range(4)}) == 4
    same = fabric_of(
        tmp_path,
        JELLYFISH.read_text(encoding="utf-8").replace(
            "heterogeneous: true", "heterogeneous: false"
        ),
    )
    assert len({frozenset(plane_edges(same, p)) for p in range(4)}) == 1
    # Plane 0 is the single-plane fabric of the same seed.
    assert plane_edges(same, 0) == plane_edges(mixed, 0)


def test_generated_planes_are_deterministic_and_cable_each_rack_in_every_plane() -> None:
    first, again = load_fabric(JELLYFISH)[1], load_fabric(JELLYFISH)[1]
    assert first.links == again.links and first.hosts == again.hosts
    assert len(first.hosts) == 8 * 4
    for host in first.hosts:
        racks = {first.switches[u.switch].name.split("-", 1)[1] for u in host.uplinks}
        assert len(racks) == 1 and host.name.startswith(racks.pop())


def test_one_plane_generates_the_same_inventory_as_no_planes(tmp_path: Path) -> None:
    plain = fabric_of(tmp_path, "fabric: f\ngenerate: {kind: fattree, k: 4}\n")
    one = fabric_of(tmp_path, "fabric: f\ngenerate: {kind: fattree, k: 4, planes: 1}\n")
    two = fabric_of(tmp_path, "fabric: f\ngenerate: {kind: fattree, k: 4, planes: 2}\n")
    assert (plain.switches, plain.links, plain.hosts) == (one.switches, one.links, one.hosts)
    assert two.planes == 2 and len(two.switches) == 2 * len(plain.switches)
    assert two.switches[0].name == "p0-" + plain.switches[0].name
    assert plane_edges(two, 0) == plane_edges(two, 1)


@pytest.fixture(scope="module", params=["hand-2planes", "jellyfish-4planes"])
def compiled_planes(request: pytest.FixtureRequest) -> CompiledFabric:
    return api.compile_fabric(ROOT / "inventories" / f"{request.param}.yaml")


def test_layers_never_cross_planes_and_connect_each_plane(compiled_planes: CompiledFabric) -> None:
    fabric, routing = compiled_planes.fabric, compiled_planes.routing
    plane_of = fabric.plane_of_switch
    same = plane_of[:, None] == plane_of[None, :]
    for i, layer in enumerate(compiled_planes.layers):
        kept = fabric.edges[layer.links]
        assert (plane_of[kept[:, 0]] == plane_of[kept[:, 1]]).all()
        # Every pair of one plane is routed in every layer; no pair across planes is.
        assert (routing.dist[i][same] != UNREACHABLE).all()
        assert (routing.dist[i][~same] == UNREACHABLE).all()
        assert (routing.next_hop[i][~same] == -1).all()
    sizes = np.bincount(plane_of)
    assert compiled_planes.route_counts == [
        len(compiled_planes.layers) * (int(sizes[p]) - 1) for p in plane_of
    ]


def test_every_switch_route_stays_in_its_plane(compiled_planes: CompiledFabric) -> None:
    fabric, plan = compiled_planes.fabric, compiled_planes.address_plan
    assert plan.v4 is not None
    subnet_plane = {
        subnet: fabric.switches[s].plane for row in plan.v4.subnets for s, subnet in enumerate(row)
    }
    end_plane = {
        address: fabric.switches[link.a].plane
        for link in fabric.links
        for address in plan.v4.links[link.index]
    }
    builder = ViewBuilder(compiled_planes, plan)
    for switch in fabric.switches:
        view = builder.view(switch.index, switch.platform)
        for layer in view.layers:
            routes = layer.routes_v4
            assert len(routes) == len(fabric.switches_of_plane(switch.plane)) - 1
            assert {subnet_plane[p] for p in routes.prefixes} == {switch.plane}
            assert {end_plane[h] for h in routes.next_hops} == {switch.plane}
        for port in view.host_ports:
            host = fabric.hosts[fabric.hosts_of_switch[switch.index][0]]
            assert port.port == host.uplinks[switch.plane].port or port.host != host.name


def test_host_addresses_per_plane_sit_in_that_planes_switch_subnets(
    compiled_planes: CompiledFabric,
) -> None:
    fabric, plan = compiled_planes.fabric, compiled_planes.address_plan
    tables = plan.v4
    assert tables is not None and plan.planes == fabric.planes
    seen = set()
    for host in fabric.hosts:
        for uplink in host.uplinks:
            for layer in range(plan.layer_count):
                address = ipaddress.ip_address(tables.host_address(uplink.plane, layer, host.index))
                assert address in ipaddress.ip_network(tables.subnets[layer][uplink.switch])
                assert address in ipaddress.ip_network(tables.plane_pools[uplink.plane])
                seen.add(address)
    assert len(seen) == len(fabric.hosts) * fabric.planes * plan.layer_count


def test_compiled_output_records_planes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    api.compile_to_directory(HAND, out)
    data = json.loads((out / "fabric.json").read_text(encoding="utf-8"))
    assert data["planes"] == 2
    assert [s["plane"] for s in data["switches"]] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert data["hosts"][0]["uplinks"] == [
        {"plane": 0, "switch": "a1", "port": "Ethernet3"},
        {"plane": 1, "switch": "b1", "port": "Ethernet3"},
    ]
    rows = list(csv.reader(io.StringIO((out / "hosts" / "addresses.csv").read_text())))
    assert rows[0] == ["host", "plane", "layer", "address"]
    assert [r[1:3] for r in rows[1:5]] == [["0", "1"], ["0", "2"], ["1", "1"], ["1", "2"]]
    assert len(rows) - 1 == 4 * 2 * 2
    loaded = load_compiled(out)
    assert loaded.fabric.planes == 2
    assert loaded.fabric.hosts == load_fabric(HAND)[1].hosts
    # Same inventory, same bytes.
    again = tmp_path / "again"
    api.compile_to_directory(HAND, again)
    for name in ("fabric.json", "routing.npz", "hosts/addresses.csv", "configs/frr/b2/frr.conf"):
        assert (out / name).read_bytes() == (again / name).read_bytes()


def test_topo_show_reports_host_pair_hops_per_plane_and_best() -> None:
    result = CliRunner().invoke(build_app(), ["topo", "show", str(HAND), "--json"])
    assert result.exit_code == 0, result.output
    planes = json.loads(result.stdout)["planes"]
    # Plane 0 is the ring a1-a2-a3-a4, plane 1 the ring b1-b3-b2-b4: the pairs two hops apart
    # in one ring (h1-h3, h2-h4 / h1-h2, h3-h4) are neighbours in the other.
    assert planes["plane 0"]["host pairs by switch hops"] == {"1": 4, "2": 2}
    assert planes["plane 1"]["host pairs by switch hops"] == {"1": 4, "2": 2}
    best = planes["best of planes"]
    assert best == {"host pairs by switch hops": {"1": 6}, "mean": 1.0, "max": 1}
    table = CliRunner().invoke(build_app(), ["topo", "show", str(JELLYFISH)])
    assert "best of planes" in table.stdout and "plane 3" in table.stdout


def test_best_of_planes_is_never_worse_than_any_plane() -> None:
    fabric = load_fabric(JELLYFISH)[1]
    planes = topology_stats(fabric)["planes"]
    pairs = 32 * 31 // 2
    for figures in planes.values():
        histogram = figures["host pairs by switch hops"]
        assert sum(histogram.values()) == pairs
        assert histogram["0"] == 8 * (4 * 3 // 2)  # hosts of one rack share a switch everywhere
    best = planes["best of planes"]
    assert all(best["mean"] <= planes[f"plane {p}"]["mean"] for p in range(4))
    assert best["max"] <= min(planes[f"plane {p}"]["max"] for p in range(4))


def test_single_plane_topo_show_has_no_plane_section() -> None:
    assert "planes" not in topology_stats(load_fabric(ROOT / "inventories" / "hand-6.yaml")[1])


def test_host_plan_has_an_uplink_per_plane_and_mptcp_sized_for_planes_times_layers() -> None:
    compiled = api.compile_fabric(JELLYFISH)
    fabric, plan = compiled.fabric, compiled.address_plan
    host = fabric.hosts[7]
    view = host_view(fabric, plan, host)
    assert [u.device for u in view.uplinks] == ["eth0", "eth1", "eth2", "eth3"]
    assert [u.switch for u in view.uplinks] == [
        fabric.switches[u.switch].name for u in host.uplinks
    ]
    assert plan.v4 is not None
    addresses = [la.address_v4 for u in view.uplinks for la in u.layers]
    assert [e.address for e in view.mptcp_endpoints] == addresses[1:]
    assert view.mptcp_limit == 4 * 2 - 1
    script = render_host(view)
    for uplink in view.uplinks:
        route = f"ip route replace {uplink.pool_v4} via {uplink.layers[0].gateway_v4} "
        assert route + f"dev {uplink.device}" in script


@pytest.mark.parametrize("inventory", [HAND, JELLYFISH], ids=["hand", "jellyfish"])
def test_verify_walks_each_plane_and_passes(inventory: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    api.compile_to_directory(inventory, out)
    result = CliRunner().invoke(build_app(), ["verify", str(out)])
    assert result.exit_code == 0, result.output
    fabric = load_fabric(inventory)[1]
    sizes = np.bincount(fabric.plane_of_switch)
    walks = 2 * int((sizes * (sizes - 1)).sum())  # 2 layers, ordered pairs within planes
    assert f"{walks} walks" in result.stdout
    assert "PASS" in result.stdout


def test_topo_generate_writes_a_planes_inventory(tmp_path: Path) -> None:
    out = tmp_path / "planes.yaml"
    args = [
        "topo",
        "generate",
        "jellyfish",
        "--param",
        "nr=6",
        "--param",
        "k=3",
        "--param",
        "p=1",
        "--param",
        "planes=2",
        "--param",
        "heterogeneous=true",
        "-o",
        str(out),
    ]
    result = CliRunner().invoke(build_app(), args)
    assert result.exit_code == 0, result.output
    fabric = load_fabric(out)[1]
    assert fabric.planes == 2 and len(fabric.switches) == 12
    assert all(len(h.uplinks) == 2 for h in fabric.hosts)
    assert plane_edges(fabric, 0) != plane_edges(fabric, 1)


def test_pacing_shapes_every_planes_uplink(tmp_path: Path) -> None:
    text = HAND.read_text(encoding="utf-8").replace(
        "  link_speed: 50G", "  link_speed: 50G\n  host_flow_rate: 25G"
    )
    path = tmp_path / "paced.yaml"
    path.write_text(text, encoding="utf-8")
    compiled = api.compile_fabric(path)
    host = compiled.fabric.hosts[0]
    script = render_host(host_view(compiled.fabric, compiled.address_plan, host))
    for device in ("eth0", "eth1"):
        assert f"tc qdisc replace dev {device} root fq maxrate 25000mbit" in script
