"""`lab up`, `down`, `fail` and `repair`: create and remove the lab, break and mend links."""

from __future__ import annotations

import ipaddress
import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.lab import clab_engine, frr, mgmt
from fatpaths_cfg.lab.names import RUNTIME_ROOT
from fatpaths_cfg.lab.netns import (
    LabCommandError,
    existing_netns,
    in_netns,
    ip_batch,
    netns_pids,
    parallel,
    run,
)
from fatpaths_cfg.lab.plan import LabPlan, SwitchNode, VethPair, build_plan
from fatpaths_cfg.lab.state import LabState, load_state

Progress = Callable[[str], None]

# Lab harness settings, not fabric config: keep IPv6 link addresses across `lab fail`, and let
# every router answer each traceroute probe (the default ICMP rate limit drops concurrent ones).
_SWITCH_PRELUDE = (
    "ip link set lo up; "
    "sysctl -qw net.ipv6.conf.all.keep_addr_on_down=1 2>/dev/null; "
    "sysctl -qw net.ipv4.icmp_ratelimit=0 net.ipv4.icmp_msgs_burst=10000 "
    "net.ipv4.icmp_msgs_per_sec=100000; "
)
# Hosts too: the per-peer limit (icmp_ratelimit) lets a host answer only a few traceroute probes
# from one source address per second, and `lab test` traces one host pair several times in a
# few seconds when every switch has one host (each plane's and the low-latency traces).
_HOST_PRELUDE = (
    "ip link set lo up; "
    "sysctl -qw net.ipv4.icmp_ratelimit=0 net.ipv4.icmp_msgs_burst=10000 "
    "net.ipv4.icmp_msgs_per_sec=100000; "
)


def _quiet(_: str) -> None:
    return None


_NEIGH = Path("/proc/sys/net/{family}/neigh/default/gc_thresh{n}")


