"""`fatpaths deploy` against a real device: a network namespace with its own sshd and FRR.

The namespace holds veth ports named like the compiled ports, zebra + staticd with their own
pid and socket paths, and an OpenSSH server reachable only over a veth pair on an address this
test assigns. The driver's frr_dir and state_dir point into the test's temporary directory, so
the machine's /etc/frr is never touched. Nothing talks to the inventories' mgmt addresses: every
test rewrites fabric.json to the namespace's address first.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.cli import build_app
from fatpaths_cfg.deploy import commands as deploy_commands
from fatpaths_cfg.deploy.frr_driver import FrrDriver
from fatpaths_cfg.deploy.push import driver_class, plan_targets
from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.lab.frr import DAEMONS, frr_available, start_daemon, stop_daemon
from fatpaths_cfg.lab.netns import netns_pids
from fatpaths_cfg.lab.state import DaemonRecord

SSHD = Path("/usr/sbin/sshd")
SSH_PORT = 2222
INITIAL_CONF = b"hostname leaf1\n!\n"
PORTS = [f"Ethernet{i}" for i in range(1, 7)]


def run(*argv: str, check: bool = True) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"{' '.join(argv)}: {done.stderr or done.stdout}")
    return done.stdout


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rich wraps at 80 columns under CliRunner; messages are asserted unbroken."""
    monkeypatch.setattr(deploy_commands.console, "width", 250)


@dataclass
class Device:
    netns: str
    address: str
    root: Path
    key: Path
    known_hosts: Path

    @property
    def frr_dir(self) -> Path:
        return self.root / "frr"

    @property
    def state_dir(self) -> Path:
        return self.root / "state"

    def static_prefixes(self) -> set[str]:
        """Read straight from FRR in the namespace, not through the code under test."""
        text = run("ip", "netns", "exec", self.netns, "vtysh", "--vty_socket",
                   str(self.frr_dir), "-c", "show ip route static json")
        return {p for p, entries in json.loads(text).items() if any(e["installed"]
                                                                    for e in entries)}

    def cli_args(self) -> list[str]:
        return ["--username", "root", "--key-file", str(self.key), "--known-hosts",
                str(self.known_hosts), "--port", str(SSH_PORT), "--frr-dir", str(self.frr_dir),
                "--state-dir", str(self.state_dir), "--vty-socket", str(self.frr_dir)]

    def driver(self) -> FrrDriver:
        return FrrDriver(self.address, "root", None, 10, {
            "port": SSH_PORT, "key_file": str(self.key), "known_hosts": str(self.known_hosts),
            "frr_dir": str(self.frr_dir), "state_dir": str(self.state_dir),
            "vty_socket": str(self.frr_dir)})


def free_subnet() -> int:
    """A /30 of 198.18.0.0/15 (benchmarking range) that no route on this machine uses."""
    used = run("ip", "-4", "route", "show", "table", "all")
    for _ in range(100):
        third = secrets.randbelow(250) + 1
        if f"198.18.{third}." not in used:
            return third
    raise AssertionError("no free 198.18.x.0/30")


def sshd_config(folder: Path, address: str) -> Path:
    run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(folder / "host_key"))
    run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(folder / "client_key"))
    (folder / "authorized_keys").write_text((folder / "client_key.pub").read_text())
    host_pub = (folder / "host_key.pub").read_text().split()
    (folder / "known_hosts").write_text(f"[{address}]:{SSH_PORT} {host_pub[0]} {host_pub[1]}\n")
    config = folder / "sshd_config"
    config.write_text(
        f"Port {SSH_PORT}\nListenAddress {address}\nHostKey {folder / 'host_key'}\n"
        f"PidFile {folder / 'sshd.pid'}\nAuthorizedKeysFile {folder / 'authorized_keys'}\n"
        # Root may log in with the one test key only; no passwords, no other users.
        "PermitRootLogin prohibit-password\nAllowUsers root\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nUsePAM no\nX11Forwarding no\n"
        "AllowTcpForwarding no\nPermitTunnel no\n"
        # The key files sit under /tmp, which StrictModes refuses (world-writable parent).
        "StrictModes no\n"
    )
    return config


