"""Real devices for the deploy tests: network namespaces with their own sshd, FRR and lldpd.

Each switch is a namespace holding veth ports named like the compiled ports, zebra + staticd
with their own pid and socket paths, optionally lldpd with its own control socket, and an
OpenSSH server reachable only over a veth pair on a 198.18.0.0/15 (benchmarking range) /30
this module assigns. The drivers' frr_dir and state_dir point into a temporary directory, so
the machine's /etc/frr is never touched, and nothing talks to the inventories' mgmt addresses.
Switches may be cabled to each other (a veth pair between namespaces) or have dangling ports
whose far end stays in the namespace, up, so that the compiled next hops resolve.
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
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from fatpaths_cfg.lab.frr import DAEMONS, frr_available, start_daemon, stop_daemon
from fatpaths_cfg.lab.netns import netns_pids
from fatpaths_cfg.lab.state import DaemonRecord

SSHD = Path("/usr/sbin/sshd")
LLDPD = Path("/usr/sbin/lldpd")
SSH_PORT = 2222


def run(*argv: str, check: bool = True) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"{' '.join(argv)}: {done.stderr or done.stdout}")
    return done.stdout


def free_subnet() -> int:
    """A /30 of 198.18.0.0/15 that no route on this machine uses."""
    used = run("ip", "-4", "route", "show", "table", "all")
    for _ in range(200):
        third = secrets.randbelow(250) + 1
        if f"198.18.{third}." not in used:
            return third
    raise AssertionError("no free 198.18.x.0/30")


def wait_for_port(address: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((address, SSH_PORT), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"sshd did not listen on {address}:{SSH_PORT}")


@dataclass
class Device:
    name: str
    netns: str
    host_side: str
    address: str
    root: Path
    key: Path
    known_hosts: Path
    frr: bool
    lldp: bool
    records: list[DaemonRecord] = field(default_factory=list)
    sshd: subprocess.Popen[bytes] | None = None

    @property
    def frr_dir(self) -> Path:
        return self.root / "frr"

    @property
    def state_dir(self) -> Path:
        return self.root / "state"

    @property
    def lldp_socket(self) -> Path:
        return self.root / "lldpd.socket"

    def sh(self, *argv: str, check: bool = True) -> str:
        return run("ip", "netns", "exec", self.netns, *argv, check=check)

    def vtysh(self, *commands: str) -> str:
        args = [a for c in commands for a in ("-c", c)]
        return self.sh("vtysh", "--vty_socket", str(self.frr_dir), *args)

    def running_config(self) -> list[str]:
        """`show running-config` without its header, read straight from FRR."""
        return [
            line
            for line in self.vtysh("show running-config").splitlines()
            if not line.startswith(("Building", "Current", "frr version"))
        ]

    def rib(self) -> dict[str, set[str]]:
        """Installed static routes and their installed next hops, read straight from zebra."""
        table = json.loads(self.vtysh("show ip route static json"))
        return {
            p: {h["ip"] for h in e["nexthops"] if h.get("fib")}
            for p, entries in table.items()
            for e in entries
            if e.get("installed")
        }

    def fib(self) -> dict[str, set[str]]:
        """Kernel routes via a next hop, read straight from the namespace."""
        routes = json.loads(run("ip", "-n", self.netns, "-4", "-j", "route", "show"))
        table: dict[str, set[str]] = {}
        for route in routes:
            hops = route.get("nexthops", [route])
            gateways = {h["gateway"] for h in hops if "gateway" in h}
            if gateways:
                table[route["dst"]] = gateways
        return table

    def addresses(self, port: str) -> str:
        return run("ip", "-n", self.netns, "addr", "show", "dev", port)

    def cli_args(self) -> list[str]:
        args = [
            "--username",
            "root",
            "--key-file",
            str(self.key),
            "--known-hosts",
            str(self.known_hosts),
            "--port",
            str(SSH_PORT),
            "--state-dir",
            str(self.state_dir),
        ]
        if self.frr:
            args += ["--frr-dir", str(self.frr_dir), "--vty-socket", str(self.frr_dir)]
        if self.lldp:
            args += ["--lldp-socket", str(self.lldp_socket)]
        return args

    def device_entry(self) -> dict[str, object]:
        entry: dict[str, object] = {
            "host": self.address,
            "port": SSH_PORT,
            "state_dir": str(self.state_dir),
        }
        if self.frr:
            entry.update(frr_dir=str(self.frr_dir), vty_socket=str(self.frr_dir))
        if self.lldp:
            entry["lldp_socket"] = str(self.lldp_socket)
        return entry


class NamespaceLab:
    """Switch namespaces, created and removed by the tests' fixtures."""

    def __init__(self, workdir: Path) -> None:
        assert os.geteuid() == 0, "deploy tests need root (deselect with -m 'not lab')"
        assert SSHD.is_file(), "needs Debian's openssh-server"
        self.token = secrets.token_hex(2)
        # FRR drops to the frr user, which cannot enter pytest's private (0700) directories.
        self.root = Path(tempfile.mkdtemp(prefix="fatpaths-deploy-"))
        self.root.chmod(0o755)
        self.ssh_dir = workdir / "ssh"
        self.ssh_dir.mkdir()
        run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.ssh_dir / "host_key"))
        run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.ssh_dir / "client_key"))
        (self.ssh_dir / "authorized_keys").write_text((self.ssh_dir / "client_key.pub").read_text())
        self.known_hosts = self.ssh_dir / "known_hosts"
        self.known_hosts.write_text("")
        self.devices: dict[str, Device] = {}

    def add_switch(
        self, name: str, dangling: list[str], frr: bool = True, lldp: bool = False
    ) -> Device:
        third = free_subnet()
        index = len(self.devices)
        netns = f"fpdep-{self.token}-{index}"
        host_side = f"fpd{self.token}h{index}"
        address = f"198.18.{third}.2"
        root = self.root / name
        root.mkdir()
        device = Device(
            name,
            netns,
            host_side,
            address,
            root,
            self.ssh_dir / "client_key",
            self.known_hosts,
            frr,
            lldp,
        )
        self.devices[name] = device
        run("ip", "netns", "add", netns)
        run("ip", "-n", netns, "link", "set", "lo", "up")
        run("ip", "link", "add", host_side, "type", "veth", "peer", "name", "mgmt0", "netns", netns)
        run("ip", "addr", "add", f"198.18.{third}.1/30", "dev", host_side)
        run("ip", "link", "set", host_side, "up")
        run("ip", "-n", netns, "addr", "add", f"{address}/30", "dev", "mgmt0")
        run("ip", "-n", netns, "link", "set", "mgmt0", "up")
        for i, port in enumerate(dangling, 1):
            run("ip", "-n", netns, "link", "add", port, "type", "veth", "peer", "name", f"far{i}")
            run("ip", "-n", netns, "link", "set", f"far{i}", "up")
        if frr:
            self._start_frr(device, name)
        if lldp:
            self._start_lldpd(device, name)
        self._start_sshd(device)
        return device

    def _start_frr(self, device: Device, name: str) -> None:
        assert frr_available(), "needs Debian's frr"
        device.frr_dir.mkdir()
        (device.frr_dir / "frr.conf").write_text(f"hostname {name}\n!\n")
        for path in (device.root, device.frr_dir, device.frr_dir / "frr.conf"):
            shutil.chown(path, "frr", "frr")
        device.records = [
            DaemonRecord(device.netns, d, str(device.frr_dir / f"{d}.pid")) for d in DAEMONS
        ]
        for record in device.records:
            start_daemon(record)

    def _start_lldpd(self, device: Device, name: str) -> None:
        assert LLDPD.is_file(), "needs Debian's lldpd"
        # Every namespace shares the machine's hostname: each switch names itself, sends its
        # port names, and sends every second so that a re-cabled port is seen quickly; a
        # neighbour is kept for 6 s, so a busy machine's late frame does not drop it. Read at
        # start (-O), so no frame ever leaves with the machine's name.
        config = device.root / "lldpd.conf"
        config.write_text(
            f"configure system hostname {name}\n"
            "configure lldp portidsubtype ifname\n"
            "configure lldp tx-interval 1\nconfigure lldp tx-hold 6\n"
        )
        device.sh(
            str(LLDPD),
            "-u",
            str(device.lldp_socket),
            "-p",
            str(device.root / "lldpd.pid"),
            "-I",
            "Ethernet*",
            "-O",
            str(config),
        )
        deadline = time.monotonic() + 10
        while not device.lldp_socket.exists() and time.monotonic() < deadline:
            time.sleep(0.05)

    def _start_sshd(self, device: Device) -> None:
        host_pub = (self.ssh_dir / "host_key.pub").read_text().split()
        with self.known_hosts.open("a") as known:
            known.write(f"[{device.address}]:{SSH_PORT} {host_pub[0]} {host_pub[1]}\n")
        config = device.root / "sshd_config"
        config.write_text(
            f"Port {SSH_PORT}\nListenAddress {device.address}\n"
            f"HostKey {self.ssh_dir / 'host_key'}\nPidFile {device.root / 'sshd.pid'}\n"
            f"AuthorizedKeysFile {self.ssh_dir / 'authorized_keys'}\n"
            # Root may log in with the one test key only; no passwords, no other users.
            "PermitRootLogin prohibit-password\nAllowUsers root\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nUsePAM no\nX11Forwarding no\n"
            "AllowTcpForwarding no\nPermitTunnel no\n"
            # The key files sit under /tmp, which StrictModes refuses (world-writable parent).
            "StrictModes no\n"
        )
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation dir
        device.sshd = subprocess.Popen(
            ["ip", "netns", "exec", device.netns, str(SSHD), "-D", "-e", "-f", str(config)],
            stderr=(device.root / "sshd.log").open("wb"),
        )
        wait_for_port(device.address)

    def cable(self, a: str, port_a: str, b: str, port_b: str) -> None:
        run(
            "ip",
            "link",
            "add",
            port_a,
            "netns",
            self.devices[a].netns,
            "type",
            "veth",
            "peer",
            "name",
            port_b,
            "netns",
            self.devices[b].netns,
        )
        run("ip", "-n", self.devices[a].netns, "link", "set", port_a, "up")
        run("ip", "-n", self.devices[b].netns, "link", "set", port_b, "up")
        self.lldp_rescan()

    def uncable(self, a: str, port_a: str) -> None:
        run("ip", "-n", self.devices[a].netns, "link", "del", port_a)
        self.lldp_rescan()

    def lldp_rescan(self) -> None:
        """lldpd does not always notice a port appear or vanish in its namespace by itself."""
        for device in self.devices.values():
            if device.lldp:
                device.sh("lldpcli", "-u", str(device.lldp_socket), "update")

    def devices_file(self, path: Path, names: list[str] | None = None) -> Path:
        chosen = names or sorted(self.devices)
        data = {
            "defaults": {"username": "root", "key_file": str(self.ssh_dir / "client_key")},
            "devices": {n: self.devices[n].device_entry() for n in chosen},
        }
        path.write_text(yaml.safe_dump(data))
        return path

    def close(self) -> None:
        for device in self.devices.values():
            if device.sshd is not None:
                device.sshd.terminate()
                device.sshd.wait(timeout=10)
            for record in device.records:
                stop_daemon(record)
            # lldpd, sessions sshd forked and revert timers, if any outlived them.
            for pid in netns_pids(device.netns):
                os.kill(pid, 9)
            run("ip", "netns", "del", device.netns, check=False)
            run("ip", "link", "del", device.host_side, check=False)
        listed = run("ip", "netns", "list")
        shutil.rmtree(self.root)
        for device in self.devices.values():
            assert device.netns not in listed


def build_fabric(lab: NamespaceLab, fabric_json: Path, lldp: bool = True) -> None:
    """One namespace per switch of a compiled fabric, cabled as compiled; host ports dangle."""
    data = json.loads(fabric_json.read_text())
    for switch in data["switches"]:
        hosts = sorted(h["port"] for h in data["hosts"] if h["switch"] == switch["name"])
        lab.add_switch(switch["name"], hosts, lldp=lldp)
    for link in data["links"]:
        lab.cable(link["a"]["switch"], link["a"]["port"], link["b"]["switch"], link["b"]["port"])


def compiled_frr_table(out: Path, name: str) -> dict[str, set[str]]:
    table: dict[str, set[str]] = {}
    for line in (out / f"configs/frr/{name}/frr.conf").read_text().splitlines():
        if line.startswith("ip route "):
            table.setdefault(line.split()[2], set()).add(line.split()[3])
    return table
