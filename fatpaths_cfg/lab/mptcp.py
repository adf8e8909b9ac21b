"""`lab mptcp`: one TCP connection as MPTCP with a subflow per layer, surviving a link failure.

The destination address picks the layer, so the server announces its further layer addresses
(`signal` endpoints) and the client opens one subflow to each: data to address l travels layer
l. The demo then fails a link that only one layer's subflow uses and checks the transfer goes
on over the others. It changes the two hosts' MPTCP endpoints and limits for the transfer and
puts back what they were (their host plans' settings), and repairs the link afterwards. The
raw `ss` views of the subflows go to OUT/lab/mptcp-ss.txt; the command prints a summary.

Parallel dataplanes: the subflows spread over every plane and layer, and the demo fails a whole
plane (every link of it) instead of one link; the transfer must go on over the other planes,
and the failed plane's subflows must carry nothing more.
"""

from __future__ import annotations

import re
import select
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.lab.lifecycle import LinkEnds, fail, fail_plane, link_ends, load_up, repair
from fatpaths_cfg.lab.netns import LabWaitError, in_netns, run
from fatpaths_cfg.lab.plan import HostNode, LabPlan
from fatpaths_cfg.lab.probe import PathModel
from fatpaths_cfg.support.output import write_owned_file

PORT = 5201
# The in-kernel path manager's cap on both limits.
MPTCP_MAX_LIMIT = 8
_MPTCP_SUBFLOWS = re.compile(r"\bsubflows:(\d+)")
SS_FILE = "mptcp-ss.txt"
# Its first line: what lets the next demo replace it, and nothing else of that name.
SS_SIGNATURE = "# ss -tiM output of the subflows, written by fatpaths lab mptcp"
# `ss -tniH state established`: "RECVQ SENDQ LOCAL:PORT PEER:PORT", then an indented info line.
_SUBFLOW = re.compile(r"^\d+\s+\d+\s+(\S+):\d+\s+(\S+):(\d+)\s*\n[^\n]*?bytes_acked:(\d+)", re.M)


@dataclass(frozen=True)
class MptcpSettings:
    """A host's MPTCP path-manager settings, as arguments that set them again."""

    limits: list[str]  # for `ip mptcp limits set`
    endpoints: list[list[str]]  # for `ip mptcp endpoint add`, one list per endpoint


def parse_settings(limits_show: str, endpoints_show: str) -> MptcpSettings:
    """From `ip mptcp limits show` ("add_addr_accepted 2 subflows 2") and `ip mptcp endpoint
    show` ("10.0.0.1 id 1 signal dev eth0" per line, which `endpoint add` takes back as is)."""
    words = limits_show.split()
    limits: list[str] = []
    for key, value in zip(words[::2], words[1::2], strict=True):
        limits += ["subflow" if key == "subflows" else key, value]
    endpoints = [line.split() for line in endpoints_show.splitlines() if line.strip()]
    return MptcpSettings(limits, endpoints)


def read_settings(netns: str) -> MptcpSettings:
    return parse_settings(
        run(in_netns(netns, ["ip", "mptcp", "limits", "show"])),
        run(in_netns(netns, ["ip", "mptcp", "endpoint", "show"])),
    )


def restore_settings(netns: str, settings: MptcpSettings) -> None:
    run(in_netns(netns, ["ip", "mptcp", "endpoint", "flush"]))
    if settings.limits:
        run(in_netns(netns, ["ip", "mptcp", "limits", "set", *settings.limits]))
    for endpoint in settings.endpoints:
        run(in_netns(netns, ["ip", "mptcp", "endpoint", "add", *endpoint]))


