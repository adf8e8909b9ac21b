"""`fatpaths deploy` against a real device: a network namespace with its own sshd and FRR.

Every expectation is read from the device itself (vtysh in the namespace, the namespace's
kernel), never through the code under test. Nothing talks to the inventories' mgmt addresses:
every test rewrites fabric.json or gives a devices file first.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from compiled_edit import rewrite_fabric_json
from napalm.base.exceptions import CommitError
from rich.console import Console
from test_deploy_support import NamespaceLab, run
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.cli import build_app
from fatpaths_cfg.deploy import report as deploy_report
from fatpaths_cfg.deploy.devices import Access, load_device_book
from fatpaths_cfg.deploy.push import DeployReport, SwitchResult, driver_class, plan_targets
from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.platforms.frr.deploy import FrrDriver, frr_config_lines

PORTS = [f"Ethernet{i}" for i in range(1, 7)]
INITIAL_CONF = b"hostname leaf1\n!\n"


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rich wraps at 80 columns under CliRunner; messages are asserted unbroken."""
    monkeypatch.setattr(deploy_report.console, "width", 250)


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[NamespaceLab]:
    lab = NamespaceLab(tmp_path)
    try:
        yield lab
    finally:
        lab.close()


@pytest.fixture
def device(lab: NamespaceLab):  # type: ignore[no-untyped-def]
    return lab.add_switch("leaf1", PORTS)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory, repo: Path) -> dict[int, Path]:
    """hand-6 compiled with two seeds: two different valid configs for the same switch."""
    outs = {}
    for seed in (7, 8):
        out = tmp_path_factory.mktemp(f"hand6-seed{seed}")
        api.compile_to_directory(repo / "inventories" / "hand-6.yaml", out, seed)
        outs[seed] = out
    leaf1 = [(outs[s] / "configs/frr/leaf1/frr.conf").read_bytes() for s in outs]
    assert leaf1[0] != leaf1[1], "both seeds give leaf1 the same routes"
    return outs


def output_for(source: Path, target: Path, mgmt: dict[str, str | None]) -> Path:
    """A copy of a compiled output whose switches have exactly the given mgmt addresses."""
    shutil.copytree(source, target)
    fabric_file = target / "fabric.json"
    data = json.loads(fabric_file.read_text())
    for switch in data["switches"]:
        switch["mgmt"] = mgmt.get(switch["name"])
    rewrite_fabric_json(target, data)
    return target


def edit(out: Path, name: str, old: str, new: str) -> None:
    path = out / "configs/frr/leaf1" / name
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


def deploy(out: Path, device, *extra: str) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(build_app(), ["deploy", str(out), *device.cli_args(), *extra])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def compiled_table(out: Path) -> dict[str, set[str]]:
    table: dict[str, set[str]] = {}
    for line in (out / "configs/frr/leaf1/frr.conf").read_text().splitlines():
        if line.startswith("ip route "):
            table.setdefault(line.split()[2], set()).add(line.split()[3])
    return table


def wait_until(condition, timeout: float = 20.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.3)
    return bool(condition())


def device_driver(device, **options: str) -> FrrDriver:  # type: ignore[no-untyped-def]
    """The FRR driver dialling the test device over its own sshd and FRR paths."""
    return FrrDriver(
        device.address,
        "root",
        None,
        10,
        {
            "port": 2222,
            "key_file": str(device.key),
            "known_hosts": str(device.known_hosts),
            "frr_dir": str(device.frr_dir),
            "state_dir": str(device.state_dir),
            "vty_socket": str(device.frr_dir),
            **options,
        },
    )


@pytest.mark.lab
def test_dry_run_shows_the_running_config_against_the_candidate(
    device, compiled: dict[int, Path], tmp_path: Path
) -> None:
    out = output_for(compiled[7], tmp_path / "out", {"leaf1": device.address})
    code, output = deploy(out, device, "--dry-run")
    assert code == 0, output
    assert "--- running/show-running-config" in output
    assert "+ip route 10.0.0.8/29 172.16.0.1" in output
    assert "+ip addr replace 172.16.0.0/31 dev Ethernet1" in output
    assert "-hostname leaf1" not in output and "diff" in output
    assert (device.frr_dir / "frr.conf").read_bytes() == INITIAL_CONF
    assert not (device.state_dir / "interfaces.sh").exists()
    assert not (device.state_dir / "candidate").exists()
    assert device.rib() == {}
    assert "172.16.0.0/31" not in device.addresses("Ethernet1")