def _raise_neighbour_limits(plan: LabPlan, state: LabState) -> None:
    """The ARP/ND tables are shared by all namespaces (default hard limit 1024 entries): a
    q=5 Slim Fly needs ~1,750, and an overflowing table silently drops first packets. Only
    ever raised, and the previous values are recorded so `down` puts them back."""
    addresses = len(plan.layer_ids) * plan.planes  # per host: one per (plane, layer)
    needed = 2 * (2 * len(plan.links) + len(plan.hosts) * (addresses + 1)) + 1024
    for family in ("ipv4", "ipv6"):
        hard = Path(str(_NEIGH).format(family=family, n=3))
        soft = Path(str(_NEIGH).format(family=family, n=2))
        if not hard.exists() or int(hard.read_text()) >= needed:
            continue
        state.sysctls[str(hard)] = int(hard.read_text())
        state.sysctls[str(soft)] = int(soft.read_text())
        state.save(plan.state_file)
        hard.write_text(str(needed))
        soft.write_text(str(needed * 3 // 4))


def _restore_sysctls(state: LabState) -> None:
    # Soft limit first: the kernel keeps gc_thresh2 <= gc_thresh3 only by convention.
    for path, value in sorted(state.sysctls.items()):
        Path(path).write_text(str(value))


@dataclass(frozen=True)
class UpSummary:
    switches: int
    hosts: int
    veths: int
    daemons: int
    seconds: float
    timings: dict[str, float]
    engine: str = "netns"
    devices: Path | None = None  # OUT/lab/devices.yaml, with --mgmt


ENGINES = ("netns", "clab")


@dataclass
class _StepTimings:
    """Seconds per stage of `lab up`, saved in the state file as each stage ends, so a lab
    that stops half-way shows how far it got."""

    plan: LabPlan
    state: LabState
    timings: dict[str, float] = field(default_factory=dict)

    def step(self, name: str, begun: float) -> None:
        self.timings[name] = round(time.monotonic() - begun, 2)
        self.state.timings = dict(self.timings)
        self.state.save(self.plan.state_file)


def _require_root() -> None:
    if os.geteuid() != 0:
        raise UserErrors.single(
            "fatpaths lab", "", "the lab needs root (network namespaces)", "run it with sudo"
        )


def _runtime_dir(plan: LabPlan) -> Path:
    return RUNTIME_ROOT / plan.lab


def up(
    out: Path, progress: Progress = _quiet, engine: str = "netns", mgmt_pool: str | None = None
) -> UpSummary:
    """`mgmt_pool`: also a management network from this pool, an sshd per switch and
    OUT/lab/devices.yaml (`lab up --mgmt`)."""
    if engine not in ENGINES:
        raise UserErrors.single(
            "--engine", "", f"unknown lab engine {engine!r}", f"use one of {', '.join(ENGINES)}"
        )
    plan = build_plan(out)
    _require_root()
    if load_state(plan.state_file) is not None:
        raise UserErrors.single(
            str(plan.state_file),
            "",
            "a lab of this output is already up (or half up)",
            f"run `fatpaths lab down {out}` first",
        )
    namespaces = [n.netns for n in plan.switches] + [h.netns for h in plan.hosts]
    clash = sorted((set(namespaces) | {mgmt.mgmt_netns(plan.lab)}) & existing_netns())
    if clash:
        # Not in our state file, so not ours to reuse or remove.
        raise UserErrors.single(
            "ip netns",
            "",
            f"namespace {clash[0]} exists but no lab state records it",
            f"remove it by hand (`ip netns del {clash[0]}`) if it is a leftover",
        )
    ports = _check_mgmt(plan, engine, mgmt_pool) if mgmt_pool is not None else None
    if engine == "clab":
        return _up_clab(out, plan, namespaces, progress)
    if any(n.frr_conf is not None for n in plan.switches) and not frr.frr_available():
        raise UserErrors.single(
            str(frr.FRR_DIR), "", "FRR (zebra, staticd) is not installed", "apt-get install frr"
        )
    state = LabState(plan.lab, plan.name, str(out.resolve()), str(_runtime_dir(plan)))
    timings = _StepTimings(plan, state)
    started = time.monotonic()

    _raise_neighbour_limits(plan, state)
    begun = time.monotonic()
    progress(f"creating {len(namespaces)} namespaces")
    state.namespaces = namespaces
    state.save(plan.state_file)
    ip_batch(f"netns add {ns}" for ns in namespaces)
    pairs = plan.links + plan.uplinks
    state.veths = [[p.a_ns, p.a_if, p.b_ns, p.b_if] for p in pairs]
    state.save(plan.state_file)
    progress(f"creating {len(pairs)} veth pairs")
    ip_batch(
        f"link add name {p.a_if} netns {p.a_ns} type veth peer name {p.b_if} netns {p.b_ns}"
        for p in pairs
    )
    timings.step("namespaces_and_veths", begun)

    begun = time.monotonic()
    progress(f"applying {len(plan.switches)} switch configs")
    parallel(_apply_switch, plan.switches)
    progress(f"applying {len(plan.hosts)} host plans")
    parallel(
        lambda h: run(in_netns(h.netns, ["sh", "-c", _HOST_PRELUDE + 'exec sh "$0"', str(h.plan)])),
        plan.hosts,
    )
    timings.step("configs", begun)

    begun = time.monotonic()
    frr_nodes = [n for n in plan.switches if n.frr_conf is not None]
    runtime = _runtime_dir(plan)
    records = []
    for node in frr_nodes:
        frr.prepare_runtime(runtime, node)
        records.extend(frr.daemon_records(runtime, node))
    state.daemons = records
    state.save(plan.state_file)
    progress(f"starting {len(records)} FRR daemons")
    # zebra before staticd in each namespace, namespaces side by side.
    for daemon in frr.DAEMONS:
        parallel(frr.start_daemon, [r for r in records if r.daemon == daemon])
        state.save(plan.state_file)
    timings.step("frr", begun)

    devices = None
    if ports is not None:
        begun = time.monotonic()
        progress(f"management network and {len(ports)} sshd")
        devices = _up_mgmt(plan, state, ports)
        timings.step("mgmt", begun)

    _finish_up(plan, state, timings.timings, started, progress)
    return UpSummary(
        len(plan.switches),
        len(plan.hosts),
        len(pairs),
        len(records),
        timings.timings["total"],
        timings.timings,
        devices=devices,
    )


def _check_mgmt(plan: LabPlan, engine: str, pool: str) -> list[mgmt.MgmtPort]:
    """Everything `--mgmt` needs, checked before anything is created."""
    if engine != "netns":
        raise UserErrors.single(
            "--mgmt",
            "",
            "the management network is made by the netns engine only",
            "containerlab has its own (`mgmt:` in the clab file); drop --engine clab or --mgmt",
        )
    ports = mgmt.mgmt_ports(plan, mgmt.check_pool(plan, pool))
    mgmt.check_port_names(plan)
    mgmt.check_sshd()
    for path in (mgmt.key_dir(plan), mgmt.devices_file(plan)):
        if path.exists():
            # No lab is up (checked before), so not ours to replace or, later, to remove.
            raise UserErrors.single(
                str(path),
                "",
                "exists but no lab state records it",
                "remove it by hand if it is a leftover of an earlier lab",
            )
    return ports


def _up_mgmt(plan: LabPlan, state: LabState, ports: list[mgmt.MgmtPort]) -> Path:
    """The management namespace and veths, keys, a state directory and an sshd per switch,
    and the devices file; each recorded in the state before it is made."""
    runtime = _runtime_dir(plan)
    state.namespaces.append(mgmt.mgmt_netns(plan.lab))
    state.save(plan.state_file)
    mgmt.create_network(plan, ports)
    state.made.append(str(mgmt.key_dir(plan)))
    if not mgmt.SSHD_PRIVSEP_DIR.is_dir():
        state.made.append(str(mgmt.SSHD_PRIVSEP_DIR))
    state.save(plan.state_file)
    mgmt.SSHD_PRIVSEP_DIR.mkdir(mode=0o755, exist_ok=True)
    keys = mgmt.create_keys(plan, ports, runtime)
    parallel(lambda p: mgmt.install_state(p, runtime), ports)
    sshd = [mgmt.sshd_record(p, runtime) for p in ports]
    state.daemons.extend(sshd)
    state.save(plan.state_file)
    parallel(
        lambda pair: mgmt.start_sshd(pair[0], runtime, keys, pair[1]), zip(ports, sshd, strict=True)
    )
    state.save(plan.state_file)
    mgmt.check_reachable(plan, ports)
    state.made.append(str(mgmt.devices_file(plan)))
    state.save(plan.state_file)
    return mgmt.write_devices(plan, ports, runtime, keys)


def _up_clab(out: Path, plan: LabPlan, namespaces: list[str], progress: Progress) -> UpSummary:
    """containerlab deploys the emitted topology (its `exec` runs each node's compiled script);
    the lab then attaches the containers' namespaces and waits for every compiled route."""
    path = clab_engine.check_engine(plan)
    topo_name = str(clab_engine.load_topology(path)["name"])
    state = LabState(plan.lab, plan.name, str(out.resolve()), "", engine="clab")
    state.clab_topology = str(path.resolve())
    timings = _StepTimings(plan, state)
    started = time.monotonic()

    _raise_neighbour_limits(plan, state)
    state.namespaces = namespaces
    state.save(plan.state_file)
    begun = time.monotonic()
    progress(f"containerlab deploy of {len(namespaces)} nodes")
    clab_engine.deploy(path)
    timings.step("deploy", begun)

    begun = time.monotonic()
    progress("attaching container namespaces")
    clab_engine.attach_namespaces(plan, topo_name)
    host_ports: dict[int, list[str]] = {}
    for host in plan.hosts:
        for port in host.ports:
            host_ports.setdefault(port.switch, []).append(port.switch_ifname)

    def prelude(node: SwitchNode) -> None:
        # Proxy ARP answers hosts after `proxy_delay` (up to 0.8 s) unless told not to wait.
        delays = "".join(
            f"sysctl -qw net.ipv4.neigh.{port}.proxy_delay=0; "
            for port in host_ports.get(node.index, [])
        )
        run(in_netns(node.netns, ["sh", "-c", _SWITCH_PRELUDE + delays]))

    parallel(prelude, plan.switches)
    parallel(lambda h: run(in_netns(h.netns, ["sh", "-c", _HOST_PRELUDE])), plan.hosts)
    timings.step("attach", begun)

    _finish_up(plan, state, timings.timings, started, progress)
    frr_nodes = sum(1 for n in plan.switches if n.frr_conf is not None)
    pairs = len(plan.links) + len(plan.uplinks)
    summary = timings.timings
    return UpSummary(
        len(plan.switches), len(plan.hosts), pairs, frr_nodes, summary["total"], summary, "clab"
    )


def _finish_up(
    plan: LabPlan,
    state: LabState,
    timings: dict[str, float],
    started: float,
    progress: Progress,
) -> None:
    """Both engines: the lab is up once every compiled route is installed and forwarding is
    on; only then is that recorded in the state file."""
    begun = time.monotonic()
    frr.wait_for_routes(
        plan.switches, on_wait=lambda n: progress(f"waiting for routes on {n} switches")
    )
    _check_forwarding(plan.switches)
    timings["routes"] = round(time.monotonic() - begun, 2)
    state.phase = "up"
    timings["total"] = round(time.monotonic() - started, 2)
    state.timings = timings
    state.save(plan.state_file)


def _apply_switch(node: SwitchNode) -> None:
    script = str(node.setup_script)
    run(in_netns(node.netns, ["sh", "-c", _SWITCH_PRELUDE + 'exec sh "$0"', script]))


def _check_forwarding(nodes: list[SwitchNode]) -> None:
    def forwarding(node: SwitchNode) -> str:
        return run(in_netns(node.netns, ["sysctl", "-n", "net.ipv4.ip_forward"])).strip()

    off = [
        n.name for n, value in zip(nodes, parallel(forwarding, nodes), strict=True) if value != "1"
    ]
    if off:
        raise LabCommandError(f"IPv4 forwarding is off on {', '.join(off[:5])} after config")


@dataclass(frozen=True)
class DownSummary:
    namespaces: int
    daemons: int
    stray_processes: int
    engine: str = "netns"


def down(out: Path, progress: Progress = _quiet) -> DownSummary | None:
    """Remove what the state file records; None if there is no lab of this output."""
    _require_root()
    state_file = out / "lab" / "state.json"
    state = load_state(state_file)
    if state is None:
        return None
    if state.engine == "clab":
        detached = clab_engine.detach_namespaces(state.namespaces)
        progress("containerlab destroy")
        clab_engine.destroy(Path(state.clab_topology))
        _restore_sysctls(state)
        state_file.unlink()
        return DownSummary(detached, 0, 0, "clab")
    progress(f"stopping {len(state.daemons)} daemons")
    stopped = sum(parallel(frr.stop_daemon, state.daemons))
    ours = [ns for ns in state.namespaces if ns in existing_netns()]
    # A process left inside one of our namespaces (a daemon started just before a crash, a
    # hung ping) is ours by construction; anything outside them is never looked at.
    strays = [pid for ns in ours for pid in netns_pids(ns)]
    for pid in strays:
        frr.terminate(pid)
    progress(f"deleting {len(ours)} namespaces")
    ip_batch(f"netns del {ns}" for ns in ours)
    runtime = Path(state.runtime_dir)
    if runtime.parent == RUNTIME_ROOT and runtime.name == state.lab and runtime.is_dir():
        shutil.rmtree(runtime)
    mgmt.remove_made(state.made)
    _restore_sysctls(state)
    state_file.unlink()
    return DownSummary(len(ours), stopped, len(strays))


def load_up(out: Path) -> tuple[LabPlan, LabState]:
    _require_root()
    plan = build_plan(out)
    state = load_state(plan.state_file)
    if state is None or state.phase != "up":
        raise UserErrors.single(
            str(plan.state_file), "", "no lab of this output is up", f"run `fatpaths lab up {out}`"
        )
    return plan, state


def resolve_link(plan: LabPlan, spec: str) -> int:
    """A link given as its index, as `SWITCH:PORT` (either end) or as `SWITCH-SWITCH`."""
    fabric = plan.compiled.fabric
    if spec.isdigit() and int(spec) < len(fabric.links):
        return int(spec)
    names = [s.name for s in fabric.switches]
    for link in fabric.links:
        a, b = names[link.a], names[link.b]
        if spec in (f"{a}:{link.a_port}", f"{b}:{link.b_port}", f"{a}-{b}", f"{b}-{a}"):
            return link.index
    raise UserErrors.single(
        "LINK",
        "",
        f"no link {spec!r} in fabric {plan.name}",
        "give a link index, SWITCH:PORT of either end, or SWITCH-SWITCH",
    )


@dataclass(frozen=True)
class LinkEnds:
    """A fabric link as people name it: the index `lab fail` takes and both SWITCH:PORT ends."""

    index: int
    a: str
    b: str

    def __str__(self) -> str:
        return f"link {self.index} ({self.a} - {self.b})"


def link_ends(plan: LabPlan, index: int) -> LinkEnds:
    names = [s.name for s in plan.compiled.fabric.switches]
    link = plan.compiled.fabric.links[index]
    return LinkEnds(index, f"{names[link.a]}:{link.a_port}", f"{names[link.b]}:{link.b_port}")


def _set_link(pair: VethPair, updown: str) -> None:
    run(["ip", "-n", pair.a_ns, "link", "set", pair.a_if, updown])
    run(["ip", "-n", pair.b_ns, "link", "set", pair.b_if, updown])


def fail(out: Path, spec: str) -> LinkEnds:
    plan, state = load_up(out)
    index = resolve_link(plan, spec)
    _set_link(plan.link_pair(index), "down")
    if index not in state.failed_links:
        state.failed_links.append(index)
    state.save(plan.state_file)
    return link_ends(plan, index)


def fail_plane(out: Path, plane: int) -> list[LinkEnds]:
    """Set every switch-to-switch link of a plane down: the plane is gone for every host pair
    on different switches, while the other planes are untouched."""
    plan, state = load_up(out)
    if not 0 <= plane < plan.planes:
        raise UserErrors.single(
            "--plane",
            "",
            f"no plane {plane} in fabric {plan.name}",
            f"its planes are 0..{plan.planes - 1}",
        )
    links = plan.plane_links(plane)
    parallel(lambda i: _set_link(plan.link_pair(i), "down"), links)
    state.failed_links += [i for i in links if i not in state.failed_links]
    state.save(plan.state_file)
    return [link_ends(plan, i) for i in links]


def _routes_without(plan: LabPlan, down: list[int]) -> Callable[[SwitchNode], set[str]]:
    """The routes a switch holds while the `down` links stay down: the kernel drops a route
    whose every next hop lies in the subnet of a port that is down (the ports keep their
    addresses: IPv4 always, IPv6 by the lab's keep_addr_on_down)."""
    ports: dict[str, list[str]] = {}
    for index in down:
        pair = plan.link_pair(index)
        ports.setdefault(pair.a_ns, []).append(pair.a_if)
        ports.setdefault(pair.b_ns, []).append(pair.b_if)
    subnets = {
        netns: [net for ifname in names for net in _port_subnets(netns, ifname)]
        for netns, names in ports.items()
    }

    def expected(node: SwitchNode) -> set[str]:
        dead = subnets.get(node.netns, [])

        def alive(hop: str) -> bool:
            address = ipaddress.ip_address(hop)
            return not any(address in net for net in dead if net.version == address.version)

        return {
            prefix
            for prefix in node.routes
            if not node.next_hops.get(prefix) or any(map(alive, node.next_hops[prefix]))
        }

    return expected


def _port_subnets(netns: str, ifname: str) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    shown = json.loads(run(["ip", "-j", "-n", netns, "addr", "show", "dev", ifname]) or "[]")
    return [
        ipaddress.ip_interface(f"{info['local']}/{info['prefixlen']}").network
        for link in shown
        for info in link.get("addr_info", [])
        if info.get("scope") != "link"  # link-local next hops are named with their port
    ]


def repair(out: Path, spec: str | None) -> list[LinkEnds]:
    """Bring one failed link (or all of them) back and wait until its routes are back; the
    links brought back."""
    plan, state = load_up(out)
    targets = list(state.failed_links) if spec is None else [resolve_link(plan, spec)]
    touched: list[SwitchNode] = []
    for index in targets:
        _set_link(plan.link_pair(index), "up")
        link = plan.compiled.fabric.links[index]
        touched += [plan.switches[link.a], plan.switches[link.b]]
    # The kernel dropped routes over the downed ports; zebra re-installs its own, a switch
    # whose script installs the routes (no frr.conf) needs its (idempotent) script again.
    for node in touched:
        if node.frr_conf is None:
            _apply_switch(node)
    still_down = [i for i in state.failed_links if i not in targets]
    frr.wait_for_routes(
        touched,
        timeout=30.0,
        expected=_routes_without(plan, still_down),
        hint=f"`fatpaths lab test {out}` shows which layers still break; "
        f"`fatpaths lab down {out}` and `lab up` start afresh",
    )
    state.failed_links = still_down
    state.save(plan.state_file)
    return [link_ends(plan, index) for index in targets]
