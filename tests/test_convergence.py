"""The Clos adaptive-routing convergence model and its abstract simulation (Zahavi et al.)."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.analysis.convergence import (
    ClosShape,
    convergence_point,
    expected_iterations,
    last_step_transition_matrix,
    random_permutation,
    simulate_iterations,
    worst_permutation,
)
from fatpaths_cfg.cli import build_app

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("p", [1, 2])
def test_last_step_chain_is_stochastic_with_one_absorbing_state(p: int) -> None:
    matrix = last_step_transition_matrix(ClosShape(6, 8, 6, p))
    assert np.allclose(matrix.sum(axis=1), 1.0)
    assert matrix[0, 0] == 1.0
    assert (matrix[1:, 0] > 0).all(), "every state can reach convergence"


def test_full_rate_flows_converge_exponentially_in_r_and_half_rate_in_a_few_steps() -> None:
    full = [expected_iterations(ClosShape(6, r, 6, 1)) for r in (2, 4, 6, 8)]
    half = [expected_iterations(ClosShape(6, r, 6, 2)) for r in (2, 4, 6, 8)]
    ratios = [b / a for a, b in itertools.pairwise(full)]
    assert min(ratios) > 5, full  # each +2 in r multiplies the time
    assert max(half) < 3, half


def test_simulation_agrees_in_trend_with_the_model() -> None:
    means = {
        (p, r): convergence_point(ClosShape(6, r, 6, p), 40, seed=3, max_iterations=50_000).mean
        for p in (1, 2)
        for r in (2, 4, 6)
    }
    assert means[(1, 2)] < means[(1, 4)] < means[(1, 6)]
    assert means[(1, 6)] > 20 * means[(2, 6)]
    assert means[(2, 6)] < 5


@pytest.mark.parametrize("worst", [False, True])
def test_a_converged_run_leaves_no_link_over_p_flows(worst: bool) -> None:
    shape = ClosShape(4, 6, 4, 2)
    rng = random.Random(5)
    destinations = (worst_permutation if worst else random_permutation)(shape, rng)
    assert sorted(destinations) == list(range(shape.n * shape.r))
    run = simulate_iterations(shape, destinations, rng, max_iterations=10_000)
    assert run.converged


def test_a_non_rearrangeable_clos_is_reported_unconverged() -> None:
    """m * p < n: some permutation always leaves a link with more than p flows."""
    shape = ClosShape(6, 6, 2, 1)
    assert not shape.rearrangeable
    point = convergence_point(shape, 5, seed=1, max_iterations=200)
    assert point.unconverged == 5 and point.maximum == 200


def test_analyze_convergence_on_a_compiled_clos(tmp_path: Path) -> None:
    inventory = tmp_path / "clos.yaml"
    inventory.write_text(
        "fabric: clos-4-4-4\ngenerate: {kind: clos, n: 4, r: 4, m: 4}\nrouting: {layers: 1}\n"
    )
    out = tmp_path / "out"
    api.compile_to_directory(inventory, out)
    app = build_app()
    result = CliRunner().invoke(app, ["analyze", str(out), "--convergence", "--permutations", "5"])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if line.startswith("Clos(")]
    assert len(lines) == 2 * 3  # r = 2, 3, 4 for p = 1 and 2
    data = json.loads((out / "convergence" / "convergence.json").read_text())
    assert (data["n"], data["r"], data["m"]) == (4, 4, 4)
    assert {(pt["p"], pt["r"]) for pt in data["points"]} == {
        (p, r) for p in (1, 2) for r in (2, 3, 4)
    }
    assert (out / "convergence" / "convergence.png").read_bytes()[:4] == b"\x89PNG"


def test_analyze_convergence_refuses_a_fabric_that_is_not_a_clos(tmp_path: Path) -> None:
    out = tmp_path / "out"
    api.compile_to_directory(REPO / "inventories" / "hand-6.yaml", out)
    result = CliRunner().invoke(build_app(), ["analyze", str(out), "--convergence"])
    assert result.exit_code == 2
    assert "needs a two-level Clos" in result.stderr
    assert not (out / "convergence").exists()


def clos_inventory(tmp_path: Path, m: int, flow_rate: str | None, name: str = "clos") -> Path:
    defaults = f"defaults: {{host_flow_rate: {flow_rate}}}\n" if flow_rate else ""
    path = tmp_path / f"{name}.yaml"
    path.write_text(
        f"fabric: {name}\n{defaults}generate: {{kind: clos, n: 4, r: 3, m: {m}}}\n"
        "routing: {layers: 2, rho: 0.9}\n"
    )
    return path


@pytest.mark.parametrize(
    ("m", "flow_rate", "expected"),
    [
        (4, None, "flows at the full link rate (p=1)"),
        (2, None, "m*p = 2 < n = 4"),
        (2, "50G", None),  # p = 2: m*p = 4 = n, and half rate converges fast
        (4, "50G", None),
    ],
)
def test_compile_warns_when_re_routing_on_a_clos_would_not_settle(
    tmp_path: Path, m: int, flow_rate: str | None, expected: str | None
) -> None:
    inventory = clos_inventory(tmp_path, m, flow_rate)
    result = CliRunner().invoke(
        build_app(), ["compile", str(inventory), "-o", str(tmp_path / "out")]
    )
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    if expected is None:
        assert warnings == []
    else:
        assert len(warnings) == 1 and expected in warnings[0]
        assert "defaults.host_flow_rate" in warnings[0]
        line = (
            inventory.read_text()
            .splitlines()
            .index(next(t for t in inventory.read_text().splitlines() if t.startswith("generate")))
            + 1
        )
        assert f"{inventory}:{line}:" in warnings[0]  # the generate block


def test_host_plans_shape_the_uplink_only_when_asked(tmp_path: Path) -> None:
    shaped = api.build_output(api.compile_fabric(clos_inventory(tmp_path, 4, "25G"))).files
    plain = api.build_output(api.compile_fabric(clos_inventory(tmp_path, 4, None, "p"))).files
    plan = shaped["hosts/leaf-0-h0.sh"].decode()
    assert "tc qdisc replace dev eth0 root fq maxrate 25000mbit" in plan
    assert "tbf rate 25000mbit" in plan  # kernels without fq
    assert "tc qdisc" not in plain["hosts/leaf-0-h0.sh"].decode()
    assert '"pacing_gbps": 25.0' in shaped["fabric.json"].decode()
    assert "pacing_gbps" not in plain["fabric.json"].decode()


def test_a_flow_rate_above_the_host_speed_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        build_app(),
        ["compile", str(clos_inventory(tmp_path, 4, "400G")), "-o", str(tmp_path / "out")],
    )
    assert result.exit_code == 2
    assert "defaults.host_flow_rate: 400G is faster than the hosts' own link" in result.stderr
    assert not (tmp_path / "out").exists()