@pytest.mark.lab
def test_commit_installs_prefixes_and_next_hops_and_a_second_deploy_is_empty(
    device, compiled: dict[int, Path], tmp_path: Path
) -> None:
    out = output_for(compiled[7], tmp_path / "out", {"leaf1": device.address})
    code, output = deploy(out, device, "--limit", "leaf1")
    assert code == 0, output
    assert "committed" in output and "15/15" in output
    for source, installed in (
        ("frr.conf", device.frr_dir / "frr.conf"),
        ("interfaces.sh", device.state_dir / "interfaces.sh"),
    ):
        assert installed.read_bytes() == (out / "configs/frr/leaf1" / source).read_bytes()
    assert device.rib() == compiled_table(out) == device.fib()
    assert len(compiled_table(out)) == 15
    assert "172.16.0.0/31" in device.addresses("Ethernet1")

    mtime = (device.frr_dir / "frr.conf").stat().st_mtime_ns
    code, output = deploy(out, device)
    assert code == 0, output
    assert "unchanged" in output and "no changes" in output and "+ip route" not in output
    assert (device.frr_dir / "frr.conf").stat().st_mtime_ns == mtime

    # A different layer set replaces the routes: lines gone from frr.conf leave FRR and the
    # kernel too.
    other = output_for(compiled[8], tmp_path / "other", {"leaf1": device.address})
    code, output = deploy(other, device)
    assert code == 0, output
    assert device.rib() == compiled_table(other) == device.fib()


@pytest.mark.lab
def test_next_hop_change_is_installed_and_the_old_one_is_gone(
    device, compiled: dict[int, Path], tmp_path: Path
) -> None:
    out = output_for(compiled[7], tmp_path / "out", {"leaf1": device.address})
    edit(out, "interfaces.sh", "set -e\n", "set -e\nip addr replace 10.200.0.1/32 dev lo\n")
    assert deploy(out, device)[0] == 0
    assert device.fib()["10.0.0.8/29"] == {"172.16.0.1"}
    assert "10.200.0.1/32" in device.addresses("lo")
    changed = output_for(compiled[7], tmp_path / "changed", {"leaf1": device.address})
    edit(
        changed,
        "frr.conf",
        "ip route 10.0.0.8/29 172.16.0.1\n",
        # leaf1's neighbour on Ethernet2: a next hop FRR can resolve, so it is installed.
        "ip route 10.0.0.8/29 172.16.0.3\n",
    )
    code, output = deploy(changed, device)
    assert code == 0, output
    assert "-ip route 10.0.0.8/29 172.16.0.1" in output
    assert "+ip route 10.0.0.8/29 172.16.0.3" in output
    assert "-ip addr replace 10.200.0.1/32 dev lo" in output
    assert "committed" in output and "15/15" in output
    assert device.rib()["10.0.0.8/29"] == {"172.16.0.3"} == device.fib()["10.0.0.8/29"]
    assert "ip route 10.0.0.8/29 172.16.0.1" not in device.running_config()
    # The address the new interfaces.sh no longer has is removed, not left behind.
    assert "10.200.0.1/32" not in device.addresses("lo")


@pytest.mark.lab
def test_dry_run_after_a_change_by_hand_shows_the_drift_and_a_deploy_removes_it(
    device, compiled: dict[int, Path], tmp_path: Path
) -> None:
    out = output_for(compiled[7], tmp_path / "out", {"leaf1": device.address})
    assert deploy(out, device)[0] == 0
    device.vtysh("configure terminal", "ip route 10.98.0.0/24 172.16.0.1")
    run("ip", "-n", device.netns, "addr", "add", "172.31.9.9/31", "dev", "Ethernet4")
    code, output = deploy(out, device, "--dry-run")
    assert code == 0, output
    assert "-ip route 10.98.0.0/24 172.16.0.1" in output
    assert "-ip addr replace 172.31.9.9/31 dev Ethernet4" in output
    assert " diff " in output or "│ diff" in output
    assert "10.98.0.0/24" in device.rib()  # a dry run changes nothing
    code, output = deploy(out, device)
    assert code == 0, output
    assert "committed" in output
    assert device.rib() == compiled_table(out) == device.fib()
    assert "172.31.9.9" not in device.addresses("Ethernet4")


