"""Ordered deploy on `linux`-platform switches: hand-6 brought up by `lab up --mgmt` with plain
Linux switches (the kernel is the running config, no FRR), seed 7 -> seed 8 in the plan's
rounds. The rounds change single routes there with `ip route replace`; every state between
rounds is read back from all six switches and walked, and the kernels end on seed 8's routes.

Every expectation at the end is read from the switches' namespaces, never through the deploy
code."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from lab_fixtures import require_lab
from test_deploy_support import run
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.cli import build_app
from fatpaths_cfg.deploy.devices import Access, load_device_book
from fatpaths_cfg.deploy.push import DeployOptions
from fatpaths_cfg.deploy.rounds import RoundResult, ordered_deploy
from fatpaths_cfg.lab.netns import existing_netns
from fatpaths_cfg.lab.plan import build_plan
from fatpaths_cfg.plan.run import make_plan

SWITCHES = [f"leaf{i}" for i in range(1, 7)]


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(build_app(), list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def compiled_table(out: Path, switch: str) -> dict[str, set[str]]:
    """The IPv4 routes a linux switch's compiled script installs: prefix -> next hops."""
    table: dict[str, set[str]] = {}
    for line in (out / f"configs/linux/{switch}.sh").read_text().splitlines():
        words = line.split()
        if line.startswith("ip route replace ") and "via" in words:
            table.setdefault(words[3], set()).add(words[words.index("via") + 1])
    return table


def kernel_table(netns: str) -> dict[str, set[str]]:
    """The switch kernel's IPv4 routes with a gateway, read in its namespace."""
    routes = json.loads(run("ip", "-n", netns, "-4", "-j", "route", "show"))
    table: dict[str, set[str]] = {}
    for route in routes:
        gateways = {h["gateway"] for h in route.get("nexthops", [route]) if "gateway" in h}
        if gateways:
            table[route["dst"]] = gateways
    return table


@pytest.fixture
def linux_lab(tmp_path: Path, repo: Path) -> Iterator[tuple[dict[int, Path], Path, dict[str, str]]]:
    require_lab()
    inventory = tmp_path / "hand-6-linux.yaml"
    inventory.write_text(
        (repo / "inventories/hand-6.yaml").read_text().replace("platform: frr", "platform: linux")
    )
    outs = {}
    for seed in (7, 8):
        outs[seed] = tmp_path / f"seed{seed}"
        api.compile_to_directory(inventory, outs[seed], seed)
        assert (outs[seed] / "configs/linux/leaf1.sh").is_file()
    out = outs[7]
    plan = build_plan(out)
    try:
        code, output = cli("lab", "up", str(out), "--mgmt")
        assert code == 0, output
        netns = {node.name: node.netns for node in plan.switches}
        yield outs, out / "lab/devices.yaml", netns
    finally:
        cli("lab", "down", str(out))
        left = [ns for ns in existing_netns() if ns.startswith(f"fp-{plan.lab}-")]
        for ns in left:
            subprocess.run(["ip", "netns", "del", ns], check=False)
        assert not left, f"left behind by lab down: {left}"


@pytest.mark.lab
@pytest.mark.slow
def test_linux_switches_take_the_rounds_with_ip_route_replace_and_end_on_new(
    linux_lab: tuple[dict[int, Path], Path, dict[str, str]],
) -> None:
    outs, devices, netns = linux_lab
    # The lab runs seed 7's scripts: the kernels hold its routes before anything is pushed.
    for name in SWITCHES:
        assert kernel_table(netns[name]) == compiled_table(outs[7], name), name
    assert any(compiled_table(outs[7], n) != compiled_table(outs[8], n) for n in SWITCHES), (
        "seed 7 and 8 should route differently"
    )
    plan = make_plan(outs[7], outs[8], check=False)
    route_rounds = [r for r in plan.update.rounds if r.kind == "routes"]
    assert len(route_rounds) >= 2, "seed 7 -> 8 should need more than one round"

    book = load_device_book(devices, Access())
    options = DeployOptions(verify_timeout=20.0)
    seen: list[RoundResult] = []
    after_round: dict[int, dict[str, dict[str, set[str]]]] = {}

    def record(result: RoundResult) -> None:
        seen.append(result)
        after_round[result.number] = {n: kernel_table(netns[n]) for n in SWITCHES}

    report = ordered_deploy(outs[7], outs[8], book, options, 3, on_round=record)
    assert report.outcome == "committed", [(r.number, r.failed) for r in seen]
    assert report.exit_code == 0 and report.state == "NEW"
    assert [r.number for r in seen if r.kind == "routes"] == [r.number for r in route_rounds]
    for result in seen:
        # Every state between rounds was read back from all six kernels and walked.
        assert result.proof is not None and result.proof.ok, result
        assert result.proof.walked >= 6 * 5 * 3
        assert not result.failed, result.failed
    # The first round moved some routes and left others: the kernels passed through a state
    # that is neither seed's, and nothing pushed a whole script in its place.
    first = after_round[route_rounds[0].number]
    assert any(first[n] != compiled_table(outs[7], n) for n in SWITCHES)
    assert any(first[n] != compiled_table(outs[8], n) for n in SWITCHES)
    for name in SWITCHES:
        assert kernel_table(netns[name]) == compiled_table(outs[8], name), name