@dataclass
class MptcpDemo:
    client: str
    server: str
    failed_link: int
    failed_layer: int
    failed_ends: LinkEnds | None = None
    # Layer -> bytes acked on the subflow to that layer's server address (ss -ti); with
    # parallel planes the key is plane * layers + layer (see `path_of`).
    acked_before: dict[int, int] = field(default_factory=dict)
    acked_at_failure: dict[int, int] = field(default_factory=dict)
    acked_after: dict[int, int] = field(default_factory=dict)
    bytes_at_failure: int = 0
    bytes_at_end: int = 0
    ss_output: str = ""
    ss_file: Path | None = None
    restored_hosts: list[str] = field(default_factory=list)
    # Parallel dataplanes: the plane failed instead of one link, and each layer's plane.
    failed_plane: int | None = None
    path_of: dict[int, tuple[int, int]] = field(default_factory=dict)  # key -> (plane, layer)
    # Extra subflows of the MPTCP connection, as `ss -M` counts them, before and after.
    subflows_before: int | None = None
    subflows_after: int | None = None

    @property
    def layers_used(self) -> list[int]:
        return sorted(layer for layer, acked in self.acked_before.items() if acked > 0)

    @property
    def planes_used(self) -> list[int]:
        return sorted({self.plane_of(key) for key in self.layers_used})

    def plane_of(self, key: int) -> int:
        return self.path_of.get(key, (0, key))[0]

    def growth_after_failure(self, layer: int) -> int:
        return self.acked_after.get(layer, 0) - self.acked_at_failure.get(layer, 0)

    def plane_growth(self, failed: bool) -> int:
        """Bytes acked after the failure on the failed plane's subflows (or the others')."""
        return sum(
            self.growth_after_failure(layer)
            for layer in self.acked_after
            if (self.plane_of(layer) == self.failed_plane) == failed
        )

    @property
    def ok(self) -> bool:
        # Goes on after the failure: at least a quarter of what flowed before it.
        going_on = len(self.layers_used) >= 2 and (
            self.bytes_at_end - self.bytes_at_failure > self.bytes_at_failure // 4 > 0
        )
        if self.failed_plane is None:
            return going_on
        # The failed plane carries nothing more; the others carry the transfer.
        return (
            going_on
            and len(self.planes_used) >= 2
            and self.plane_growth(failed=True) == 0
            and self.plane_growth(failed=False) > 0
        )


# Far above a namespace lab's RTT, even on a loaded machine.
IN_FLIGHT_SETTLE_SECONDS = 0.5


def pick_demo(plan: LabPlan) -> tuple[HostNode, HostNode, int, int]:
    """A host pair and a link on exactly one layer's data path between them (not layer 1's
    return path, which carries every subflow's ACKs to the client's first address)."""
    model = PathModel(plan)
    layers = plan.layer_ids
    for client in plan.hosts:
        for server in plan.hosts:
            s, t = client.switch, server.switch
            if s == t:
                continue
            forward = {layer: model.links_used(layer, s, t) for layer in layers}
            acks = model.links_used(layers[0], t, s)
            for layer in layers[1:]:
                others = set().union(*(forward[k] for k in layers if k != layer), acks)
                only = sorted(forward[layer] - others)
                if only:
                    return client, server, only[0], layer
    raise UserErrors.single(
        str(plan.out),
        "",
        "no link carries exactly one layer between any host pair",
        "the MPTCP demo needs at least two layers with different paths",
    )


def pick_plane_demo(plan: LabPlan, plane: int | None) -> tuple[HostNode, HostNode, int]:
    """Two hosts on different switches in every plane (so no plane delivers switch-locally),
    and the plane to fail: the given one, else the last."""
    chosen = plan.planes - 1 if plane is None else plane
    for client in plan.hosts:
        for server in plan.hosts:
            if all(client.switch_in(p) != server.switch_in(p) for p in range(plan.planes)):
                return client, server, chosen
    raise UserErrors.single(
        str(plan.out),
        "",
        "no two hosts sit on different switches in every plane",
        "the plane demo needs hosts whose traffic crosses each plane",
    )


def mptcp_subflow_count(ss_mptcp: str) -> int | None:
    """The extra subflows of the first MPTCP connection in `ss -MniH` output."""
    found = _MPTCP_SUBFLOWS.search(ss_mptcp)
    return None if found is None else int(found.group(1))


def path_key(plan: LabPlan, plane: int, layer: int) -> int:
    """One int per (plane, layer): the layer id itself on plane 0."""
    return plane * len(plan.layer_ids) + layer


def _subflows(plan: LabPlan, client: HostNode, server: HostNode) -> tuple[dict[int, int], str]:
    out = run(in_netns(client.netns, ["ss", "-tniH", "state", "established"]))
    layer_of = {
        address: path_key(plan, plane, layer)
        for (plane, layer), address in server.plane_addresses.items()
    }
    acked: dict[int, int] = {}
    for _, dst, port, value in _SUBFLOW.findall(out):
        if int(port) == PORT and dst in layer_of:
            acked[layer_of[dst]] = acked.get(layer_of[dst], 0) + int(value)
    mptcp = run(in_netns(client.netns, ["ss", "-MniH"]), check=False)
    return acked, f"{out}\n{mptcp}"