@pytest.mark.lab
def test_a_stray_kernel_route_is_reported(
    device, compiled: dict[int, Path], tmp_path: Path
) -> None:
    out = output_for(compiled[7], tmp_path / "out", {"leaf1": device.address})
    assert deploy(out, device)[0] == 0
    run("ip", "-n", device.netns, "route", "add", "10.99.0.0/24", "via", "172.16.0.1")
    code, output = deploy(out, device, "--verify-timeout", "1")
    assert code == 1, output
    assert "fib: 1 static routes not compiled (10.99.0.0/24 via 172.16.0.1)" in output
    assert "failed" in output


@pytest.mark.lab
def test_config_vtysh_rejects_is_refused_and_nothing_changes(
    device, compiled: dict[int, Path], tmp_path: Path
) -> None:
    out = output_for(compiled[7], tmp_path / "out", {"leaf1": device.address})
    assert deploy(out, device)[0] == 0
    before = (device.frr_dir / "frr.conf").read_bytes()
    bad = output_for(compiled[8], tmp_path / "bad", {"leaf1": device.address})
    with (bad / "configs/frr/leaf1/frr.conf").open("a") as conf:
        conf.write("ip route 10.0.0.8/33 172.16.0.1\n")
    code, output = deploy(bad, device)
    assert code == 1, output
    assert "candidate rejected" in output and "Unknown command" in output
    assert (device.frr_dir / "frr.conf").read_bytes() == before
    assert device.rib() == compiled_table(out)


@pytest.mark.lab
def test_unreachable_next_hop_rolls_back_to_the_saved_running_config(
    device, compiled: dict[int, Path], tmp_path: Path
) -> None:
    out = output_for(compiled[7], tmp_path / "out", {"leaf1": device.address})
    assert deploy(out, device)[0] == 0
    # Something configured by hand is part of what ran, so the rollback brings it back too.
    device.vtysh("configure terminal", "ip route 10.98.0.0/24 172.16.0.1")
    saved_running = device.running_config()
    saved_fib = device.fib()
    good_conf = (device.frr_dir / "frr.conf").read_bytes()
    good_script = (device.state_dir / "interfaces.sh").read_bytes()
    # Valid syntax, but the next hop is on no cable: zebra never installs the route.
    broken = output_for(compiled[8], tmp_path / "broken", {"leaf1": device.address})
    with (broken / "configs/frr/leaf1/frr.conf").open("a") as conf:
        conf.write("ip route 10.250.0.0/24 172.31.255.1\n")
    code, output = deploy(broken, device, "--verify-timeout", "3")
    assert code == 1, output
    assert "rolled back" in output
    assert "rib: 1 compiled routes missing (10.250.0.0/24 via 172.31.255.1)" in output
    assert "saved running state restored and read back" in output
    assert device.running_config() == saved_running
    assert device.fib() == saved_fib
    assert (device.frr_dir / "frr.conf").read_bytes() == good_conf
    assert (device.state_dir / "interfaces.sh").read_bytes() == good_script


@pytest.mark.lab
def test_failing_commit_restores_the_previous_state(
    device, compiled: dict[int, Path], tmp_path: Path
) -> None:
    out = output_for(compiled[7], tmp_path / "out", {"leaf1": device.address})
    assert deploy(out, device)[0] == 0
    good_conf = (device.frr_dir / "frr.conf").read_bytes()
    saved_running = device.running_config()
    broken = output_for(compiled[8], tmp_path / "broken", {"leaf1": device.address})
    with (broken / "configs/frr/leaf1/interfaces.sh").open("a") as script:
        script.write("ip link set dev Ethernet9 up\n")  # a port this box does not have
    code, output = deploy(broken, device)
    assert code == 1, output
    assert "rolled back" in output and "previous state restored and read back" in output
    assert (device.frr_dir / "frr.conf").read_bytes() == good_conf
    assert device.running_config() == saved_running
    assert device.rib() == compiled_table(out) == device.fib()


