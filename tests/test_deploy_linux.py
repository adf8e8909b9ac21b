"""`--platform linux` switches deploy over SSH with the frr contract: the kernel is the running
config, the compiled iproute2 script the candidate, the FIB is read back after the commit."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from compiled_edit import rewrite_fabric_json
from test_deploy_support import Device, NamespaceLab, run
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.cli import build_app
from fatpaths_cfg.deploy import report as deploy_report

PORTS = [f"Ethernet{i}" for i in range(1, 7)]


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deploy_report.console, "width", 250)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory, repo: Path) -> dict[int, Path]:
    """hand-6 rendered for plain Linux switches, with two seeds."""
    inventory = tmp_path_factory.mktemp("linux") / "hand-6-linux.yaml"
    inventory.write_text(
        (repo / "inventories/hand-6.yaml").read_text().replace("platform: frr", "platform: linux")
    )
    outs = {}
    for seed in (7, 8):
        out = tmp_path_factory.mktemp(f"linux-seed{seed}")
        api.compile_to_directory(inventory, out, seed)
        data = json.loads((out / "fabric.json").read_text())
        for switch in data["switches"]:
            switch["mgmt"] = None
        rewrite_fabric_json(out, data)
        outs[seed] = out
    return outs


@pytest.fixture
def device(tmp_path: Path) -> Iterator[Device]:
    lab = NamespaceLab(tmp_path)
    try:
        yield lab.add_switch("leaf1", PORTS, frr=False)
    finally:
        lab.close()


def deploy(out: Path, device: Device, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        build_app(), ["deploy", str(out), *device.cli_args(), "--limit", "leaf1", *extra]
    )
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def with_mgmt(source: Path, target: Path, device: Device) -> Path:
    shutil.copytree(source, target)
    data = json.loads((target / "fabric.json").read_text())
    for switch in data["switches"]:
        switch["mgmt"] = device.address if switch["name"] == "leaf1" else None
    rewrite_fabric_json(target, data)
    return target


def compiled_table(out: Path) -> dict[str, set[str]]:
    table: dict[str, set[str]] = {}
    for line in (out / "configs/linux/leaf1.sh").read_text().splitlines():
        if line.startswith("ip route replace ") and " via " in line:
            table.setdefault(line.split()[3], set()).add(line.split()[5])
    return table


@pytest.mark.lab
def test_linux_switch_deploys_drifts_and_rolls_back(
    device: Device, compiled: dict[int, Path], tmp_path: Path
) -> None:
    out = with_mgmt(compiled[7], tmp_path / "seven", device)
    code, output = deploy(out, device)
    assert code == 0, output
    assert "committed" in output and "15/15" in output
    assert device.fib() == compiled_table(out)
    assert (device.state_dir / "switch.sh").read_bytes() == (
        out / "configs/linux/leaf1.sh"
    ).read_bytes()
    code, output = deploy(out, device)
    assert code == 0 and "unchanged" in output, output

    # A route added by hand is drift: the dry run shows it, the next deploy removes it.
    run("ip", "-n", device.netns, "route", "add", "10.97.0.0/24", "via", "172.16.0.1")
    code, output = deploy(out, device, "--dry-run")
    assert code == 0, output
    assert "-ip route replace 10.97.0.0/24 via 172.16.0.1" in output
    other = with_mgmt(compiled[8], tmp_path / "eight", device)
    code, output = deploy(other, device)
    assert code == 0 and "committed" in output, output
    assert device.fib() == compiled_table(other)

    # The kernel refuses a next hop on no cable: the commit fails and the saved state returns.
    before = device.fib()
    broken = with_mgmt(compiled[7], tmp_path / "broken", device)
    with (broken / "configs/linux/leaf1.sh").open("a") as script:
        script.write("ip route replace 10.250.0.0/24 via 172.31.255.1\n")
    code, output = deploy(broken, device)
    assert code == 1, output
    assert "rolled back" in output and "previous state restored and read back" in output
    assert device.fib() == before == compiled_table(other)
