"""`fatpaths verify` on every example inventory compiled for every platform, and its exit codes."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.cli.verify import add_commands
from fatpaths_cfg.platforms import PLATFORMS as REGISTRY
from fatpaths_cfg.verify.run import verify_output

INVENTORIES = sorted((Path(__file__).resolve().parent.parent / "inventories").glob("*.yaml"))
PLATFORMS = list(REGISTRY)


def _compile(inventory: Path, out: Path, platforms: list[str] = PLATFORMS) -> Path:
    compiled = api.compile_fabric(inventory)
    api.build_output(compiled, platforms=platforms).commit(out)
    return out


@pytest.mark.parametrize("inventory", INVENTORIES, ids=[p.stem for p in INVENTORIES])
def test_every_example_verifies_on_every_platform(inventory: Path, tmp_path: Path) -> None:
    report = verify_output(_compile(inventory, tmp_path / "out"))
    assert [c.platform for c in report.checks] == list(REGISTRY)
    for check in report.checks:
        assert [str(f) for f in check.findings] == [], check.platform
        switches = json.loads((tmp_path / "out" / "fabric.json").read_text())["switches"]
        # Every ordered pair of switches of one plane (all pairs, with one plane).
        sizes = Counter(s["plane"] for s in switches).values()
        layers = len(report.deadlock)
        assert check.walks == layers * sum(n * (n - 1) for n in sizes)
        assert check.routes >= check.walks
    assert report.ok


def test_acyclic_example_is_cycle_free_and_gets_a_pfc_plan(tmp_path: Path) -> None:
    inventory = next(p for p in INVENTORIES if p.stem == "slimfly-q5-acyclic")
    report = verify_output(_compile(inventory, tmp_path / "out", ["frr"]), max_lossless_classes=4)
    assert all(layer.cycle_free for layer in report.deadlock)
    assert report.pfc is not None and report.pfc.feasible


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """Test root so that `verify` stays a subcommand."""

    add_commands(app)
    return app


@pytest.fixture(scope="module")
def hand6(tmp_path_factory: pytest.TempPathFactory) -> Path:
    inventory = next(p for p in INVENTORIES if p.stem == "hand-6")
    return _compile(inventory, tmp_path_factory.mktemp("hand6") / "out", ["frr", "eos"])


def test_cli_exit_zero_and_reports_when_the_fabric_is_right(hand6: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(_app(), ["verify", str(hand6), "--report", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "PASS" in result.output
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["ok"] and [f["platform"] for f in data["forwarding"]] == ["frr", "eos"]
    assert (tmp_path / "report.md").read_text().startswith("# fatpaths verify: hand6: PASS")


def test_cli_exit_one_names_the_file_and_line(hand6: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(hand6, out)
    config = out / "configs" / "eos" / "leaf2.cfg"
    lines = config.read_text().splitlines(True)
    number = next(i for i, x in enumerate(lines) if x.startswith("ip route "))
    del lines[number]
    config.write_text("".join(lines))
    result = CliRunner().invoke(_app(), ["verify", str(out), "--platform", "eos"])
    assert result.exit_code == 1
    assert "configs/eos/leaf2.cfg: missing-route: layer 1: leaf2 has no route" in result.output


def test_cli_exit_two_on_bad_input(hand6: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(_app(), ["verify", str(tmp_path)]).exit_code == 2
    result = runner.invoke(_app(), ["verify", str(hand6), "--platform", "sonic"])
    assert result.exit_code == 2
    assert "no configs/sonic/" in result.output
