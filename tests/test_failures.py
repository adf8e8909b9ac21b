"""Failure what-if of static routes: exact counts on a hand-made ring, the fast index against a
slow walk of every path, plane failures, seeded random failures and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.analysis.failures import (
    PathIndex,
    elements_of,
    failed_together,
    index_paths,
    pairs_losing_all,
    rack_name,
    random_failures,
    random_pool,
    single_failures,
    worst,
)
from fatpaths_cfg.cli.analyze import add_commands
from fatpaths_cfg.compiled import load_compiled
from fatpaths_cfg.fabric import Fabric, Host, Link, Switch

INVENTORIES = Path(__file__).resolve().parent.parent / "inventories"
COLUMNS = ("host_pairs", "lost_hosts", "broken_paths", "lost_all", "keep_one", "keep_two")


def _ring(reverse_links: bool = False) -> tuple[Fabric, np.ndarray]:
    """Four switches in a ring (s0 has two hosts, the others one) and two layers written by
    hand: layer 0 takes each shortest path, the clockwise one (via s+1) where two tie; layer 1
    leaves out cable s3-s0 and runs along the line s0-s1-s2-s3."""
    ports = ("e1", "e2", "e3", "e4")
    switches = [Switch(i, f"s{i}", "frr", "switch", ports) for i in range(4)]
    ends = [(0, 1), (1, 2), (2, 3), (3, 0)]
    if reverse_links:  # the same cables listed the other way round: names must not change
        ends = ends[::-1]
    # Cable (s, s+1) leaves s on e2 and enters s+1 on e1.
    links = [Link(i, a, "e2", b, "e1", 100.0) for i, (a, b) in enumerate(ends)]
    hosts = [Host(0, "h0a", 0, "e3", 100.0), Host(1, "h0b", 0, "e4", 100.0)]
    hosts += [Host(1 + s, f"h{s}", s, "e3", 100.0) for s in (1, 2, 3)]
    next_hop = np.full((2, 4, 4), -1, dtype=np.int32)
    for s in range(4):
        for d in range(4):
            if s == d:
                continue
            next_hop[0, s, d] = d if (d - s) % 4 in (1, 3) else (s + 1) % 4
            next_hop[1, s, d] = s + 1 if d > s else s - 1
    return Fabric("ring", switches, links, hosts), next_hop


def _row(index: PathIndex, name: str) -> dict[str, int]:
    rows = {row["failure"]: row for row in single_failures(index).rows()}
    return {column: rows[name][column] for column in COLUMNS}


def _cable(fabric: Fabric, a: int, b: int) -> int:
    return fabric.link_between[(a, b)]


def test_ring_single_failures_are_counted_exactly() -> None:
    fabric, next_hop = _ring()
    index = index_paths(fabric, next_hop)
    assert int(index.weight.sum()) == 5 * 4  # ordered host pairs, s0's own pair included
    names = {i: index.names[i] for i in range(index.cables)}
    c01, c30 = names[_cable(fabric, 0, 1)], names[_cable(fabric, 3, 0)]
    assert c30 == "s0:e1 - s3:e2"
    # s3-s0 carries layer 0's 3->0, 0->3, 2->0 (via s3) and 3->1 (via s0); layer 1 never.
    assert _row(index, c30) == dict(
        host_pairs=20,
        lost_hosts=0,
        broken_paths=2 + 2 + 2 + 1,
        lost_all=0,
        keep_one=20,
        keep_two=20 - 7,
    )
    # s0-s1: layer 0's 0->1, 1->0, 0->2, 3->1 and layer 1's every pair across s0 | s1 s2 s3.
    assert _row(index, c01) == dict(
        host_pairs=20, lost_hosts=0, broken_paths=7 + 12, lost_all=6, keep_one=14, keep_two=7
    )
    # s0 down takes h0a and h0b: 3 * 2 host pairs left, of which layer 0's 3->1 crossed s0.
    assert _row(index, "s0") == dict(
        host_pairs=6, lost_hosts=2, broken_paths=1, lost_all=0, keep_one=6, keep_two=5
    )
    # s1 down: 4 * 3 left; layer 0's 0->2 and layer 1's 0->2, 0->3, 2->0, 3->0 crossed s1.
    assert _row(index, "s1") == dict(
        host_pairs=12, lost_hosts=1, broken_paths=2 + 8, lost_all=2, keep_one=10, keep_two=4
    )
    table = single_failures(index)
    assert [table.names[i] for i in worst(table, 1)] == [c01]
    lost = pairs_losing_all(index, [_cable(fabric, 0, 1)])
    named = [f"{rack_name(index, a)} -> {rack_name(index, b)}" for a, b in lost]
    assert named == ["s0 -> s1", "s0 -> s2", "s1 -> s0"]
    # s1 down: its own pairs are gone with its host; s0 -> s2 had both layers through it.
    assert pairs_losing_all(index, [index.cables + 1]).tolist() == [[0, 2]]


def test_ring_failures_together_union_their_paths() -> None:
    fabric, next_hop = _ring()
    index = index_paths(fabric, next_hop)
    both = failed_together(index, [_cable(fabric, 0, 1), _cable(fabric, 3, 0)])
    # Every pair with s0 at one end loses both layers; 3->1 keeps layer 1 only.
    assert {c: both[c] for c in COLUMNS} == dict(
        host_pairs=20, lost_hosts=0, broken_paths=13 + 12, lost_all=12, keep_one=8, keep_two=7
    )
    # Two switches: s1's and s3's hosts are cut off; s0 and s2 only meet through them.
    apart = failed_together(index, [index.cables + 1, index.cables + 3])
    assert (apart["host_pairs"], apart["lost_hosts"]) == (3 * 2, 2)
    assert (apart["lost_all"], apart["keep_one"]) == (4, 2)  # h0a-h0b are on one switch


def _slow_walk(
    fabric: Fabric, next_hop: np.ndarray, cables: set[int], switches: set[int]
) -> dict[str, int]:
    """The what-if by walking every host pair's every (plane, layer) path hop by hop."""
    down = {(fabric.links[c].a, fabric.links[c].b) for c in cables}
    down |= {(b, a) for a, b in down}
    gone = {h.index for h in fabric.hosts if all(u.switch in switches for u in h.uplinks)}

    def works(s: int, d: int, layer: int, failed: bool) -> bool:
        if failed and (s in switches or d in switches):
            return False
        for _ in range(fabric.nr):
            if s == d:
                return True
            hop = int(next_hop[layer, s, d])
            if hop < 0 or (failed and ((s, hop) in down or hop in switches)):
                return False
            s = hop
        return False

    out = dict.fromkeys(COLUMNS, 0)
    out["lost_hosts"] = len(gone)
    # Hosts with the same uplinks walk the same paths: walk once per pair of uplink tuples.
    racks: dict[tuple[int, ...], int] = {}
    for host in fabric.hosts:
        if host.index not in gone:
            key = tuple(u.switch for u in host.uplinks)
            racks[key] = racks.get(key, 0) + 1
    for a, na in racks.items():
        for b, nb in racks.items():
            weight = na * nb - (na if a == b else 0)
            before = after = 0
            for s, d in zip(a, b, strict=True):
                for layer in range(next_hop.shape[0]):
                    was, now = works(s, d, layer, False), works(s, d, layer, True)
                    before, after = before + was, after + now
                    out["broken_paths"] += weight * (was and not now)
            out["host_pairs"] += weight
            out["lost_all"] += weight * (before >= 1 and after == 0)
            out["keep_one"] += weight * (after >= 1)
            out["keep_two"] += weight * (after >= 2)
    return out


