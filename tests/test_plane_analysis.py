"""Parallel dataplanes: MAT LPs against closed forms, K monotonicity, failures, the CLI."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.analysis import plane_set as planes_module
from fatpaths_cfg.analysis.plane_failures import best_plane_hops, hops_under_failures
from fatpaths_cfg.analysis.plane_report import PlaneStudy, study_planes
from fatpaths_cfg.analysis.plane_set import PlaneSet, jellyfish_planes, plane_set_from_fabric
from fatpaths_cfg.analysis.plane_throughput import (
    PathCatalogue,
    _candidates,
    ecmp_dag_throughput,
    host_pattern,
    mcf_edge_throughput,
    mcf_throughput,
    path_throughput,
    plane_throughput,
    plane_traffic,
)
from fatpaths_cfg.cli.analyze import add_commands
from fatpaths_cfg.compiled import load_compiled

INVENTORIES = Path(__file__).resolve().parent.parent / "inventories"


def _two_disjoint_paths() -> PlaneSet:
    """Racks 0 and 1 joined through transit switches 2 and 3: two disjoint 2-hop paths."""
    edges = np.array([[0, 2], [2, 1], [0, 3], [3, 1]])
    return PlaneSet("diamond", 2, (edges,), (100.0,), (1000.0,), np.array([0, 1]), switches=4)


def _ring() -> PlaneSet:
    edges = np.array([[0, 1], [1, 2], [2, 3], [0, 3]])
    return PlaneSet("ring", 4, (edges,), (100.0,), (100.0,), np.arange(4))


def test_two_disjoint_equal_paths_double_the_single_path_throughput() -> None:
    planes = _two_disjoint_paths()
    catalogue = PathCatalogue(planes, 1)
    pairs = host_pattern(planes, "permutation", 1)  # two hosts: 0 -> 1 and 1 -> 0
    assert plane_throughput(catalogue, pairs, "ksp", 1).throughput_gbps == pytest.approx(100)
    assert plane_throughput(catalogue, pairs, "ksp", 2).throughput_gbps == pytest.approx(200)
    assert plane_throughput(catalogue, pairs, "mcf").throughput_gbps == pytest.approx(200)
    assert plane_throughput(catalogue, pairs, "ecmp").throughput_gbps == pytest.approx(200)


def test_ring_opposite_pairs_closed_form() -> None:
    # Four 2-hop flows over 8 directed 100G links: T = 800 / 8 = 100 with both ways round;
    # one path each puts two flows on some link: T = 50.
    planes = _ring()
    catalogue = PathCatalogue(planes, 1)
    pairs = np.array([[0, 2], [2, 0], [1, 3], [3, 1]])
    assert plane_throughput(catalogue, pairs, "mcf").throughput_gbps == pytest.approx(100)
    assert plane_throughput(catalogue, pairs, "ksp", 1).throughput_gbps == pytest.approx(50)
    assert plane_throughput(catalogue, pairs, "ksp", 2).throughput_gbps == pytest.approx(100)


def test_host_uplinks_cap_throughput_per_plane() -> None:
    # Same ring, but 10G uplinks: hosts, not links, limit T to one uplink per plane.
    edges = np.array([[0, 1], [1, 2], [2, 3], [0, 3]])
    planes = PlaneSet("ring2", 4, (edges, edges), (100.0, 100.0), (10.0, 10.0), np.arange(4))
    catalogue = PathCatalogue(planes, 1)
    pairs = np.array([[0, 2], [2, 0], [1, 3], [3, 1]])
    assert plane_throughput(catalogue, pairs, "mcf").throughput_gbps == pytest.approx(20)
    assert plane_throughput(catalogue, pairs, "ecmp").throughput_gbps == pytest.approx(10)


@pytest.mark.parametrize("pattern", ["permutation", "all-to-all"])
def test_column_generation_matches_edge_formulation(pattern: str) -> None:
    planes = jellyfish_planes("jf", 16, 4, 2, 2, True, 3, 100.0)
    pairs = host_pattern(planes, pattern, 2)
    edge = mcf_edge_throughput(planes, plane_traffic(planes, pairs), 100.0)
    generated = plane_throughput(PathCatalogue(planes, 2), pairs, "mcf").throughput_gbps
    assert generated == pytest.approx(edge, rel=2e-4)
    assert generated <= edge * (1 + 1e-6)


def test_throughput_grows_with_k_and_stays_below_mcf() -> None:
    planes = jellyfish_planes("jf", 20, 4, 3, 2, True, 5, 100.0)
    catalogue = PathCatalogue(planes, 4)
    pairs = host_pattern(planes, "permutation", 4)
    bound = plane_throughput(catalogue, pairs, "mcf").throughput_gbps
    for scheme in ("ksp", "ksp-total"):
        values = [
            plane_throughput(catalogue, pairs, scheme, k).throughput_gbps for k in (1, 2, 4, 8)
        ]
        assert all(b >= a - 1e-6 for a, b in itertools.pairwise(values)), values
        assert values[-1] <= bound * (1 + 1e-4)
        assert values[-1] > values[0]


def test_homogeneous_planes_and_faster_links_scale_serial_throughput() -> None:
    serial = jellyfish_planes("s", 16, 4, 2, 1, False, 7, 100.0)
    fast = jellyfish_planes("f", 16, 4, 2, 1, False, 7, 400.0)
    copies = jellyfish_planes("h", 16, 4, 2, 4, False, 7, 100.0)
    pairs = host_pattern(serial, "all-to-all", 1)
    base = plane_throughput(PathCatalogue(serial, 1), pairs, "mcf").throughput_gbps
    for planes in (fast, copies):
        value = plane_throughput(PathCatalogue(planes, 1), pairs, "mcf").throughput_gbps
        assert value == pytest.approx(4 * base, rel=2e-4)


def test_failures_at_zero_equal_no_failures() -> None:
    planes = jellyfish_planes("jf", 24, 4, 1, 3, True, 11, 100.0)
    intact = best_plane_hops(planes, [np.ones(len(e), dtype=bool) for e in planes.edges])
    expected = intact[~np.eye(planes.racks, dtype=bool)].mean()
    points = hops_under_failures(planes, [0.0, 0.3], trials=3, seed=1)
    assert points[0].mean_hops == pytest.approx(expected)
    assert points[0].unreachable == 0
    assert points[1].mean_hops > points[0].mean_hops


def test_heterogeneous_planes_shorten_paths_and_resist_failures_better_than_serial() -> None:
    serial = jellyfish_planes("s", 40, 4, 1, 1, False, 2, 100.0)
    hetero = jellyfish_planes("h", 40, 4, 1, 4, True, 2, 100.0)
    s0, s4 = hops_under_failures(serial, [0.0, 0.4], 4, 1)
    h0, h4 = hops_under_failures(hetero, [0.0, 0.4], 4, 1)
    assert h0.mean_hops < s0.mean_hops
    assert h4.mean_hops / h0.mean_hops < s4.mean_hops / s0.mean_hops


def test_study_is_deterministic_with_seed() -> None:
    planes = jellyfish_planes("jf", 12, 3, 2, 2, True, 1, 100.0)
    study = PlaneStudy(
        ("permutation", "all-to-all"), ("mcf", "ecmp", "ksp-total"), (1, 2), (0.0, 0.2), 2, 9
    )
    first, second = study_planes(planes, study), study_planes(planes, study)
    for result in (first, second):
        result.pop("cpu_seconds")
    assert json.dumps(first) == json.dumps(second)
    other = study_planes(
        planes,
        PlaneStudy(study.patterns, study.schemes, study.k_values, study.failure_shares, 2, 10),
    )
    other.pop("cpu_seconds")
    assert json.dumps(other) != json.dumps(first)


def test_analyze_planes_on_a_compiled_four_plane_fabric(tmp_path: Path) -> None:
    out = tmp_path / "jf4"
    api.build_output(api.compile_fabric(INVENTORIES / "jellyfish-4planes.yaml")).commit(out)
    planes, members = plane_set_from_fabric(load_compiled(out).fabric)
    assert (planes.planes, planes.racks, planes.hosts) == (4, 8, 32)
    assert all(len(e) == 8 * 3 // 2 for e in planes.edges)
    assert [len(m) for m in members] == [8] * 4
    app = typer.Typer()
    add_commands(app)

    @app.callback()
    def _root() -> None:
        """test app"""

    args = [
        "analyze",
        str(out),
        "--planes",
        "--k",
        "1,4",
        "--failure-shares",
        "0,0.25",
        "--trials",
        "2",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    data = json.loads((out / "planes" / "planes.json").read_text())
    perm = data["max_achievable_throughput_gbps"]["permutation"]
    assert perm["ksp-total"]["4"] >= perm["ksp-total"]["1"]
    assert perm["fatpaths"] <= perm["mcf"] * (1 + 1e-3)
    assert (out / "planes" / "planes.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    first = (out / "planes" / "planes.json").read_bytes()
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output
    assert (out / "planes" / "planes.json").read_bytes() == first
    bad = CliRunner().invoke(app, ["analyze", str(out), "--planes", "--plane-schemes", "x"])
    assert bad.exit_code == 2


def _small_fabrics() -> list[PlaneSet]:
    ring = _ring()
    return [
        ring,
        PlaneSet("ring2", 4, ring.edges * 2, (100.0,) * 2, (10.0,) * 2, np.arange(4)),
        jellyfish_planes("jf-het", 16, 4, 2, 2, True, 3, 100.0),
        jellyfish_planes("jf-hom", 16, 4, 2, 3, False, 3, 100.0),
    ]


@pytest.mark.parametrize("pattern", ["permutation", "all-to-all"])
def test_ecmp_dag_lp_equals_ecmp_path_lp(pattern: str) -> None:
    for planes in _small_fabrics():
        catalogue = PathCatalogue(planes, 2)
        traffic = plane_traffic(planes, host_pattern(planes, pattern, 2), True, 2)
        paths = path_throughput(planes, traffic, _candidates(catalogue, traffic, "ecmp", 0), 1.0)
        dag = ecmp_dag_throughput(planes, traffic, catalogue.distances(), 1.0)
        assert dag == pytest.approx(paths[0], rel=1e-6), planes.name
        solved = plane_throughput(catalogue, host_pattern(planes, pattern, 2), "ecmp")
        assert solved.throughput_gbps == pytest.approx(paths[0], rel=1e-6)


def test_all_to_all_mcf_equals_column_generation() -> None:
    for planes in _small_fabrics():
        pairs = host_pattern(planes, "all-to-all", 2)
        catalogue = PathCatalogue(planes, 2)
        unit = min(planes.uplink_gbps)
        generated = mcf_throughput(catalogue, plane_traffic(planes, pairs), unit)[0]
        fast = plane_throughput(catalogue, pairs, "mcf").throughput_gbps
        assert fast == pytest.approx(generated, rel=2e-4), planes.name


@pytest.mark.parametrize("pool", [4096, 3])
def test_ksp_enumerated_once_at_the_deepest_k_equals_each_k_alone(
    pool: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A pool of 3 paths makes the deep search miss ties that a shallow one sees, so the
    # catalogue must notice that the prefix is not the answer and enumerate that K again.
    monkeypatch.setattr(planes_module, "_TIE_POOL", pool)
    planes = jellyfish_planes("jf", 20, 4, 2, 2, True, 5, 100.0)
    traffic = plane_traffic(planes, host_pattern(planes, "all-to-all", 3))
    deep = PathCatalogue(planes, 3, ksp_depth=8)
    for k in (1, 2, 4, 8):
        alone = PathCatalogue(planes, 3)
        for scheme in ("ksp", "ksp-total"):
            expected = _candidates(alone, traffic, scheme, k)
            assert _candidates(deep, traffic, scheme, k) == expected, (scheme, k)


@pytest.mark.parametrize("pattern", ["permutation", "all-to-all"])
def test_identical_planes_solved_as_one_plane_equal_the_full_lp(pattern: str) -> None:
    planes = jellyfish_planes("jf-hom", 16, 4, 2, 3, False, 3, 100.0)
    pairs = host_pattern(planes, pattern, 4)
    catalogue = PathCatalogue(planes, 4, ksp_depth=6)
    traffic = plane_traffic(planes, pairs)
    unit = min(planes.uplink_gbps)
    reduced_any = False
    for scheme, k in [("ksp-total", k) for k in (1, 2, 3, 4, 6)] + [("ksp", 1), ("ksp", 2)]:
        full = path_throughput(planes, traffic, _candidates(catalogue, traffic, scheme, k), unit)
        solved = plane_throughput(catalogue, pairs, scheme, k)
        assert solved.throughput_gbps == pytest.approx(full[0], rel=1e-5), (scheme, k)
        assert solved.k == k and solved.scheme == scheme
        reduced_any |= "copies_of_one_plane" in solved.extra
    # K = 4 over 3 planes is not symmetric: solved whole; the others came from one plane.
    assert "copies_of_one_plane" not in plane_throughput(catalogue, pairs, "ksp-total", 4).extra
    assert reduced_any
    mcf = plane_throughput(catalogue, pairs, "mcf")
    assert mcf.extra["copies_of_one_plane"] == 3
    if traffic.one_to_one:
        whole = mcf_throughput(catalogue, traffic, unit)[0]
    else:
        whole = mcf_edge_throughput(planes, traffic, unit)
    assert mcf.throughput_gbps == pytest.approx(whole, rel=2e-4)


def test_identical_planes_rank_their_paths_alike() -> None:
    planes = jellyfish_planes("jf-hom", 16, 4, 2, 3, False, 3, 100.0)
    catalogue = PathCatalogue(planes, 4)
    catalogue.prepare_ksp([(0, 9), (3, 12)], 5)
    for s, t in [(0, 9), (3, 12)]:
        first = catalogue.ksp(0, s, t, 5)
        assert len(first) == 5
        assert all(catalogue.ksp(p, s, t, 5) == first for p in (1, 2))
    ranked = catalogue.ksp_total(0, 9, 6)
    assert [plane for plane, _ in ranked] == [0, 1, 2, 0, 1, 2]
