"""`topo cost` and `topo match`: counts against the SC'15 paper's per-endpoint figures, the
layout and pricing against hand-worked cases, located price-file errors, and `match`'s
closed forms against the generators they describe."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_errors import printed_errors, snapshot
from typer.testing import CliRunner

from fatpaths_cfg.cli import build_app
from fatpaths_cfg.cost.layout import cable_lengths, place
from fatpaths_cfg.cost.match import MATCH_KINDS, match, measured_diameter, uniform_fat_tree
from fatpaths_cfg.cost.model import bill_of_materials, priced
from fatpaths_cfg.cost.network import from_topology, switch_group
from fatpaths_cfg.cost.prices import Layout, load_prices
from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.topologies import generate

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "prices-100g-example.yaml"

PRICES = """\
prices: test
source: hand-made for a test
date: 2026-01-01
switches:
  - {radix: 8, speed: 100G, price: 1000}
  - {radix: 16, speed: 100G, price: 3000}
cables:
  copper: {max_length_m: 3, fixed: 10, per_m: 1}
  fiber: {fixed: 20, per_m: 2}
optics_per_end: 100
layout: {rack_units: 10, racks_per_row: 2, rack_width_m: 1, row_pitch_m: 3, slack_m: 2}
"""


def _cli(*args: str) -> object:
    return CliRunner().invoke(build_app(), ["topo", *args])


def test_slimfly_q19_and_the_fat_tree_k28_match_the_issue_figures() -> None:
    """SC'15: a Slim Fly costs about 3 ports and 2 cables per endpoint (q=19, p=15: 2.93 and
    1.97); the k=28 fat tree with oversubscription 2 exactly 3 and 2."""
    sf = bill_of_materials(from_topology("sf", generate("slimfly", {"q": 19}, 1)), Layout())
    ft = bill_of_materials(
        from_topology("ft", generate("fattree", {"k": 28, "oversubscription": 2}, 1)), Layout()
    )
    assert (sf["hosts"], sf["switches"], sf["switches_by_ports"]) == (10830, 722, {"44": 722})
    assert sf["ports"]["used_per_endpoint"] == round(722 * 44 / 10830, 4)
    assert sf["cables"]["per_endpoint"] == round((722 * 29 // 2 + 10830) / 10830, 4)
    assert ft["switches_by_ports"] == {"28": 588, "42": 392}
    assert ft["ports"]["used_per_endpoint"] == 3.0 and ft["cables"]["per_endpoint"] == 2.0


def test_layout_keeps_groups_together_and_lengths_follow_the_racks(tmp_path: Path) -> None:
    network = from_topology("df", generate("dragonfly", {"p": 1}, 1))  # 3 groups of 2
    layout = Layout(rack_units=4, racks_per_row=2, rack_width_m=1, row_pitch_m=3, slack_m=2)
    placement = place(network, layout)
    # Each switch with its one host takes 2 units: a group of two fills a rack of 4.
    rack_of = placement.rack_of_switch.tolist()
    racks = {
        g: {rack_of[s] for s in range(network.nr) if network.groups[s] == g}
        for g in set(network.groups)
    }
    assert len(set(network.groups)) == 3 and all(len(r) == 1 for r in racks.values())
    assert placement.racks == 3 and placement.rows == 2
    lengths = cable_lengths(network, layout, placement)
    for (a, b), length in zip(network.edges.tolist(), lengths.tolist(), strict=True):
        ra, rb = int(placement.rack_of_switch[a]), int(placement.rack_of_switch[b])
        expected = (
            layout.intra_rack_m
            if ra == rb
            else abs(ra % 2 - rb % 2) * 1 + abs(ra // 2 - rb // 2) * 3 + 2
        )
        assert length == expected


def test_groups_of_the_generators() -> None:
    assert switch_group("sf-0-3-4") == switch_group("sf-1-3-0") == "sf-3"
    assert switch_group("ft-edge-2-1") == switch_group("ft-agg-2-0") == "ft-pod-2"
    assert switch_group("df-g3-s2") == "df-g3"
    assert switch_group("hx-1-4") == "hx-1"


def test_pricing_by_hand(tmp_path: Path) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text(PRICES, encoding="utf-8")
    prices = load_prices(path)
    network = from_topology("df", generate("dragonfly", {"p": 1}, 1))
    bill = priced(network, prices)
    # 6 switches of 3 ports (2 network + 1 host) -> the 8-port model at 1000 each.
    assert bill["switch_models"] == [{"radix": 8, "speed_gbps": 100.0, "price": 1000.0, "count": 6}]
    layout = prices.spec.layout
    lengths = cable_lengths(network, layout, place(network, layout)).tolist() + [2.0] * 6
    copper = sum(10 + 1 * x for x in lengths if x <= 3)
    fiber = sum(20 + 2 * x + 200 for x in lengths if x > 3)
    assert bill["cost"] == {
        "routers": 6000.0,
        "copper": round(copper, 2),
        "fiber": round(fiber, 2),
        "total": round(6000 + copper + fiber, 2),
    }
    assert bill["cost_per_endpoint"]["total"] == round((6000 + copper + fiber) / 6, 2)
    assert bill["cables"]["copper"] + bill["cables"]["fiber"] == len(lengths)


BAD_PRICES = [
    (
        "negative price",
        PRICES.replace("price: 3000", "price: -3"),
        "prices.yaml:6: switches[1].price: Input should be greater than or equal to 0, got -3",
    ),
    (
        "unknown key",
        PRICES.replace("optics_per_end", "optics_per_side"),
        "prices.yaml:10: optics_per_side: unknown key",
    ),
    (
        "missing source",
        PRICES.replace("source: hand-made for a test\n", ""),
        "prices.yaml:1: source: required field is missing",
    ),
    (
        "bad speed",
        PRICES.replace("speed: 100G, price: 1000", "speed: fast, price: 1000"),
        "prices.yaml:5: switches[0].speed: 'fast' is not a speed",
    ),
    (
        "duplicate model",
        PRICES.replace("radix: 16", "radix: 8"),
        "prices.yaml:6: switches[1]: a second model of 8 ports at 100G",
    ),
]


@pytest.mark.parametrize(
    "text,expected", [c[1:] for c in BAD_PRICES], ids=[c[0] for c in BAD_PRICES]
)
def test_bad_price_files_are_located_errors(
    text: str, expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("prices.yaml").write_text(text, encoding="utf-8")
    before = snapshot(tmp_path)
    result = _cli("cost", "-g", "dragonfly:p=1", "--prices", "prices.yaml", "-o", "out")
    assert result.exit_code == 2, result.output  # type: ignore[attr-defined]
    assert expected in printed_errors(result), printed_errors(result)  # type: ignore[arg-type]
    assert snapshot(tmp_path) == before


def test_a_price_file_missing_a_radix_the_fabric_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("prices.yaml").write_text(PRICES, encoding="utf-8")
    result = _cli("cost", "-g", "slimfly:q=5", "--prices", "prices.yaml")
    # q=5: 7 network ports + 4 hosts = 11 > 8; the 16-port model fits. q=7: 11 + 6 = 17 fits none.
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    ok = _cli("cost", "-g", "dragonfly:p=1", "--prices", "prices.yaml")
    assert ok.exit_code == 0  # type: ignore[attr-defined]
    bad = _cli("cost", "-g", "slimfly:q=7", "--prices", "prices.yaml")
    assert bad.exit_code == 2  # type: ignore[attr-defined]
    assert printed_errors(bad) == (  # type: ignore[arg-type]
        "prices.yaml:4: switches: no switch of 100G with at least 17 ports, which slimfly-q7 "
        "needs (models at 100G have 8, 16 ports; add `- {radix: 17, speed: 100G, price: ...}` "
        "or larger)\n"
    )


def test_cost_writes_json_and_a_chart_and_refuses_a_foreign_directory(tmp_path: Path) -> None:
    out = tmp_path / "cost"
    args = ["cost", "inventories/slimfly-q5.yaml", "-g", "fattree:k=8,oversubscription=2"]
    import os

    here = os.getcwd()
    os.chdir(REPO)
    try:
        first = _cli(*args, "--prices", str(EXAMPLE), "-o", str(out))
        assert first.exit_code == 0, first.output  # type: ignore[attr-defined]
        document = json.loads((out / "cost.json").read_text(encoding="utf-8"))
        names = [b["network"] for b in document["networks"]]
        assert names == ["slimfly-q5", "fattree-k8-oversubscription2"]
        for bill in document["networks"]:
            parts = bill["cost"]
            assert parts["total"] == pytest.approx(
                parts["routers"] + parts["copper"] + parts["fiber"]
            )
        assert (out / "cost.png").read_bytes().startswith(b"\x89PNG")
        assert (out / ".fatpaths-output").exists()
        again = _cli(*args, "--prices", str(EXAMPLE), "-o", str(out))
        assert again.exit_code == 0  # type: ignore[attr-defined]
        assert json.loads((out / "cost.json").read_text(encoding="utf-8")) == document
        printed = _cli(*args, "--prices", str(EXAMPLE), "--json")
        assert json.loads(printed.stdout) == document  # type: ignore[attr-defined]
        (out / "mine.txt").write_text("not fatpaths'", encoding="utf-8")
        refused = _cli(*args, "-o", str(out))
        assert refused.exit_code == 2 and "mine.txt" in refused.stderr  # type: ignore[attr-defined]
    finally:
        os.chdir(here)


def test_the_example_price_file_says_it_is_an_example() -> None:
    prices = load_prices(EXAMPLE)
    text = EXAMPLE.read_text(encoding="utf-8")
    assert "NOT QUOTES" in text and "Replace" in text
    assert "not vendor quotes" in prices.spec.source and prices.spec.date.year >= 2026


def test_match_closed_forms_agree_with_the_generators() -> None:
    rows = match(1000, 0.5, None, 128)
    kinds = {row.kind for row in rows}
    assert kinds >= {"slimfly", "hyperx", "dragonfly", "fattree", "jellyfish", "xpander"}
    for row in rows:
        topology = row.topology()
        assert topology.num_hosts == row.hosts, row
        assert topology.num_switches == row.switches, row
        assert len(topology.edges) == row.links, row
        ports = [d + h for d, h in zip(topology.degrees(), topology.hosts_per_switch, strict=True)]
        assert max(ports) == row.radix, row
        if row.switches <= 400:
            assert measured_diameter(topology) == row.diameter, row


def test_match_at_10000_hosts_lists_the_papers_networks() -> None:
    rows = {(r.kind, r.label): r for r in match(10000, 0.1, None, 128)}
    assert rows[("slimfly", "q=19")].hosts == 10830
    assert rows[("fattree", "k=28 o=2")].hosts == 10976
    assert rows[("fattree-uniform", "k=30 2:1")].hosts == 9000
    for row in rows.values():
        assert 9000 <= row.hosts <= 11000 and row.radix <= 128


def test_the_uniform_fat_tree_has_one_radix() -> None:
    tree = uniform_fat_tree(12)
    ports = [d + h for d, h in zip(tree.degrees(), tree.hosts_per_switch, strict=True)]
    assert set(ports) == {12} and tree.num_hosts == 12**3 // 3
    assert measured_diameter(tree) == 4


@pytest.mark.parametrize(
    "args,expected",
    [
        (["--tolerance", "150%"], "--tolerance: '150%' is out of range"),
        (["--tolerance", "-1"], "--tolerance: '-1' is out of range"),
        (
            ["--kinds", "slimfly", "--tolerance", "1%", "--hosts", "5000"],
            "--kinds: kind 'slimfly' has no configuration within 1% of 5000 hosts",
        ),
        (["--kinds", "torus"], "--kinds: unknown kind 'torus'"),
        (["--hosts", "1"], "--hosts: 1 is too few"),
    ],
)
def test_bad_match_input_names_the_flag(args: list[str], expected: str) -> None:
    full = ["match", *args] if "--hosts" in args else ["match", "--hosts", "1000", *args]
    result = _cli(*full)
    assert result.exit_code == 2, result.output  # type: ignore[attr-defined]
    assert expected in printed_errors(result)  # type: ignore[arg-type]


def test_match_json_lists_every_kind_asked(tmp_path: Path) -> None:
    result = _cli(
        "match",
        "--hosts",
        "1000",
        "--kinds",
        "slimfly,fattree",
        "--tolerance",
        "20%",
        "--json",
        "--prices",
        str(EXAMPLE),
    )
    document = json.loads(result.stdout)  # type: ignore[attr-defined]
    assert {c["kind"] for c in document["configurations"]} == {"slimfly", "fattree"}
    assert all(c["cost_per_endpoint"] > 0 for c in document["configurations"])
    assert set(MATCH_KINDS) >= {"fattree-uniform"}
    with pytest.raises(UserErrors):
        match(1000, 0.1, ["oft"], 4)
