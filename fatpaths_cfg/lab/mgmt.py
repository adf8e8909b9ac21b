"""`lab up --mgmt`: a management network, an sshd per switch and the devices file that lets
`fatpaths deploy` treat the lab's switches as it treats real ones.

The management network is a namespace of its own (`fp-<lab>-mgmt`) with one veth pair to
each switch (this kernel has no bridge devices): `m<index>` there, `mgmt0` in the switch, a
/31 (IPv6: /127) of the pool each. Its addresses exist in the lab's namespaces only, never on
the machine's own network, and the management namespace does not forward, so it is no
shortcut between switches. `fatpaths deploy` dials from inside it (the devices file's
`netns:`).

Each switch runs sshd on its management address only, with a host key of its own; the lab
writes one client key, a known_hosts file of every host key and `OUT/lab/devices.yaml` with
each switch's address and device paths: FRR's directory and vty socket, and a state
directory of its own, so that nothing one switch stages lands in another's (the switches
share one file system with each other and with the deploying machine).
"""

from __future__ import annotations

import ipaddress
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from fatpaths_cfg.compiled import LoadedCompiled
from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.lab import frr
from fatpaths_cfg.lab.names import kernel_ifname, mgmt_netns
from fatpaths_cfg.lab.netns import LabCommandError, in_netns, ip_batch, parallel, run
from fatpaths_cfg.lab.plan import LabPlan, SwitchNode
from fatpaths_cfg.lab.state import DaemonRecord
from fatpaths_cfg.support.output import write_owned_file

DEFAULT_POOL = "198.18.0.0/15"  # RFC 2544 benchmarking range: never a production address
SWITCH_IFNAME = "mgmt0"
SSH_PORT = 22
SSHD = Path("/usr/sbin/sshd")
SSHD_PRIVSEP_DIR = Path("/run/sshd")  # Debian's sshd refuses to start without it
# Where the deploy drivers keep the script a switch runs (frr: interfaces.sh beside frr.conf;
# linux: the whole config), as the lab installs it so that the switch reads as deployed.
INSTALLED_SCRIPT = {True: "interfaces.sh", False: "switch.sh"}

# In the header of the devices file `up --mgmt` writes: what lets a later `up` replace it.
MGMT_DEVICES_SIGNATURE = "# Written by `fatpaths lab up --mgmt`"


@dataclass(frozen=True)
class MgmtPort:
    """One switch's management link: `mgmt_if` (address `near`) in the management namespace,
    `mgmt0` (address `address`, where sshd listens) in the switch."""

    switch: SwitchNode
    mgmt_if: str
    near: str
    address: str
    prefixlen: int


@dataclass(frozen=True)
class SwitchPaths:
    """Where a lab switch keeps things; every switch has its own."""

    sshd_dir: Path
    state_dir: Path
    frr_dir: Path | None  # also its vty socket directory


