"""hand-6 as six switch namespaces cabled as compiled, each with sshd, FRR and lldpd: a changed
config deployed to all of them leaves every routing table equal to the compiled one, a failed
deploy leaves the running config as it was, and drift shows in a dry run."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_deploy_support import NamespaceLab, build_fabric, compiled_frr_table
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.cli import build_app
from fatpaths_cfg.deploy import commands as deploy_commands

SWITCHES = [f"leaf{i}" for i in range(1, 7)]


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deploy_commands.console, "width", 250)


@pytest.fixture
def hand6(tmp_path: Path, repo: Path) -> Iterator[tuple[NamespaceLab, dict[int, Path]]]:
    outs = {}
    for seed in (7, 8):
        out = tmp_path / f"seed{seed}"
        api.compile_to_directory(repo / "inventories/hand-6.yaml", out, seed)
        outs[seed] = out
    lab = NamespaceLab(tmp_path)
    try:
        build_fabric(lab, outs[7] / "fabric.json", lldp=False)
        yield lab, outs
    finally:
        lab.close()


def deploy(out: Path, lab: NamespaceLab, devices: Path, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        build_app(),
        [
            "deploy",
            str(out),
            "--devices",
            str(devices),
            "--known-hosts",
            str(lab.known_hosts),
            "--parallel",
            "3",
            *extra,
        ],
    )
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


@pytest.mark.lab
@pytest.mark.slow
def test_fabric_deploy_changed_config_failed_deploy_and_drift(
    hand6: tuple[NamespaceLab, dict[int, Path]], tmp_path: Path
) -> None:
    lab, outs = hand6
    devices = lab.devices_file(tmp_path / "devices.yaml")
    code, output = deploy(outs[7], lab, devices)
    assert code == 0 and output.count("committed") == 6, output

    # Drift: a route configured by hand on leaf3 shows in a dry run, which changes nothing.
    hop = sorted(compiled_frr_table(outs[7], "leaf3").values())[0].pop()
    lab.devices["leaf3"].vtysh("configure terminal", f"ip route 10.98.0.0/24 {hop}")
    code, output = deploy(outs[8], lab, devices, "--dry-run")
    assert code == 0, output
    assert f"-ip route 10.98.0.0/24 {hop}" in output
    for name in SWITCHES:
        stray = {"10.98.0.0/24": {hop}} if name == "leaf3" else {}
        assert lab.devices[name].rib() == compiled_frr_table(outs[7], name) | stray, name

    # A changed config: every switch's RIB and FIB equal the compiled routes, next hops too.
    code, output = deploy(outs[8], lab, devices)
    assert code == 0 and output.count("committed") == 6, output
    for name in SWITCHES:
        device = lab.devices[name]
        assert device.rib() == compiled_frr_table(outs[8], name) == device.fib(), name

    # A failed deploy: leaf2 gets a next hop on no cable, rolls back, runs what ran before.
    before = {n: lab.devices[n].running_config() for n in SWITCHES}
    broken = tmp_path / "broken"
    shutil.copytree(outs[7], broken)
    with (broken / "configs/frr/leaf2/frr.conf").open("a") as conf:
        conf.write("ip route 10.250.0.0/24 172.31.255.1\n")
    code, output = deploy(broken, lab, devices, "--verify-timeout", "3")
    assert code == 1, output
    assert output.count("rolled back") >= 1 and "leaf2: rib: 1 compiled routes missing" in output
    assert lab.devices["leaf2"].running_config() == before["leaf2"]
    assert lab.devices["leaf2"].rib() == compiled_frr_table(outs[8], "leaf2")
    assert output.count("committed") == 5, output
    for name in SWITCHES[2:]:
        device = lab.devices[name]
        assert device.rib() == compiled_frr_table(outs[7], name) == device.fib(), name