@pytest.mark.lab
def test_commit_confirm_reverts_unless_confirmed(
    device, compiled: dict[int, Path], tmp_path: Path
) -> None:
    out = output_for(compiled[7], tmp_path / "out", {"leaf1": device.address})
    assert deploy(out, device)[0] == 0
    saved_running = device.running_config()
    other = output_for(compiled[8], tmp_path / "other", {"leaf1": device.address})

    # Windows long enough for a deploy and its read-back on a loaded machine: what is checked is
    # what happens at the window's end, not how short it can be.
    code, output = deploy(other, device, "--confirm", "12")
    assert code == 0, output
    assert "pending" in output and "reverts itself in 12 s" in output
    assert device.rib() == compiled_table(other)
    # Nobody confirms: the switch restores what ran before, on its own.
    assert wait_until(lambda: device.rib() == compiled_table(out), 60), device.rib()
    assert wait_until(lambda: device.running_config() == saved_running)
    assert (device.frr_dir / "frr.conf").read_bytes() == (
        out / "configs/frr/leaf1/frr.conf"
    ).read_bytes()
    assert not (device.state_dir / "pending").exists()
    code, output = deploy(other, device, "--confirm-commit")
    assert code == 1 and "no commit is waiting for confirmation" in output

    started = time.monotonic()
    code, output = deploy(other, device, "--confirm", "15")
    assert code == 0 and "pending" in output, output
    code, output = deploy(other, device, "--confirm-commit")
    assert code == 0 and "confirmed" in output, output
    time.sleep(max(0.0, started + 17 - time.monotonic()))
    assert device.rib() == compiled_table(other) == device.fib()


@pytest.mark.lab
def test_without_frr_reload_the_commit_is_refused(
    device, compiled: dict[int, Path], tmp_path: Path
) -> None:
    out = output_for(compiled[7], tmp_path / "out", {"leaf1": device.address})
    driver = device_driver(device, frr_reload="/nonexistent/frr-reload.py")
    driver.open()
    try:
        driver.load_replace_candidate(filename=str(out / "configs/frr/leaf1"))
        with pytest.raises(CommitError, match="refusing to commit"):
            driver.commit_config()
    finally:
        driver.close()
    assert (device.frr_dir / "frr.conf").read_bytes() == INITIAL_CONF
    assert device.rib() == {}


@pytest.mark.lab
def test_cabling_check_stops_before_any_change(
    device, compiled: dict[int, Path], tmp_path: Path
) -> None:
    run("ip", "-n", device.netns, "link", "set", "Ethernet3", "name", "spare3")
    out = output_for(compiled[7], tmp_path / "out", {"leaf1": device.address})
    code, output = deploy(out, device)
    assert code == 1, output
    assert "cabling: no port Ethernet3" in output
    assert (device.frr_dir / "frr.conf").read_bytes() == INITIAL_CONF


@pytest.mark.lab
def test_devices_file_gives_address_port_and_key(
    lab: NamespaceLab, device, compiled: dict[int, Path], tmp_path: Path
) -> None:
    out = output_for(compiled[7], tmp_path / "out", {})  # no mgmt in the inventory at all
    devices = lab.devices_file(tmp_path / "devices.yaml")
    result = CliRunner().invoke(
        build_app(),
        ["deploy", str(out), "--devices", str(devices), "--known-hosts", str(lab.known_hosts)],
    )
    assert result.exit_code == 0, result.output
    assert f"{device.address}:2222" in result.output and "committed" in result.output
    assert "skipped (no mgmt address): leaf2, leaf3, leaf4, leaf5, leaf6" in result.output
    assert str(device.key) not in result.output
    assert device.rib() == compiled_table(out)


@pytest.mark.lab
def test_unknown_host_key_is_refused(
    lab: NamespaceLab, device, compiled: dict[int, Path], tmp_path: Path
) -> None:
    out = output_for(compiled[7], tmp_path / "out", {"leaf1": device.address})
    args = [a for a in device.cli_args()]
    i = args.index("--known-hosts")
    del args[i : i + 2]
    result = CliRunner().invoke(build_app(), ["deploy", str(out), *args])
    assert result.exit_code == 1, result.output
    assert "connect:" in result.output and "not found in known_hosts" in result.output
    assert (device.frr_dir / "frr.conf").read_bytes() == INITIAL_CONF