def check_pool(plan: LabPlan, pool_text: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    """The pool, if it holds a point-to-point subnet per switch and no fabric address."""
    try:
        pool = ipaddress.ip_network(pool_text)
    except ValueError as exc:
        raise UserErrors.single("--mgmt-pool", "", str(exc), "e.g. 198.18.0.0/15") from None
    width = 31 if pool.version == 4 else 127
    needed = len(plan.switches)
    if pool.prefixlen > width or 2 ** (width - pool.prefixlen) < needed:
        raise UserErrors.single(
            "--mgmt-pool",
            "",
            f"{pool} holds too few /{width} subnets for {needed} switches",
            f"give a pool of at least {needed * 2} addresses",
        )
    clash = next((p for p in _fabric_prefixes(plan.compiled) if p.overlaps(pool)), None)
    if clash is not None:
        # A switch would have a connected route into its own fabric's addresses.
        raise UserErrors.single(
            "--mgmt-pool",
            "",
            f"{pool} overlaps the fabric's {clash}",
            "give a pool the fabric does not use (the default is 198.18.0.0/15)",
        )
    return pool


def _fabric_prefixes(
    compiled: LoadedCompiled,
) -> Iterator[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """The pools the address plan was drawn from, and every prefix it gives."""
    plan = compiled.addresses
    if plan is None:
        return
    texts: list[str] = list(plan.pools.values())
    for _family, tables in plan.tables():
        texts += tables.loopbacks
        texts += [subnet for row in tables.subnets for subnet in row]
        texts += [side for sides in tables.links for side in sides]
    for text in texts:
        try:
            yield ipaddress.ip_network(text, strict=False)
        except ValueError:
            continue


def mgmt_ports(
    plan: LabPlan, pool: ipaddress.IPv4Network | ipaddress.IPv6Network
) -> list[MgmtPort]:
    """Switch i gets the i-th point-to-point subnet of the pool, its upper address."""
    base = pool.network_address
    width = pool.max_prefixlen - 1
    return [
        MgmtPort(node, f"m{node.index}", str(base + 2 * i), str(base + 2 * i + 1), width)
        for i, node in enumerate(plan.switches)
    ]


def check_port_names(plan: LabPlan) -> None:
    for switch in plan.compiled.fabric.switches:
        if SWITCH_IFNAME in {kernel_ifname(p) for p in switch.ports}:
            raise UserErrors.single(
                str(plan.out / "fabric.json"),
                f"switches.{switch.name}.ports",
                f"port {SWITCH_IFNAME} is the lab's management port",
                "rename the port in the inventory, or run the lab without --mgmt",
            )


def switch_paths(runtime: Path, node: SwitchNode) -> SwitchPaths:
    frr_dir = frr.switch_runtime_dir(runtime, node) if node.frr_conf is not None else None
    return SwitchPaths(runtime / "sshd" / node.netns, runtime / "state" / node.netns, frr_dir)


def key_dir(plan: LabPlan) -> Path:
    return plan.lab_dir / "mgmt"


def devices_file(plan: LabPlan) -> Path:
    return plan.lab_dir / "devices.yaml"


def check_sshd() -> None:
    if not SSHD.is_file():
        raise UserErrors.single(
            str(SSHD),
            "",
            "sshd is not installed (lab up --mgmt runs one per switch)",
            "apt-get install openssh-server",
        )


def create_network(plan: LabPlan, ports: list[MgmtPort]) -> None:
    """The management namespace, a veth pair per switch and their addresses."""
    netns = mgmt_netns(plan.lab)
    ip_batch([f"netns add {netns}"])
    ip_batch(
        f"link add name {p.mgmt_if} netns {netns} type veth peer name {SWITCH_IFNAME} "
        f"netns {p.switch.netns}"
        for p in ports
    )
    # IPv6 addresses skip duplicate address detection: sshd cannot bind a tentative one, and
    # a /127 of the lab's own pool has no one else on its link.
    nodad = " nodad" if ports and ":" in ports[0].address else ""
    lines = ["link set lo up"]
    for p in ports:
        lines += [
            f"addr add {p.near}/{p.prefixlen} dev {p.mgmt_if}{nodad}",
            f"link set {p.mgmt_if} up",
        ]
    ip_batch(lines, netns)

    # The switch's fabric config knows nothing of this port; it is set up beside it.
    def switch_side(p: MgmtPort) -> None:
        ip_batch(
            [
                f"addr add {p.address}/{p.prefixlen} dev {SWITCH_IFNAME}{nodad}",
                f"link set {SWITCH_IFNAME} up",
            ],
            p.switch.netns,
        )

    parallel(switch_side, ports)


def _keygen(path: Path, comment: str) -> None:
    run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)])


def create_keys(plan: LabPlan, ports: list[MgmtPort], runtime: Path) -> Path:
    """The client key (in OUT/lab/mgmt), a host key per switch, and the known_hosts file."""
    keys = key_dir(plan)
    keys.mkdir(mode=0o700)
    _keygen(keys / "client_key", f"fatpaths-lab-{plan.lab}")
    (keys / "authorized_keys").write_text((keys / "client_key.pub").read_text())

    def host_key(port: MgmtPort) -> str:
        paths = switch_paths(runtime, port.switch)
        paths.sshd_dir.mkdir(parents=True, mode=0o700)
        _keygen(paths.sshd_dir / "host_key", port.switch.name)
        kind, key = (paths.sshd_dir / "host_key.pub").read_text().split()[:2]
        return f"{port.address} {kind} {key}\n"

    (keys / "known_hosts").write_text("".join(parallel(host_key, ports)))
    return keys


