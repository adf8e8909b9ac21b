"""hand-6 brought up by `fatpaths lab up --mgmt` and deployed to with the devices file it writes,
as a user would: a changed config deployed to all six switches leaves every routing table equal
to the compiled one, drift shows in a dry run, a failed deploy leaves the running config as it
was, a switch whose FRR is down fails with vtysh's reason, and `lab down` leaves nothing.

Every expectation is read from the switches themselves (vtysh and `ip` in their namespaces)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from lab_fixtures import require_lab
from test_deploy_support import compiled_frr_table, run
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.cli import build_app
from fatpaths_cfg.deploy import report as deploy_report
from fatpaths_cfg.lab import frr
from fatpaths_cfg.lab.names import RUNTIME_ROOT
from fatpaths_cfg.lab.netns import existing_netns
from fatpaths_cfg.lab.plan import build_plan
from fatpaths_cfg.lab.state import load_state, process_starttime

SWITCHES = [f"leaf{i}" for i in range(1, 7)]


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deploy_report.console, "width", 250)


@dataclass(frozen=True)
class LabSwitch:
    """A lab switch read directly in its namespace, never through the deploy code."""

    netns: str
    vty: Path
    state_dir: Path

    def vtysh(self, *commands: str) -> str:
        args = [a for c in commands for a in ("-c", c)]
        return run("ip", "netns", "exec", self.netns, "vtysh", "--vty_socket", str(self.vty), *args)

    def running_config(self) -> list[str]:
        return [
            line
            for line in self.vtysh("show running-config").splitlines()
            if not line.startswith(("Building", "Current", "frr version"))
        ]

    def rib(self) -> dict[str, set[str]]:
        table = json.loads(self.vtysh("show ip route static json"))
        return {
            p: {h["ip"] for h in e["nexthops"] if h.get("fib")}
            for p, entries in table.items()
            for e in entries
            if e.get("installed")
        }

    def fib(self) -> dict[str, set[str]]:
        routes = json.loads(run("ip", "-n", self.netns, "-4", "-j", "route", "show"))
        table: dict[str, set[str]] = {}
        for route in routes:
            gateways = {h["gateway"] for h in route.get("nexthops", [route]) if "gateway" in h}
            if gateways:
                table[route["dst"]] = gateways
        return table


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(build_app(), list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def deploy(out: Path, devices: Path, *extra: str) -> tuple[int, str]:
    return cli("deploy", str(out), "--devices", str(devices), "--parallel", "3", *extra)


@dataclass(frozen=True)
class MgmtLab:
    outs: dict[int, Path]
    devices: Path
    switches: dict[str, LabSwitch]


def leftovers(
    out: Path, lab: str, sshd: list[tuple[int, int | None]], made: list[str]
) -> list[str]:
    """Whatever of the lab still exists after `lab down`."""
    left = [ns for ns in existing_netns() if ns.startswith(f"fp-{lab}-")]
    left += [f"sshd {pid}" for pid, start in sshd if process_starttime(pid) == start]
    paths = [*made, str(RUNTIME_ROOT / lab), str(out / "lab/state.json")]
    return left + [p for p in paths if Path(p).exists() and p != "/run/sshd"]


@pytest.fixture
def mgmt_lab(tmp_path: Path, repo: Path) -> Iterator[MgmtLab]:
    require_lab()
    outs = {}
    for seed in (7, 8):
        outs[seed] = tmp_path / f"seed{seed}"
        api.compile_to_directory(repo / "inventories/hand-6.yaml", outs[seed], seed)
    out = outs[7]
    plan = build_plan(out)
    try:
        code, output = cli("lab", "up", str(out), "--mgmt")
        assert code == 0, output
        assert f"--devices {out / 'lab/devices.yaml'}" in output.replace("\n", "")
        state = load_state(plan.state_file)
        assert state is not None
        devices = yaml.safe_load((out / "lab/devices.yaml").read_text())["devices"]
        runtime = Path(state.runtime_dir)
        switches = {
            node.name: LabSwitch(
                node.netns,
                frr.switch_runtime_dir(runtime, node),
                Path(devices[node.name]["state_dir"]),
            )
            for node in plan.switches
        }
        yield MgmtLab(outs, out / "lab/devices.yaml", switches)
    finally:
        state = load_state(plan.state_file)
        sshd = (
            [(d.pid or 0, d.starttime) for d in state.daemons if d.daemon == "sshd"]
            if state
            else []
        )
        made = state.made if state else []
        cli("lab", "down", str(out))
        left = leftovers(out, plan.lab, sshd, made)
        for ns in (n for n in left if n.startswith("fp-")):
            subprocess.run(["ip", "netns", "del", ns], check=False)
        assert not left, f"left behind by lab down: {left}"


@pytest.mark.lab
@pytest.mark.slow
def test_lab_mgmt_deploy_dry_run_changed_config_failed_deploy_and_drift(
    mgmt_lab: MgmtLab, tmp_path: Path
) -> None:
    outs, devices, switches = mgmt_lab.outs, mgmt_lab.devices, mgmt_lab.switches
    book = yaml.safe_load(devices.read_text())
    netns = book["defaults"]["netns"]
    addresses = [entry["host"] for entry in book["devices"].values()]
    assert sorted(book["devices"]) == SWITCHES and len(set(addresses)) == 6
    # Management addresses live in the lab's namespaces only: the machine has none of them.
    machine = run("ip", "-o", "addr", "show")
    assert not [a for a in addresses if f" {a}/" in machine], machine
    for name, entry in book["devices"].items():
        port = run("ip", "-n", switches[name].netns, "-o", "addr", "show", "dev", "mgmt0")
        assert f" {entry['host']}/31 " in port, port
    assert len(run("ip", "-n", netns, "-4", "-o", "addr", "show").splitlines()) == 6 + 1  # + lo
    state_dirs = {e["state_dir"] for e in book["devices"].values()}
    assert len(state_dirs) == 6 and all(Path(d).is_dir() for d in state_dirs)

    # The lab runs what seed 7 compiled, so the deploy reads every switch as unchanged.
    code, output = deploy(outs[7], devices, "--dry-run")
    assert code == 0 and output.count("unchanged") == 6, output

    # --no-commit stages each switch's candidate in that switch's own state directory.
    code, output = deploy(outs[8], devices, "--no-commit")
    assert code == 0 and output.count("staged") == 6, output
    for name, switch in switches.items():
        staged = (switch.state_dir / "candidate/frr.conf").read_bytes()
        assert staged == (outs[8] / f"configs/frr/{name}/frr.conf").read_bytes(), name
        shutil.rmtree(switch.state_dir / "candidate")

    # Drift: a route configured by hand on leaf3 shows in a dry run, which changes nothing.
    hop = sorted(compiled_frr_table(outs[7], "leaf3").values())[0].pop()
    switches["leaf3"].vtysh("configure terminal", f"ip route 10.98.0.0/24 {hop}")
    code, output = deploy(outs[8], devices, "--dry-run")
    assert code == 0, output
    assert f"-ip route 10.98.0.0/24 {hop}" in output
    for name in SWITCHES:
        stray = {"10.98.0.0/24": {hop}} if name == "leaf3" else {}
        assert switches[name].rib() == compiled_frr_table(outs[7], name) | stray, name

    # A changed config: every switch's RIB and FIB equal the compiled routes, next hops too.
    code, output = deploy(outs[8], devices)
    assert code == 0 and output.count("committed") == 6, output
    for name in SWITCHES:
        switch = switches[name]
        assert switch.rib() == compiled_frr_table(outs[8], name) == switch.fib(), name

    # A failed deploy: leaf2 gets a next hop on no cable, rolls back, runs what ran before.
    before = {n: switches[n].running_config() for n in SWITCHES}
    broken = tmp_path / "broken"
    shutil.copytree(outs[7], broken, ignore=shutil.ignore_patterns("lab"))
    with (broken / "configs/frr/leaf2/frr.conf").open("a") as conf:
        conf.write("ip route 10.250.0.0/24 172.31.255.1\n")
    code, output = deploy(broken, devices, "--verify-timeout", "3")
    assert code == 1, output
    assert output.count("rolled back") >= 1 and "leaf2: rib: 1 compiled routes missing" in output
    assert switches["leaf2"].running_config() == before["leaf2"]
    assert switches["leaf2"].rib() == compiled_frr_table(outs[8], "leaf2")
    assert output.count("committed") == 5, output
    for name in SWITCHES[2:]:
        switch = switches[name]
        assert switch.rib() == compiled_frr_table(outs[7], name) == switch.fib(), name


@pytest.mark.lab
def test_a_switch_whose_frr_is_down_fails_with_vtyshs_reason_and_lab_down_leaves_nothing(
    mgmt_lab: MgmtLab,
) -> None:
    out, devices, leaf3 = mgmt_lab.outs[7], mgmt_lab.devices, mgmt_lab.switches["leaf3"]
    plan = build_plan(out)
    state = load_state(plan.state_file)
    assert state is not None
    for record in state.daemons:
        if record.netns == leaf3.netns and record.daemon in frr.DAEMONS:
            assert frr.stop_daemon(record), record
    for extra in ("--dry-run", "--no-commit"):
        code, output = deploy(mgmt_lab.outs[8], devices, extra)
        assert code == 1, output
        assert "failed to connect to any daemons" in output, output
        assert output.count("│ failed ") == 1 and "leaf3: DeviceReadError: vtysh" in output, output
        # Never read as an empty switch: no diff shown for it, nothing left staged on it.
        assert "+hostname leaf3" not in output
        assert not (leaf3.state_dir / "candidate").exists()

    sshd = [(d.pid or 0, d.starttime) for d in state.daemons if d.daemon == "sshd"]
    assert len(sshd) == 6 and all(process_starttime(p) == s for p, s in sshd)
    code, output = cli("lab", "down", str(out))
    assert code == 0 and "19 namespaces deleted" in output, output
    assert leftovers(out, plan.lab, sshd, state.made) == []
    assert sorted(p.name for p in (out / "lab").iterdir()) == ["hand6.clab.yml"]