@pytest.mark.lab
def test_driver_facts_interfaces_and_discard(device, compiled: dict[int, Path]) -> None:
    driver = device_driver(device)
    driver.open()
    try:
        facts = driver.get_facts()
        assert facts["vendor"] == "FRRouting" and facts["os_version"].startswith("FRRouting")
        assert set(PORTS) <= set(facts["interface_list"]) and facts["uptime"] > 0
        assert driver.get_interfaces()["Ethernet1"]["is_enabled"] is False
        driver.load_replace_candidate(config="hostname leaf1\nip route 10.9.0.0/16 Null0\n")
        assert "+ip route 10.9.0.0/16 Null0" in driver.compare_config()
        driver.discard_config()
        assert driver.compare_config() == ""
        assert not (device.state_dir / "candidate").exists()
        assert driver.has_pending_commit() is False
    finally:
        driver.close()
    assert (device.frr_dir / "frr.conf").read_bytes() == INITIAL_CONF


@pytest.mark.lab
def test_unreachable_device_fails_that_switch(
    device, compiled: dict[int, Path], tmp_path: Path
) -> None:
    out = output_for(compiled[7], tmp_path / "out", {"leaf1": device.address})
    result = CliRunner().invoke(
        build_app(), ["deploy", str(out), *device.cli_args(), "--port", "2223"]
    )
    assert result.exit_code == 1, result.output
    assert "connect:" in result.output and "failed" in result.output


def test_user_errors_exit_2(compiled: dict[int, Path], tmp_path: Path) -> None:
    # 192.0.2.0/24 documentation addresses: these runs must stop before any connection.
    out = output_for(compiled[7], tmp_path / "out", {"leaf1": "192.0.2.250"})
    key = tmp_path / "key"
    key.write_text("not used")
    key.chmod(0o600)
    app = build_app()
    cases = {
        "no management address": ["--limit", "leaf2", "--key-file", str(key)],
        "unknown switch": ["--limit", "leaf9", "--key-file", str(key)],
        "no credentials given": ["--limit", "leaf1"],
        "environment variable FATPATHS_TEST_UNSET_PASSWORD is not set": [
            "--password-env",
            "FATPATHS_TEST_UNSET_PASSWORD",
        ],
        "no such file": ["--key-file", str(tmp_path / "missing")],
    }
    for message, args in cases.items():
        result = CliRunner().invoke(app, ["deploy", str(out), *args])
        assert result.exit_code == 2, (message, result.output)
        assert message in result.output, result.output
    nothing = output_for(compiled[7], tmp_path / "nothing", {})
    result = CliRunner().invoke(app, ["deploy", str(nothing), "--key-file", str(key)])
    assert result.exit_code == 2 and "no switch has a management address" in result.output
    result = CliRunner().invoke(app, ["deploy", str(tmp_path), "--key-file", str(key)])
    assert result.exit_code == 2 and "no fabric.json" in result.output


def test_devices_file_errors_name_file_line_and_field(
    compiled: dict[int, Path], tmp_path: Path
) -> None:
    out = output_for(compiled[7], tmp_path / "out", {})
    devices = tmp_path / "devices.yaml"
    devices.write_text(
        "defaults:\n  username: admin\ndevices:\n"
        "  leaf1: {host: 192.0.2.250, password_env: FATPATHS_TEST_UNSET}\n"
        "  leaf9: {host: 192.0.2.251}\n"
        "  leaf2: {host: not-an-address}\n"
    )
    result = CliRunner().invoke(build_app(), ["deploy", str(out), "--devices", str(devices)])
    assert result.exit_code == 2, result.output
    assert f"{devices}:6: devices.leaf2.host" in result.output
    devices.write_text(
        "devices:\n  leaf1: {host: 192.0.2.250, password_env: FATPATHS_TEST_UNSET}\n"
        "  leaf9: {host: 192.0.2.251, password_env: FATPATHS_TEST_UNSET}\n"
    )
    result = CliRunner().invoke(build_app(), ["deploy", str(out), "--devices", str(devices)])
    assert result.exit_code == 2, result.output
    assert (
        f"{devices}:2: devices.leaf1.password_env: "
        "environment variable FATPATHS_TEST_UNSET is not set" in result.output
    )
    assert f"{devices}:3: devices.leaf9: not a switch of this fabric" in result.output


