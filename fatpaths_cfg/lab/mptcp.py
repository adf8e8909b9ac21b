"""`lab mptcp`: one TCP connection as MPTCP with a subflow per layer, surviving a link failure.

The destination address picks the layer, so the server announces its further layer addresses
(`signal` endpoints) and the client opens one subflow to each: data to address l travels layer
l. The demo then fails a link that only one layer's subflow uses and checks the transfer goes
on over the others. It changes the two hosts' MPTCP endpoints and limits for the transfer and
puts back what they were (their host plans' settings), and repairs the link afterwards. The
raw `ss` views of the subflows go to OUT/lab/mptcp-ss.txt; the command prints a summary.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.lab.lifecycle import LinkEnds, fail, link_ends, load_up, repair
from fatpaths_cfg.lab.netns import in_netns, run
from fatpaths_cfg.lab.plan import HostNode, LabPlan
from fatpaths_cfg.lab.probe import PathModel

PORT = 5201
SS_FILE = "mptcp-ss.txt"
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
    # Layer -> bytes acked on the subflow to that layer's server address (ss -ti).
    acked_before: dict[int, int] = field(default_factory=dict)
    acked_at_failure: dict[int, int] = field(default_factory=dict)
    acked_after: dict[int, int] = field(default_factory=dict)
    bytes_at_failure: int = 0
    bytes_at_end: int = 0
    ss_output: str = ""
    ss_file: Path | None = None
    restored_hosts: list[str] = field(default_factory=list)

    @property
    def layers_used(self) -> list[int]:
        return sorted(layer for layer, acked in self.acked_before.items() if acked > 0)

    def growth_after_failure(self, layer: int) -> int:
        return self.acked_after.get(layer, 0) - self.acked_at_failure.get(layer, 0)

    @property
    def ok(self) -> bool:
        # Goes on after the failure: at least a quarter of what flowed before it.
        return len(self.layers_used) >= 2 and (
            self.bytes_at_end - self.bytes_at_failure > self.bytes_at_failure // 4 > 0
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


def _subflows(plan: LabPlan, client: HostNode, server: HostNode) -> tuple[dict[int, int], str]:
    out = run(in_netns(client.netns, ["ss", "-tniH", "state", "established"]))
    layer_of = {address: layer for layer, address in server.addresses.items()}
    acked: dict[int, int] = {}
    for _, dst, port, value in _SUBFLOW.findall(out):
        if int(port) == PORT and dst in layer_of:
            acked[layer_of[dst]] = acked.get(layer_of[dst], 0) + int(value)
    mptcp = run(in_netns(client.netns, ["ss", "-MniH"]), check=False)
    return acked, f"{out}\n{mptcp}"


def run_demo(out: Path, seconds: float = 6.0) -> MptcpDemo:
    plan, _ = load_up(out)
    client, server, link, layer = pick_demo(plan)
    n = len(plan.layer_ids)
    limits = f"ip mptcp limits set subflow {n} add_addr_accepted {n}"
    server_setup = ["ip mptcp endpoint flush", limits]
    server_setup += [
        f"ip mptcp endpoint add {server.addresses[k]} dev eth0 signal" for k in plan.layer_ids[1:]
    ]
    # Without its own subflow endpoints the client spends its subflows on the announced
    # addresses only, one per layer, instead of on extra paths to the first layer's address.
    client_setup = ["ip mptcp endpoint flush", limits]
    saved = {host.name: (host.netns, read_settings(host.netns)) for host in (client, server)}
    try:
        run(in_netns(server.netns, ["sh", "-ec", "; ".join(server_setup)]))
        run(in_netns(client.netns, ["sh", "-ec", "; ".join(client_setup)]))
        demo = _transfer(out, plan, client, server, link, layer, seconds)
    finally:
        for netns, settings in saved.values():
            restore_settings(netns, settings)
    demo.restored_hosts = list(saved)
    demo.ss_file = plan.state_file.parent / SS_FILE
    demo.ss_file.write_text(demo.ss_output + "\n", encoding="utf-8")
    return demo


def _transfer(
    out: Path,
    plan: LabPlan,
    client: HostNode,
    server: HostNode,
    link: int,
    layer: int,
    seconds: float,
) -> MptcpDemo:
    """Send for `seconds` over MPTCP, failing `link` a third of the way in; repairs it."""
    first = plan.layer_ids[0]
    peer = [sys.executable, "-m", "fatpaths_cfg.lab.mptcp_peer"]
    receiver = subprocess.Popen(
        in_netns(server.netns, [*peer, "server", "0.0.0.0", str(PORT)]),
        stdout=subprocess.PIPE,
        text=True,
    )
    demo = MptcpDemo(client.name, server.name, link, layer, link_ends(plan, link))
    sender = None
    try:
        assert receiver.stdout is not None
        receiver.stdout.readline()  # "listening"
        sender = subprocess.Popen(
            in_netns(
                client.netns, [*peer, "client", server.addresses[first], str(PORT), str(seconds)]
            )
        )
        time.sleep(seconds / 3)
        demo.acked_before, demo.ss_output = _subflows(plan, client, server)
        fail(out, str(link))
        failed_at = time.monotonic()
        # ACKs for segments that crossed the link just before it went down may still be on
        # their way back (the reverse path can avoid the link); let them land before taking
        # the baseline, or they count as data the failed layer carried after the failure.
        time.sleep(IN_FLIGHT_SETTLE_SECONDS)
        demo.acked_at_failure, _ = _subflows(plan, client, server)
        time.sleep(seconds / 3)
        demo.acked_after, after = _subflows(plan, client, server)
        demo.ss_output += "\n--- after the failure ---\n" + after
        sender.wait(timeout=seconds * 3)
        lines = receiver.stdout.read().split()
        receiver.wait(timeout=10)
        samples = [(float(a), int(b)) for a, b in zip(lines[::2], lines[1::2], strict=True)]
        demo.bytes_at_failure = max((b for when, b in samples if when <= failed_at), default=0)
        demo.bytes_at_end = samples[-1][1] if samples else 0
    finally:
        for process in (sender, receiver):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
        repair(out, str(link))
    return demo


def print_demo(console: Console, demo: MptcpDemo) -> None:
    """The demo's summary; the raw `ss` output is in `demo.ss_file`."""
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
        "ok: the connection used several layers and survived"
        if demo.ok
        else "[bold red]FAILED[/]: fewer than two layers used or the transfer stalled"
    )