def _sshd_config(port: MgmtPort, paths: SwitchPaths, keys: Path) -> str:
    return (
        f"Port {SSH_PORT}\nListenAddress {port.address}\n"
        f"HostKey {paths.sshd_dir / 'host_key'}\nPidFile {paths.sshd_dir / 'sshd.pid'}\n"
        f"AuthorizedKeysFile {keys / 'authorized_keys'}\n"
        # Root may log in with the lab's key only: no passwords, no other users, no tunnels.
        "PermitRootLogin prohibit-password\nAllowUsers root\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nUsePAM no\nX11Forwarding no\n"
        "AllowTcpForwarding no\nAllowAgentForwarding no\nPermitTunnel no\n"
        # The key files sit in the output directory, which may be under a world-writable
        # /tmp: StrictModes would refuse them there.
        "StrictModes no\n"
    )


def sshd_record(port: MgmtPort, runtime: Path) -> DaemonRecord:
    paths = switch_paths(runtime, port.switch)
    return DaemonRecord(port.switch.netns, "sshd", str(paths.sshd_dir / "sshd.pid"))


def start_sshd(port: MgmtPort, runtime: Path, keys: Path, record: DaemonRecord) -> None:
    paths = switch_paths(runtime, port.switch)
    config = paths.sshd_dir / "sshd_config"
    config.write_text(_sshd_config(port, paths, keys))
    log = paths.sshd_dir / "sshd.log"
    # sshd writes its pid file once it listens, after going to the background.
    run(in_netns(port.switch.netns, [str(SSHD), "-f", str(config), "-E", str(log)]))
    frr.await_pidfile(record)


def install_state(port: MgmtPort, runtime: Path) -> None:
    """A state directory per switch holding the script it runs, as a deploy installs it."""
    node = port.switch
    paths = switch_paths(runtime, node)
    paths.state_dir.mkdir(parents=True)
    shutil.copyfile(
        node.setup_script, paths.state_dir / INSTALLED_SCRIPT[node.frr_conf is not None]
    )


def device_entry(port: MgmtPort, runtime: Path) -> dict[str, Any]:
    paths = switch_paths(runtime, port.switch)
    entry: dict[str, Any] = {"host": port.address, "state_dir": str(paths.state_dir)}
    if paths.frr_dir is not None:
        entry.update(frr_dir=str(paths.frr_dir), vty_socket=str(paths.frr_dir))
    return entry


def write_devices(plan: LabPlan, ports: list[MgmtPort], runtime: Path, keys: Path) -> Path:
    data = {
        "defaults": {
            "username": "root",
            "port": SSH_PORT,
            "key_file": str((keys / "client_key").resolve()),
            "known_hosts": str((keys / "known_hosts").resolve()),
            "netns": mgmt_netns(plan.lab),
        },
        "devices": {p.switch.name: device_entry(p, runtime) for p in ports},
    }
    path = devices_file(plan)
    header = (
        f"# The lab's switches as deploy targets: `fatpaths deploy {plan.out} --devices {path}`.\n"
        f"{MGMT_DEVICES_SIGNATURE}, removed by `fatpaths lab down`.\n"
    )
    # Replaces only a devices file an earlier `up --mgmt` wrote (the user may keep their own
    # devices.yaml there); atomic, so a crash leaves the earlier one.
    write_owned_file(path, header + yaml.safe_dump(data, sort_keys=False), MGMT_DEVICES_SIGNATURE)
    return path


def remove_made(paths: list[str]) -> None:
    """What `up --mgmt` made outside the lab's runtime directory, newest first."""
    for text in reversed(paths):
        path = Path(text)
        if path == SSHD_PRIVSEP_DIR:
            # The directory is always empty, so only a running sshd shows it is in use: one
            # started since `up` (the machine's own) keeps it.
            if path.is_dir() and not any(path.iterdir()) and not _sshd_running():
                path.rmdir()
        elif path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()


def _sshd_running() -> bool:
    done = subprocess.run(["pgrep", "-x", "sshd"], capture_output=True, check=False)
    return bool(done.stdout.strip())


def check_reachable(plan: LabPlan, ports: list[MgmtPort]) -> None:
    """Every switch's sshd answers from the management namespace (one SYN each, bounded)."""
    netns = mgmt_netns(plan.lab)

    def probe(port: MgmtPort) -> str:
        done = subprocess.run(
            in_netns(netns, ["ping", "-c", "1", "-W", "2", "-q", port.address]),
            capture_output=True,
            check=False,
        )
        return "" if done.returncode == 0 else port.switch.name

    dead = [name for name in parallel(probe, ports) if name]
    if dead:
        raise LabCommandError(f"management address unreachable on {', '.join(dead[:5])}")