def test_devices_file_pool_and_secret_file(
    compiled: dict[int, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = output_for(compiled[7], tmp_path / "out", {})
    secret = tmp_path / "secret"
    secret.write_text("s3cret\n")
    devices = tmp_path / "devices.yaml"
    devices.write_text(
        f"defaults: {{username: admin, port: 830, password_file: {secret}}}\n"
        "pool: 192.0.2.64/28\n"
        "devices:\n  leaf3: {host: 192.0.2.99, port: 2200}\n"
    )
    targets, skipped = plan_targets(out, None, load_device_book(devices, Access()))
    assert skipped == []
    reached = {t.name: (t.access.address, t.access.credentials.username) for t in targets}
    assert reached["leaf1"] == ("192.0.2.65:830", "admin")
    assert reached["leaf3"] == ("192.0.2.99:2200", "admin")
    assert reached["leaf6"] == ("192.0.2.70:830", "admin")
    assert {t.access.credentials.password for t in targets} == {"s3cret"}
    assert "s3cret" not in repr(targets[0].access.paths)


def test_switches_without_mgmt_are_skipped_and_targets_are_planned(
    compiled: dict[int, Path], tmp_path: Path
) -> None:
    out = output_for(compiled[7], tmp_path / "out", {"leaf1": "192.0.2.250"})
    key = tmp_path / "key"
    key.write_text("not used")
    key.chmod(0o600)
    targets, skipped = plan_targets(out, None, load_device_book(None, Access(key_file=str(key))))
    assert [t.name for t in targets] == ["leaf1"]
    assert skipped == ["leaf2", "leaf3", "leaf4", "leaf5", "leaf6"]
    assert targets[0].cabled == ("Ethernet1", "Ethernet2", "Ethernet3", "Ethernet5", "Ethernet6")
    assert targets[0].routes == {p: frozenset(h) for p, h in compiled_table(out).items()}
    assert targets[0].neighbours["Ethernet1"] == ("leaf2", "Ethernet1")
    assert targets[0].neighbours["Ethernet5"] == ("h1a", "")


def test_result_table_never_cuts_names_or_states(monkeypatch: pytest.MonkeyPatch) -> None:
    narrow = Console(width=60, record=True)
    monkeypatch.setattr(deploy_report, "console", narrow)
    name = "spine-row12-rack07-unit42-left"
    report = DeployReport(
        [
            SwitchResult(
                name,
                "frr",
                "198.18.200.2:2222",
                "rolled back",
                detail="rib: 1 compiled routes missing " * 3,
            )
        ]
    )
    deploy_report.print_report(report)
    text = narrow.export_text()
    assert name in text and "rolled back" in text and "198.18.200.2:2222" in text


def test_frr_running_config_normalisation() -> None:
    running = (
        "Building configuration...\n\nCurrent configuration:\n!\nfrr version 8.4.4\n"
        "frr defaults traditional\nhostname leaf1\nno ipv6 forwarding\nhostname vm\n"
        "service integrated-vtysh-config\nip route 10.0.0.8/29 172.16.0.1\n"
        "ip route 10.0.0.16/29 172.16.0.10\n!\nend\n"
    )
    compiled = (
        "! comment\nfrr defaults datacenter\nhostname leaf1\n"
        "service integrated-vtysh-config\n!\nip forwarding\n!\n! layer 1\n"
        "ip route 10.0.0.16/29 172.16.0.10\nip route 10.0.0.8/29 172.16.0.1\n!\n"
        "line vty\n!\n"
    )
    assert frr_config_lines(running) == frr_config_lines(compiled)


def test_platform_drivers() -> None:
    from fatpaths_cfg.platforms.linux.deploy import LinuxDriver

    assert driver_class("frr") is FrrDriver
    assert driver_class("linux") is LinuxDriver
    assert driver_class("eos").__module__.startswith("napalm.eos")
    try:
        import napalm_sonic  # noqa: F401
    except ImportError:
        with pytest.raises(UserErrors, match="napalm-sonic"):
            driver_class("sonic")


def test_inventory_mgmt_pool_and_map_reach_generated_fabrics(tmp_path: Path, repo: Path) -> None:
    inventory = tmp_path / "sf.yaml"
    inventory.write_text(
        (repo / "inventories/slimfly-q3.yaml").read_text()
        + "mgmt:\n  pool: 192.0.2.0/27\n  addresses: {sf-0-1-0: 192.0.2.200}\n"
    )
    out = tmp_path / "out"
    api.compile_to_directory(inventory, out)
    mgmt = {s["name"]: s["mgmt"] for s in json.loads((out / "fabric.json").read_text())["switches"]}
    names = list(mgmt)
    assert mgmt[names[0]] == "192.0.2.1" and mgmt[names[17]] == "192.0.2.18"
    assert mgmt["sf-0-1-0"] == "192.0.2.200" and mgmt["sf-0-0-2"] == "192.0.2.3"
    inventory.write_text(
        (repo / "inventories/slimfly-q3.yaml").read_text()
        + "mgmt:\n  pool: 192.0.2.0/29\n  addresses: {nope: 192.0.2.9}\n"
    )
    result = CliRunner().invoke(
        build_app(), ["compile", str(inventory), "-o", str(tmp_path / "bad")]
    )
    assert result.exit_code == 2, result.output
    assert f"{inventory}:7: mgmt.addresses.nope: no switch named 'nope'" in result.output
    assert (
        ":6: mgmt.pool: 192.0.2.0/29 has fewer host addresses than the 18 switches" in result.output
    )


def test_a_missing_driver_is_one_message_before_any_switch_is_contacted(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Six switches of a platform without a driver: the hint (how to install, from a clone
    and from an index) is printed once, and nothing is dialled."""
    import fatpaths_cfg.deploy.push as push

    inventory = tmp_path / "hand6.yaml"
    inventory.write_text((repo / "inventories/hand-6.yaml").read_text())
    out = tmp_path / "out"
    api.compile_to_directory(inventory, out)
    out = output_for(
        out, tmp_path / "with-mgmt", {f"leaf{i}": f"198.51.100.{i}" for i in range(1, 7)}
    )

    def no_napalm(platform: str) -> type:
        raise UserErrors.single(
            "deploy", "", "NAPALM cannot be imported (test)", push.DEPLOY_EXTRA_HINT
        )

    dialled: list[str] = []
    monkeypatch.setattr(push, "driver_class", no_napalm)
    monkeypatch.setattr(push, "on_device", lambda target, *_: dialled.append(target.name))
    monkeypatch.setenv("FATPATHS_TEST_SECRET", "unused")
    result = CliRunner().invoke(
        build_app(), ["deploy", str(out), "--password-env", "FATPATHS_TEST_SECRET"]
    )
    assert result.exit_code == 2, result.output
    assert result.stderr.count("NAPALM cannot be imported") == 1
    assert "pip install -e '.[deploy]'" in result.stderr
    assert "pip install 'fatpaths-cfg[deploy]'" in result.stderr
    assert dialled == []


def test_each_address_says_where_it_came_from(tmp_path: Path) -> None:
    from fatpaths_cfg.errors import ErrorCollector

    key = tmp_path / "key"
    key.write_text("not used")
    key.chmod(0o600)
    devices = tmp_path / "devices.yaml"
    devices.write_text(
        f"defaults: {{key_file: {key}}}\npool: 192.0.2.0/29\n"
        "devices:\n  leaf1: {host: 198.51.100.7}\n"
    )
    book = load_device_book(devices, Access())
    errors = ErrorCollector()
    own = book.access("leaf1", 0, "203.0.113.1", errors)
    pooled = book.access("leaf2", 1, "203.0.113.2", errors)
    assert not errors.errors
    assert own is not None and own.host == "198.51.100.7"
    assert own.origin == f"{devices}:4 devices.leaf1.host"
    assert pooled is not None and pooled.host == "192.0.2.2"
    assert pooled.origin == f"{devices}:2 pool 192.0.2.0/29, address 2"
    fabric = load_device_book(None, Access(key_file=str(key))).access(
        "leaf3", 2, "203.0.113.3", errors
    )
    assert fabric is not None and fabric.origin == "the compiled fabric's mgmt address"
    # A key others can read is refused once, at the line that names it, as ssh refuses it.
    key.chmod(0o644)
    book = load_device_book(devices, Access())
    for index, name in enumerate(("leaf2", "leaf3")):
        assert book.access(name, index + 1, None, errors) is None
    assert [str(error) for error in errors.errors] == [
        f"{devices}:1: defaults.key_file: key file {key}: permissions 0644 let others read it; "
        f"ssh refuses such a key (chmod 600 {key})"
    ]