def wait_for_port(address: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((address, SSH_PORT), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"sshd did not listen on {address}:{SSH_PORT}")


@pytest.fixture
def device(tmp_path: Path) -> Iterator[Device]:
    assert os.geteuid() == 0, "deploy tests need root (deselect with -m 'not lab')"
    assert SSHD.is_file(), "needs Debian's openssh-server"
    assert frr_available(), "needs Debian's frr"
    token = secrets.token_hex(3)
    netns, host_side, device_side = f"fpdep-{token}", f"fpd{token}h", f"fpd{token}d"
    third = free_subnet()
    address = f"198.18.{third}.2"
    # FRR drops to the frr user, which cannot enter pytest's private (0700) directories.
    root = Path(tempfile.mkdtemp(prefix="fatpaths-deploy-"))
    root.chmod(0o755)
    ssh_dir = tmp_path / "ssh"
    ssh_dir.mkdir()
    run("ip", "netns", "add", netns)
    sshd: subprocess.Popen[bytes] | None = None
    records: list[DaemonRecord] = []
    try:
        run("ip", "-n", netns, "link", "set", "lo", "up")
        run("ip", "link", "add", host_side, "type", "veth", "peer", "name", device_side,
            "netns", netns)
        run("ip", "addr", "add", f"198.18.{third}.1/30", "dev", host_side)
        run("ip", "link", "set", host_side, "up")
        run("ip", "-n", netns, "addr", "add", f"{address}/30", "dev", device_side)
        run("ip", "-n", netns, "link", "set", device_side, "up")
        for i, port in enumerate(PORTS, 1):
            # The far end of each cable is a peer veth left in the namespace, up, so the
            # compiled next hops resolve and zebra installs the routes.
            run("ip", "-n", netns, "link", "add", port, "type", "veth", "peer", "name", f"far{i}")
            run("ip", "-n", netns, "link", "set", f"far{i}", "up")
        frr_dir = root / "frr"
        frr_dir.mkdir()
        (frr_dir / "frr.conf").write_bytes(INITIAL_CONF)
        for path in (root, frr_dir, frr_dir / "frr.conf"):
            shutil.chown(path, "frr", "frr")
        records = [DaemonRecord(netns, d, str(frr_dir / f"{d}.pid")) for d in DAEMONS]
        for record in records:
            start_daemon(record)
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation dir
        config = sshd_config(ssh_dir, address)
        sshd = subprocess.Popen(["ip", "netns", "exec", netns, str(SSHD), "-D", "-e", "-f",
                                 str(config)], stderr=(ssh_dir / "sshd.log").open("wb"))
        wait_for_port(address)
        yield Device(netns, address, root, ssh_dir / "client_key", ssh_dir / "known_hosts")
    finally:
        if sshd is not None:
            sshd.terminate()
            sshd.wait(timeout=10)
        for record in records:
            stop_daemon(record)
        for pid in netns_pids(netns):  # sessions sshd forked, if any outlived it
            os.kill(pid, 9)
        run("ip", "netns", "del", netns, check=False)
        run("ip", "link", "del", host_side, check=False)
        shutil.rmtree(root)
    assert netns not in run("ip", "netns", "list")
    assert sshd.poll() is not None


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
    fabric_file.write_text(json.dumps(data))
    return target


def deploy(out: Path, device: Device, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(build_app(), ["deploy", str(out), *device.cli_args(), *extra])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def compiled_routes(out: Path) -> set[str]:
    text = (out / "configs/frr/leaf1/frr.conf").read_text()
    return {line.split()[2] for line in text.splitlines() if line.startswith("ip route ")}


@pytest.mark.lab
def test_dry_run_shows_the_diff_and_changes_nothing(
    device: Device, compiled: dict[int, Path], tmp_path: Path
) -> None:
    out = output_for(compiled[7], tmp_path / "out", {"leaf1": device.address})
    code, output = deploy(out, device, "--dry-run")
    assert code == 0, output
    assert "+ip route 10.0.0.8/29 172.16.0.1" in output
    assert "-hostname leaf1" not in output and "+frr defaults datacenter" in output
    assert (device.frr_dir / "frr.conf").read_bytes() == INITIAL_CONF
    assert not (device.state_dir / "interfaces.sh").exists()
    assert not (device.state_dir / "candidate").exists()
    assert device.static_prefixes() == set()
    addresses = run("ip", "-n", device.netns, "-4", "addr", "show", "dev", "Ethernet1")
    assert "172.16.0.0/31" not in addresses


@pytest.mark.lab
def test_commit_installs_compiled_bytes_and_a_second_deploy_is_empty(
    device: Device, compiled: dict[int, Path], tmp_path: Path
) -> None:
    out = output_for(compiled[7], tmp_path / "out", {"leaf1": device.address})
    code, output = deploy(out, device, "--limit", "leaf1")
    assert code == 0, output
    assert "committed" in output and "15/15" in output
    for source, installed in (("frr.conf", device.frr_dir / "frr.conf"),
                              ("interfaces.sh", device.state_dir / "interfaces.sh")):
        assert installed.read_bytes() == (out / "configs/frr/leaf1" / source).read_bytes()
    assert device.static_prefixes() == compiled_routes(out)
    assert len(compiled_routes(out)) == 15
    addresses = run("ip", "-n", device.netns, "-4", "addr", "show", "dev", "Ethernet1")
    assert "172.16.0.0/31" in addresses
    # The previous files are kept for rollback.
    assert (device.state_dir / "rollback" / "frr.conf").read_bytes() == INITIAL_CONF

    mtime = (device.frr_dir / "frr.conf").stat().st_mtime_ns
    code, output = deploy(out, device)
    assert code == 0, output
    assert "unchanged" in output and "no changes" in output and "+ip route" not in output
    assert (device.frr_dir / "frr.conf").stat().st_mtime_ns == mtime

    # A different layer set replaces the routes (lines gone from frr.conf leave FRR too).
    other = output_for(compiled[8], tmp_path / "other", {"leaf1": device.address})
    code, output = deploy(other, device)
    assert code == 0, output
    assert device.static_prefixes() == compiled_routes(other)
    assert (device.frr_dir / "frr.conf").read_bytes() == (
        other / "configs/frr/leaf1/frr.conf").read_bytes()


@pytest.mark.lab
def test_config_vtysh_rejects_is_refused_and_nothing_changes(
    device: Device, compiled: dict[int, Path], tmp_path: Path
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
    assert device.static_prefixes() == compiled_routes(out)


@pytest.mark.lab
def test_failed_verification_rolls_back_to_the_previous_files(
    device: Device, compiled: dict[int, Path], tmp_path: Path
) -> None:
    out = output_for(compiled[7], tmp_path / "out", {"leaf1": device.address})
    assert deploy(out, device)[0] == 0
    good_conf = (device.frr_dir / "frr.conf").read_bytes()
    good_script = (device.state_dir / "interfaces.sh").read_bytes()
    # Valid syntax, but the next hop is on no cable: zebra never installs the route.
    broken = output_for(compiled[8], tmp_path / "broken", {"leaf1": device.address})
    with (broken / "configs/frr/leaf1/frr.conf").open("a") as conf:
        conf.write("ip route 10.250.0.0/24 172.31.255.1\n")
    code, output = deploy(broken, device, "--verify-timeout", "3")
    assert code == 1, output
    assert "rolled back" in output and "verify: 1 compiled routes not installed" in output
    assert (device.frr_dir / "frr.conf").read_bytes() == good_conf
    assert (device.state_dir / "interfaces.sh").read_bytes() == good_script
    assert device.static_prefixes() == compiled_routes(out)


@pytest.mark.lab
def test_failing_commit_restores_the_previous_files(
    device: Device, compiled: dict[int, Path], tmp_path: Path
) -> None:
    out = output_for(compiled[7], tmp_path / "out", {"leaf1": device.address})
    assert deploy(out, device)[0] == 0
    good_conf = (device.frr_dir / "frr.conf").read_bytes()
    broken = output_for(compiled[8], tmp_path / "broken", {"leaf1": device.address})
    with (broken / "configs/frr/leaf1/interfaces.sh").open("a") as script:
        script.write("ip link set dev Ethernet9 up\n")  # a port this box does not have
    code, output = deploy(broken, device)
    assert code == 1, output
    assert "rolled back" in output and "previous files restored" in output
    assert (device.frr_dir / "frr.conf").read_bytes() == good_conf
    assert (device.state_dir / "interfaces.sh").read_bytes() == (
        out / "configs/frr/leaf1/interfaces.sh").read_bytes()
    assert device.static_prefixes() == compiled_routes(out)


@pytest.mark.lab
def test_cabling_check_stops_before_any_change(
    device: Device, compiled: dict[int, Path], tmp_path: Path
) -> None:
    run("ip", "-n", device.netns, "link", "set", "Ethernet3", "name", "spare3")
    out = output_for(compiled[7], tmp_path / "out", {"leaf1": device.address})
    code, output = deploy(out, device)
    assert code == 1, output
    assert "cabling: no port Ethernet3" in output
    assert (device.frr_dir / "frr.conf").read_bytes() == INITIAL_CONF


@pytest.mark.lab
def test_driver_facts_interfaces_and_discard(device: Device, compiled: dict[int, Path]) -> None:
    driver = device.driver()
    driver.open()
    try:
        facts = driver.get_facts()
        assert facts["vendor"] == "FRRouting" and facts["os_version"].startswith("FRRouting")
        assert set(PORTS) <= set(facts["interface_list"]) and facts["uptime"] > 0
        interfaces = driver.get_interfaces()
        assert interfaces["Ethernet1"]["is_enabled"] is False  # not up until interfaces.sh
        driver.load_replace_candidate(config="hostname leaf1\nip route 10.9.0.0/16 Null0\n")
        assert "+ip route 10.9.0.0/16 Null0" in driver.compare_config()
        driver.discard_config()
        assert driver.compare_config() == ""
        assert not (device.state_dir / "candidate").exists()
    finally:
        driver.close()
    assert (device.frr_dir / "frr.conf").read_bytes() == INITIAL_CONF


@pytest.mark.lab
def test_unreachable_device_fails_that_switch(
    device: Device, compiled: dict[int, Path], tmp_path: Path
) -> None:
    out = output_for(compiled[7], tmp_path / "out", {"leaf1": device.address})
    result = CliRunner().invoke(build_app(), ["deploy", str(out), *device.cli_args(),
                                              "--port", "2223"])
    assert result.exit_code == 1, result.output
    assert "connect:" in result.output and "failed" in result.output


def test_user_errors_exit_2(compiled: dict[int, Path], tmp_path: Path) -> None:
    # 192.0.2.0/24 documentation addresses: these runs must stop before any connection.
    out = output_for(compiled[7], tmp_path / "out", {"leaf1": "192.0.2.250"})
    key = tmp_path / "key"
    key.write_text("not used")
    app = build_app()
    cases = {
        "no management address": ["--limit", "leaf2", "--key-file", str(key)],
        "unknown switch": ["--limit", "leaf9", "--key-file", str(key)],
        "no credentials given": ["--limit", "leaf1"],
        "environment variable is not set": ["--password-env", "FATPATHS_TEST_UNSET_PASSWORD"],
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


def test_switches_without_mgmt_are_skipped_and_targets_are_planned(
    compiled: dict[int, Path], tmp_path: Path
) -> None:
    out = output_for(compiled[7], tmp_path / "out", {"leaf1": "192.0.2.250"})
    targets, skipped = plan_targets(out, None)
    assert [t.name for t in targets] == ["leaf1"]
    assert skipped == ["leaf2", "leaf3", "leaf4", "leaf5", "leaf6"]
    assert targets[0].ports == ("Ethernet1", "Ethernet2", "Ethernet3", "Ethernet5", "Ethernet6")
    assert targets[0].routes == frozenset(compiled_routes(out))


def test_platform_drivers() -> None:
    assert driver_class("frr") is FrrDriver
    assert driver_class("eos").__module__.startswith("napalm.eos")
    try:
        import napalm_sonic  # noqa: F401
    except ImportError:
        with pytest.raises(UserErrors, match="napalm-sonic"):
            driver_class("sonic")
    with pytest.raises(UserErrors, match="linux switches cannot be deployed"):
        driver_class("linux")