@pytest.fixture(scope="module")
def slimfly_q5(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("failures") / "q5"
    api.build_output(api.compile_fabric(INVENTORIES / "slimfly-q5.yaml")).commit(out)
    return out


def test_index_matches_a_slow_walk_on_slimfly_q5(slimfly_q5: Path) -> None:
    compiled = load_compiled(slimfly_q5)
    fabric, next_hop = compiled.fabric, compiled.next_hop
    index = index_paths(fabric, next_hop)
    table = single_failures(index)
    assert len(table) == len(fabric.links) + fabric.nr
    rows = table.rows()
    rng = np.random.default_rng(5)
    picked = [*rng.choice(index.cables, 8, replace=False), *(index.cables + np.arange(4))]
    for i in picked:
        cables = {int(i)} if i < index.cables else set()
        switches = {int(i) - index.cables} if i >= index.cables else set()
        expected = _slow_walk(fabric, next_hop, cables, switches)
        assert {c: rows[i][c] for c in COLUMNS} == expected, rows[i]["failure"]
    # The worst cable breaks some path: the table is not all zeros by accident.
    assert max(row["broken_paths"] for row in rows) > 0
    for k in (2, 4):
        chosen = rng.choice(index.elements, k, replace=False)
        got = failed_together(index, chosen)
        expected = _slow_walk(
            fabric,
            next_hop,
            {int(e) for e in chosen if e < index.cables},
            {int(e) - index.cables for e in chosen if e >= index.cables},
        )
        assert {c: got[c] for c in COLUMNS} == expected


def test_planes_a_failed_plane_leaves_the_other(tmp_path: Path) -> None:
    out = tmp_path / "two"
    api.build_output(api.compile_fabric(INVENTORIES / "hand-2planes.yaml")).commit(out)
    compiled = load_compiled(out)
    fabric, next_hop = compiled.fabric, compiled.next_hop
    index = index_paths(fabric, next_hop)
    assert (index.planes, index.racks) == (2, 4)
    rows = {row["failure"]: row for row in single_failures(index).rows()}
    for plane in (0, 1):
        row = rows[f"plane {plane}"]
        expected = _slow_walk(fabric, next_hop, set(), set(fabric.switches_of_plane(plane)))
        assert {c: row[c] for c in COLUMNS} == expected
        assert row["lost_hosts"] == 0 and row["keep_one"] == row["host_pairs"] == 4 * 3
        table = single_failures(index)
        number = table.names.index(f"plane {plane}")
        assert len(elements_of(index, table, number)) == 4
        assert pairs_losing_all(index, elements_of(index, table, number)).size == 0
    assert rack_name(index, 0) == "a1/b1"
    # With two planes a switch takes no host down: its plane's paths of its hosts break.
    a1 = rows["a1"]
    assert a1["lost_hosts"] == 0 and a1["host_pairs"] == 12
    assert {c: a1[c] for c in COLUMNS} == _slow_walk(fabric, next_hop, set(), {0})


def test_random_failures_repeat_with_their_seed_and_not_the_link_order() -> None:
    fabric, next_hop = _ring()
    index = index_paths(fabric, next_hop)
    first = random_failures(index, [2, 3], 6, seed=3)
    assert random_failures(index, [2, 3], 6, seed=3) == first
    assert [p.k for p in first] == [2, 3] and all(p.samples == 6 for p in first)
    # Draws pick cables by name: listing the cables in another order draws the same ones.
    turned = index_paths(*_ring(reverse_links=True))
    assert random_failures(turned, [2, 3], 6, seed=3) == first
    others = [random_failures(index, [2], 6, seed=s)[0] for s in range(4, 12)]
    assert any(p != first[0] for p in others)
    with pytest.raises(ValueError, match="4 cables"):
        random_failures(index, [5], 1, seed=3)
    # Any three of the four switches leave one switch: only its own host pairs are counted,
    # and they always work (s0's two hosts; a single host has no pair).
    (three,) = random_failures(index, [3], 8, seed=3, kind="switches")
    assert three.worst_keep_two == 1.0 and three.mean_lost_all == 0.0
    assert random_pool(index, "any").size == index.cables + 4
    with pytest.raises(ValueError, match="routers"):
        random_pool(index, "routers")


def _app() -> typer.Typer:
    app = typer.Typer()
    add_commands(app)

    @app.callback()
    def _root() -> None:
        """test app"""

    return app


def test_analyze_failures_writes_json_plot_and_lines(slimfly_q5: Path, tmp_path: Path) -> None:
    target = tmp_path / "what-if"
    args = ["analyze", str(slimfly_q5), "--failures", "--k-max", "3", "--samples", "5"]
    result = CliRunner().invoke(app := _app(), [*args, "--results", str(target), "--worst", "2"])
    assert result.exit_code == 0, result.output
    data = json.loads((target / "failures.json").read_text())
    compiled = load_compiled(slimfly_q5)
    assert len(data["failures"]) == len(compiled.fabric.links) + compiled.fabric.nr
    assert [(p["k"], p["kind"]) for p in data["summary"]] == [
        (0, "none"),
        (1, "cables"),
        (1, "switches"),
        (2, "cables"),
        (3, "cables"),
    ]
    assert data["summary"][0]["mean_keep_one"] == 1.0
    assert len(data["worst"]) == 2
    first_worst = data["worst"][0]
    named = first_worst.pop("named_switch_pairs")
    assert len(named) == min(20, first_worst.pop("switch_pairs_losing_all")) > 0
    assert first_worst in data["failures"] and " -> " in named[0]
    assert " - " in data["failures"][0]["failure"]  # a cable is named by both ends
    assert (target / "failures.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    lines = result.output.splitlines()
    assert sum(line.startswith("k=") for line in lines) == 4
    assert sum(line.startswith("worst: ") for line in lines) == 2
    first = (target / "failures.json").read_bytes()
    again = CliRunner().invoke(app, [*args, "--results", str(target), "--worst", "2"])
    assert again.exit_code == 0 and (target / "failures.json").read_bytes() == first


@pytest.mark.parametrize(
    "extra",
    [
        ["--random", "routers"],
        ["--k-max", "100000"],
        ["--k-max", "0"],
        ["--samples", "0"],
        ["--planes"],
    ],
)
def test_analyze_failures_bad_input_exits_2(
    slimfly_q5: Path, tmp_path: Path, extra: list[str]
) -> None:
    target = tmp_path / "bad"
    args = ["analyze", str(slimfly_q5), "--failures", "--results", str(target), *extra]
    result = CliRunner().invoke(_app(), args)
    assert result.exit_code == 2, result.output
    assert not target.exists()