def run_demo(out: Path, seconds: float = 6.0, plane: int | None = None) -> MptcpDemo:
    plan, state = load_up(out)
    if state.failed_links:
        # The demo fails a link of its own and measures what the others carry: on a lab
        # already missing links its connection may have no path at all.
        down = ", ".join(str(link_ends(plan, i)) for i in state.failed_links)
        raise UserErrors.single(
            str(plan.state_file),
            "",
            f"links are down ({down}): the MPTCP demo needs every link up",
            f"run `fatpaths lab repair {out}` first",
        )
    if plan.planes > 1 or plane is not None:
        client, server, plane = pick_plane_demo(plan, plane)
        link, layer = -1, -1
    else:
        client, server, link, layer = pick_demo(plan)
    n = min(len(plan.layer_ids) * plan.planes, MPTCP_MAX_LIMIT)
    limits = f"ip mptcp limits set subflow {n} add_addr_accepted {n}"
    server_setup = ["ip mptcp endpoint flush", limits]
    # Every (plane, layer) address but plane 0's layer 1, which the connection opens on.
    server_setup += [
        f"ip mptcp endpoint add {address} dev {server.device_in(plane)} signal"
        for (plane, layer), address in sorted(server.plane_addresses.items())
        if (plane, layer) != (0, plan.layer_ids[0])
    ]
    # Without its own subflow endpoints the client spends its subflows on the announced
    # addresses only, one per layer, instead of on extra paths to the first layer's address.
    client_setup = ["ip mptcp endpoint flush", limits]
    saved = {host.name: (host.netns, read_settings(host.netns)) for host in (client, server)}
    try:
        run(in_netns(server.netns, ["sh", "-ec", "; ".join(server_setup)]))
        run(in_netns(client.netns, ["sh", "-ec", "; ".join(client_setup)]))
        demo = _transfer(out, plan, client, server, link, layer, seconds, plane)
    finally:
        for netns, settings in saved.values():
            restore_settings(netns, settings)
    demo.restored_hosts = list(saved)
    demo.ss_file = plan.state_file.parent / SS_FILE
    write_owned_file(demo.ss_file, f"{SS_SIGNATURE}\n{demo.ss_output}\n", SS_SIGNATURE)
    return demo


def _transfer(
    out: Path,
    plan: LabPlan,
    client: HostNode,
    server: HostNode,
    link: int,
    layer: int,
    seconds: float,
    plane: int | None = None,
) -> MptcpDemo:
    """Send for `seconds` over MPTCP, failing `link` (or every link of `plane`) a third of the
    way in; repairs what it failed."""
    first = plan.layer_ids[0]
    peer = [sys.executable, "-m", "fatpaths_cfg.lab.mptcp_peer"]
    wait = str(PEER_WAIT_SECONDS)
    receiver = subprocess.Popen(
        in_netns(server.netns, [*peer, "server", "0.0.0.0", str(PORT), wait]),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    demo = MptcpDemo(
        client.name,
        server.name,
        link,
        layer,
        None if plane is not None else link_ends(plan, link),
        failed_plane=plane,
        path_of={path_key(plan, p, k): (p, k) for p in range(plan.planes) for k in plan.layer_ids},
    )
    sender = None
    failed = False
    try:
        _await_listening(receiver, server)
        sender = subprocess.Popen(
            in_netns(
                client.netns,
                [*peer, "client", server.addresses[first], str(PORT), wait, str(seconds)],
            ),
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(seconds / 3)
        _check_alive(sender, f"the MPTCP sender in {client.netns}")
        demo.acked_before, demo.ss_output = _subflows(plan, client, server)
        demo.subflows_before = mptcp_subflow_count(demo.ss_output)
        failed = True
        if plane is not None:
            fail_plane(out, plane)
        else:
            fail(out, str(link))
        failed_at = time.monotonic()
        # ACKs for segments that crossed the link just before it went down may still be on
        # their way back (the reverse path can avoid the link); let them land before taking
        # the baseline, or they count as data the failed layer carried after the failure.
        time.sleep(IN_FLIGHT_SETTLE_SECONDS)
        demo.acked_at_failure, _ = _subflows(plan, client, server)
        time.sleep(seconds / 3)
        demo.acked_after, after = _subflows(plan, client, server)
        demo.subflows_after = mptcp_subflow_count(after)
        demo.ss_output += "\n--- after the failure ---\n" + after
        _finish(sender, seconds + PEER_WAIT_SECONDS, f"the MPTCP sender in {client.netns}")
        output = _finish(receiver, PEER_WAIT_SECONDS + 5, f"the MPTCP receiver in {server.netns}")
        lines = output.split()
        samples = [(float(a), int(b)) for a, b in zip(lines[::2], lines[1::2], strict=True)]
        demo.bytes_at_failure = max((b for when, b in samples if when <= failed_at), default=0)
        demo.bytes_at_end = samples[-1][1] if samples else 0
    finally:
        for process in (sender, receiver):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
        if failed:
            if plane is not None:
                repair(out, None)
            else:
                repair(out, str(link))
    return demo


# How long either end of the transfer waits for the other (to connect, or to send more)
# before it gives up and says so.
PEER_WAIT_SECONDS = 10.0
_PEER_HINT = (
    "check the two hosts' routes with `fatpaths lab test OUT`; "
    "`fatpaths lab down OUT` and `lab up` start afresh"
)


def _await_listening(receiver: subprocess.Popen[str], server: HostNode) -> None:
    """The receiver's "listening" line, or a timeout naming it (it may not even start)."""
    assert receiver.stdout is not None
    ready, _, _ = select.select([receiver.stdout], [], [], PEER_WAIT_SECONDS)
    line = receiver.stdout.readline() if ready else ""
    if line.strip() != "listening":
        _check_alive(receiver, f"the MPTCP receiver in {server.netns}")
        raise LabWaitError(
            f"the MPTCP receiver in {server.netns} did not listen in {PEER_WAIT_SECONDS:g} s",
            _PEER_HINT,
        )


def _check_alive(process: subprocess.Popen[str], what: str) -> None:
    """A peer that already gave up: its one-line reason, as an error of the demo."""
    if process.poll() is None or process.returncode == 0:
        return
    reason = process.stderr.read().strip().splitlines() if process.stderr else []
    raise LabWaitError(f"{what} stopped: {reason[-1] if reason else 'no reason given'}", _PEER_HINT)


def _finish(process: subprocess.Popen[str], timeout: float, what: str) -> str:
    """Wait for a peer to end (at most `timeout` seconds); its standard output."""
    try:
        output, errors = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise LabWaitError(f"{what} did not finish in {timeout:g} s", _PEER_HINT) from None
    if process.returncode != 0:
        reason = (errors or "").strip().splitlines()
        said = reason[-1] if reason else f"exit status {process.returncode}"
        raise LabWaitError(f"{what} stopped: {said}", _PEER_HINT)
    return output or ""


def print_plane_demo(console: Console, demo: MptcpDemo) -> None:
    console.print(
        f"MPTCP {demo.client} -> {demo.server}; failed plane {demo.failed_plane} (all its "
        f"links) mid-transfer",
        soft_wrap=True,
    )
    for key, acked in sorted(demo.acked_before.items()):
        plane, layer = demo.path_of.get(key, (0, key))
        console.print(
            f"  subflow on plane {plane} layer {layer}: {acked} bytes acked before the "
            f"failure, {demo.growth_after_failure(key)} more after it",
            soft_wrap=True,
        )
    console.print(
        f"ss -M: {demo.subflows_before} extra subflows before the failure, "
        f"{demo.subflows_after} after it; after it, the failed plane acked "
        f"{demo.plane_growth(failed=True)} bytes, the other planes "
        f"{demo.plane_growth(failed=False)}",
        soft_wrap=True,
    )


def print_demo(console: Console, demo: MptcpDemo) -> None:
    """The demo's summary; the raw `ss` output is in `demo.ss_file`."""
    if demo.failed_plane is not None:
        print_plane_demo(console, demo)
        _print_tail(console, demo, f"plane {demo.failed_plane}", "planes")
        return
    failed = demo.failed_ends or f"link {demo.failed_link}"
    console.print(
        f"MPTCP {demo.client} -> {demo.server}; failed {failed} "
        f"(used only by layer {demo.failed_layer}) mid-transfer",
        soft_wrap=True,
    )
    for layer, acked in sorted(demo.acked_before.items()):
        console.print(
            f"  subflow on layer {layer}: {acked} bytes acked before the failure, "
            f"{demo.growth_after_failure(layer)} more after it",
            soft_wrap=True,
        )
    _print_tail(console, demo, str(failed), "layers")


def _print_tail(console: Console, demo: MptcpDemo, failed: str, parts: str) -> None:
    console.print(
        f"received {demo.bytes_at_failure} bytes before the failure, "
        f"{demo.bytes_at_end - demo.bytes_at_failure} after it",
        soft_wrap=True,
    )
    if demo.ss_file is not None:
        console.print(f"ss output of the subflows: {demo.ss_file}", soft_wrap=True, markup=False)
    if demo.restored_hosts:
        console.print(
            f"restored the MPTCP endpoints and limits of {', '.join(demo.restored_hosts)}; "
            f"repaired {failed}",
            soft_wrap=True,
        )
    console.print(
        f"ok: the connection used several {parts} and survived"
        if demo.ok
        else f"[bold red]FAILED[/]: fewer than two {parts} used or the transfer stalled"
        + (" or the failed plane still carried data" if parts == "planes" else "")
    )
