"""Changing a running fabric, measured: slimfly-q5 (50 switches with FRR and sshd, 200 hosts, 4
layers) in network namespaces, seed 1 -> seed 2 deployed in the plan's rounds (`deploy --from`)
and, in the same run, by today's unordered push (`deploy` of whole switch configs, `--parallel`
at a time), while probes and MPTCP transfers run; then the rounds again with a cable failed
before round 2.

Run as root: `python3 benchmarks/deploy_hitless.py [WORKDIR] [--pairs 50] [--parallel 4]`.

Traffic, all of it between the lab's own host addresses and bounded in count and time:
* probes: `ping -i 0.05` (20 a second) from a fixed sample of host pairs (seeded), one stream
  per (pair, layer), from the source's layer address to the destination's, so that both
  directions travel that layer. A stream stops when its phase ends, and on its own after
  MAX_SECONDS at the latest (its count). A probe with no reply is lost; a "Time to live
  exceeded" is a loop, an unreachable a blackhole that answered; lost with neither, silent.
* MPTCP: 8 long transfers between distinct hosts, each with a subflow per layer (the server
  signals its layer 2.. addresses, as `lab mptcp` does), paced to MPTCP_RATE so that the
  traffic does not starve the deploy on a small machine. Per transfer: bytes received, the
  longest stall, and whether it was reset.

Phases: idle (the probes' noise floor, nothing deployed), rounds (seed 1 -> 2 with
`ordered_deploy`), back to seed 1 (plain deploy, not measured), baseline (plain `deploy` of
seed 2), back to seed 1, and the cable case (rounds again, a cable failed before round 2,
repaired after). The lab always goes down at the end. Figures: one line per result, and
WORKDIR/deploy_hitless.json.
"""

from __future__ import annotations

import argparse
import bisect
import json
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
INVENTORY = REPO / "inventories" / "slimfly-q5.yaml"
INTERVAL_S = 0.05  # 20 probes a second per stream
MAX_SECONDS = 1200  # every probe and transfer ends by itself after this, whatever happens
SETTLE_S = 3.0  # probes run this long before a deploy starts and after it ends
# Replies may still be on their way when a stream is stopped: the last second's probes are
# neither lost nor received.
TAIL_PROBES = int(1.0 / INTERVAL_S) + 1
MPTCP_TRANSFERS = 8
MPTCP_PORT = 5301
MPTCP_RATE = 1 << 20  # bytes a second per transfer
CHUNK = 1 << 14
IPPROTO_MPTCP = 262
_SUMMARY = re.compile(r"(\d+) packets transmitted, (\d+) received")
_REPLY = re.compile(r"bytes from .*icmp_seq=(\d+)")
_STAMPED = re.compile(r"^\[(\d+\.\d+)\].*icmp_seq=(\d+)", re.MULTILINE)
_TTL = re.compile(r"icmp_seq=(\d+) Time to live exceeded")
_UNREACH = re.compile(r"icmp_seq=(\d+) Destination \w+ Unreachable")


# --- the MPTCP peers: this file runs as them inside host namespaces ----------------------


def serve(port: int) -> None:
    """Accept one MPTCP connection, read until it closes; print bytes, longest stall, how it
    ended."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", port))
    listener.listen(1)
    listener.settimeout(MAX_SECONDS)
    print("listening", flush=True)
    connection, _ = listener.accept()
    connection.settimeout(1.0)
    received, last_data, stall, ended = 0, time.monotonic(), 0.0, "eof"
    deadline = time.monotonic() + MAX_SECONDS
    while time.monotonic() < deadline:
        try:
            data = connection.recv(1 << 16)
        except TimeoutError:
            data = None
        except OSError as exc:  # a reset ends the transfer: exactly what is counted
            ended = f"reset ({type(exc).__name__})"
            break
        now = time.monotonic()
        if data == b"":
            break
        # The gap since the last data, measured before this data resets it.
        stall = max(stall, now - last_data)
        if data:
            received += len(data)
            last_data = now
    print(json.dumps({"bytes": received, "stall_s": round(stall, 2), "ended": ended}), flush=True)


def send(address: str, port: int, rate: int) -> None:
    """Send at `rate` bytes a second until SIGTERM (or MAX_SECONDS); print how it ended."""
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    client = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP)
    client.connect((address, port))
    payload, sent, ended = b"\0" * CHUNK, 0, "closed"
    began = time.monotonic()
    while not stop["now"] and time.monotonic() - began < MAX_SECONDS:
        try:
            client.sendall(payload)
        except OSError as exc:
            ended = f"reset ({type(exc).__name__})"
            break
        sent += len(payload)
        ahead = began + sent / rate - time.monotonic()
        if ahead > 0:
            time.sleep(ahead)
    client.close()
    print(json.dumps({"sent": sent, "ended": ended}), flush=True)


# --- the measurement ----------------------------------------------------------------------


@dataclass(frozen=True)
class Stream:
    src_ns: str
    src: str
    dst: str
    layer: int


@dataclass
class StreamResult:
    sent: int = 0
    lost: int = 0
    ttl_exceeded: int = 0  # probes answered by ICMP time exceeded: a loop
    unreachable: int = 0  # probes answered by destination unreachable: a blackhole
    silent: int = 0  # lost with no ICMP error at all
    # When each lost probe was sent (wall clock, from the stamps of its neighbours), so that
    # losses can be put on the deploy step they happened in.
    lost_at: list[float] = field(default_factory=list)


def parse_ping(text: str) -> StreamResult:
    """One stream's ping output: seqs with no reply up to the last second are lost."""
    summary = _SUMMARY.search(text)
    sent = int(summary.group(1)) if summary else 0
    replied = {int(s) for s in _REPLY.findall(text)}
    ttl = {int(s) for s in _TTL.findall(text)}
    unreach = {int(s) for s in _UNREACH.findall(text)}
    counted = range(1, max(0, sent - TAIL_PROBES) + 1)
    lost = [s for s in counted if s not in replied]
    stamps = sorted((int(seq), float(at)) for at, seq in _STAMPED.findall(text))
    return StreamResult(
        lost_at=[_sent_at(seq, stamps) for seq in lost],
        sent=len(counted),
        lost=len(lost),
        ttl_exceeded=sum(1 for s in lost if s in ttl),
        unreachable=sum(1 for s in lost if s in unreach and s not in ttl),
        silent=sum(1 for s in lost if s not in ttl and s not in unreach),
    )


def _sent_at(seq: int, stamps: list[tuple[int, float]]) -> float:
    """A probe's send time, interpolated between the stamped lines of the probes around it
    (ping stamps what it prints, not what it sends; a reply comes well within a second)."""
    if not stamps:
        return 0.0
    seqs = [s for s, _ in stamps]
    i = bisect.bisect_left(seqs, seq)
    if i < len(stamps) and stamps[i][0] == seq:
        return stamps[i][1]
    before, after = stamps[max(0, i - 1)], stamps[min(i, len(stamps) - 1)]
    if after[0] == before[0]:
        return before[1] + (seq - before[0]) * INTERVAL_S
    share = (seq - before[0]) / (after[0] - before[0])
    return before[1] + share * (after[1] - before[1])


@dataclass
class Transfer:
    client_ns: str
    server_ns: str
    address: str
    layers_with_subflow: int = 0
    bytes: int = 0
    stall_s: float = 0.0
    reset: bool = False
    ended: str = ""


@dataclass
class Phase:
    name: str
    deploy_s: float = 0.0
    outcome: str = ""
    probes: StreamResult = field(default_factory=StreamResult)
    streams_losing: int = 0
    streams_looping: int = 0  # streams with at least one ICMP time exceeded
    streams: int = 0
    transfers: list[Transfer] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # (wall clock, the step that ended then): losses are counted per step
    marks: list[tuple[float, str]] = field(default_factory=list)

    @property
    def resets(self) -> int:
        return sum(t.reset for t in self.transfers)


def in_netns(netns: str, argv: list[str]) -> list[str]:
    return ["ip", "netns", "exec", netns, *argv]


class Traffic:
    """Probe streams and MPTCP transfers of one phase, started and stopped together."""

    def __init__(self, plan: Any, streams: list[Stream], pairs: list[tuple[Any, Any]], work: Path):
        self.plan, self.streams, self.pairs, self.work = plan, streams, pairs, work
        self.pings: list[tuple[subprocess.Popen[bytes], Path]] = []
        self.servers: list[subprocess.Popen[str]] = []
        self.clients: list[subprocess.Popen[str]] = []

    def start(self, tag: str) -> None:
        folder = self.work / tag
        folder.mkdir(parents=True, exist_ok=True)
        count = int(MAX_SECONDS / INTERVAL_S)
        for i, s in enumerate(self.streams):
            path = folder / f"ping-{i}.txt"
            # Bounded by the count alone: with a deadline (-w) ping exits at its first ICMP
            # error, and a stream that meets a loop would stop being measured there.
            argv = ["ping", "-n", "-D", "-i", str(INTERVAL_S), "-W", "1", "-c", str(count)]
            argv += ["-I", s.src, s.dst]
            with path.open("wb") as sink:
                self.pings.append(
                    (subprocess.Popen(in_netns(s.src_ns, argv), stdout=sink, stderr=sink), path)
                )
        peer = [sys.executable, str(Path(__file__).resolve())]
        first = self.plan.layer_ids[0]
        for _, server in self.pairs:
            process = subprocess.Popen(
                in_netns(server.netns, [*peer, "--peer", "server", str(MPTCP_PORT)]),
                stdout=subprocess.PIPE,
                text=True,
            )
            assert process.stdout is not None
            process.stdout.readline()  # "listening"
            self.servers.append(process)
        for client, server in self.pairs:
            argv = [*peer, "--peer", "client", server.addresses[first], str(MPTCP_PORT)]
            self.clients.append(
                subprocess.Popen(
                    in_netns(client.netns, [*argv, str(MPTCP_RATE)]),
                    stdout=subprocess.PIPE,
                    text=True,
                )
            )

    def subflow_layers(self) -> list[int]:
        """Per transfer: the layers whose server address has an established subflow."""
        found = []
        for client, server in self.pairs:
            out = subprocess.run(
                in_netns(client.netns, ["ss", "-tnH", "state", "established"]),
                capture_output=True,
                text=True,
                check=False,
            ).stdout
            peers = {line.split()[-1] for line in out.splitlines() if line.strip()}
            found.append(sum(f"{a}:{MPTCP_PORT}" in peers for a in server.addresses.values()))
        return found

    def stop(self, phase: Phase) -> None:
        for process, _ in self.pings:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)  # ping prints its summary
        for process, _ in self.pings:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        total, losing = StreamResult(), 0
        steps: dict[str, int] = {}
        for _, path in self.pings:
            one = parse_ping(path.read_text(errors="replace"))
            for at in one.lost_at:
                step = next((label for end, label in phase.marks if at <= end), "after")
                steps[step] = steps.get(step, 0) + 1
            losing += one.lost > 0
            phase.streams_looping += one.ttl_exceeded > 0
            for key in ("sent", "lost", "ttl_exceeded", "unreachable", "silent"):
                setattr(total, key, getattr(total, key) + getattr(one, key))
        phase.probes, phase.streams_losing, phase.streams = total, losing, len(self.pings)
        if steps:
            order = [label for _, label in phase.marks] + ["after"]
            phase.notes.append(
                "lost by step: "
                + ", ".join(f"{label} {steps[label]}" for label in order if label in steps)
            )
        self.pings = []
        for client_process in self.clients:
            if client_process.poll() is None:
                client_process.send_signal(signal.SIGTERM)
        for (client, server), sender, receiver in zip(
            self.pairs, self.clients, self.servers, strict=True
        ):
            transfer = Transfer(
                client.netns, server.netns, server.addresses[self.plan.layer_ids[0]]
            )
            sent = _last_json(sender, 15)
            got = _last_json(receiver, 15)
            transfer.bytes = int(got.get("bytes", 0))
            transfer.stall_s = float(got.get("stall_s", 0.0))
            transfer.ended = f"client {sent.get('ended', '?')}, server {got.get('ended', '?')}"
            transfer.reset = "reset" in transfer.ended or not got
            phase.transfers.append(transfer)
        self.clients, self.servers = [], []

    def kill(self) -> None:
        """Whatever still runs (after an error): stop it, never leave it behind."""
        running: list[subprocess.Popen[Any]] = [p for p, _ in self.pings]
        for process in running + self.clients + self.servers:
            if process.poll() is None:
                process.kill()
                process.wait()


def _last_json(process: subprocess.Popen[str], timeout: float) -> dict[str, Any]:
    try:
        out, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        out, _ = process.communicate()
    lines = [line for line in (out or "").splitlines() if line.startswith("{")]
    return dict(json.loads(lines[-1])) if lines else {}


def pick_streams(plan: Any, pairs: int, seed: int) -> list[Stream]:
    """`pairs` host pairs on distinct switches (fixed seed), one stream per layer."""
    rng = random.Random(seed)
    chosen: set[tuple[int, int]] = set()
    hosts = plan.hosts
    while len(chosen) < pairs:
        a, b = rng.sample(range(len(hosts)), 2)
        if hosts[a].switch != hosts[b].switch:
            chosen.add((a, b))
    return [
        Stream(hosts[a].netns, hosts[a].addresses[layer], hosts[b].addresses[layer], layer)
        for a, b in sorted(chosen)
        for layer in plan.layer_ids
    ]


def pick_transfers(plan: Any, seed: int) -> list[tuple[Any, Any]]:
    """Eight client/server pairs of distinct hosts on distinct switches."""
    rng = random.Random(seed + 1)
    order = rng.sample(plan.hosts, len(plan.hosts))
    pairs: list[tuple[Any, Any]] = []
    used: set[int] = set()
    for client in order:
        if len(pairs) == MPTCP_TRANSFERS:
            break
        if client.switch in used:
            continue
        server = next(h for h in order if h.switch not in used | {client.switch})
        pairs.append((client, server))
        used |= {client.switch, server.switch}
    return pairs


def setup_mptcp(plan: Any, pairs: list[tuple[Any, Any]]) -> Callable[[], None]:
    """Each server signals its further layer addresses, as `lab mptcp` does; returns the undo."""
    from fatpaths_cfg.lab.mptcp import read_settings, restore_settings

    n = len(plan.layer_ids)
    limits = f"ip mptcp limits set subflow {n} add_addr_accepted {n}"
    saved = {h.netns: read_settings(h.netns) for pair in pairs for h in pair}
    for client, server in pairs:
        server_setup = ["ip mptcp endpoint flush", limits] + [
            f"ip mptcp endpoint add {address} dev {server.device_in(0)} signal"
            for layer, address in sorted(server.addresses.items())
            if layer != plan.layer_ids[0]
        ]
        for netns, lines in (
            (server.netns, server_setup),
            (client.netns, ["ip mptcp endpoint flush", limits]),
        ):
            subprocess.run(in_netns(netns, ["sh", "-ec", "; ".join(lines)]), check=True)

    def undo() -> None:
        for netns, settings in saved.items():
            restore_settings(netns, settings)

    return undo


def busiest_link(plan: Any, streams: list[Stream]) -> int:
    """The cable the sampled streams cross most often (over every layer): failing it hurts."""
    from fatpaths_cfg.lab.probe import PathModel

    model = PathModel(plan)
    by_address = {a: h.switch for h in plan.hosts for a in h.addresses.values()}
    use: dict[int, int] = {}
    for s in streams:
        for link in model.links_used(s.layer, by_address[s.src], by_address[s.dst]):
            use[link] = use.get(link, 0) + 1
    return max(sorted(use), key=lambda k: use[k])


def print_phase(phase: Phase) -> None:
    p = phase.probes
    print(
        f"{phase.name:9} deploy {phase.deploy_s:6.1f} s ({phase.outcome}); probes {p.sent} sent, "
        f"{p.lost} lost ({p.ttl_exceeded} ICMP time exceeded, {p.unreachable} unreachable, "
        f"{p.silent} silent) on {phase.streams_losing} of {phase.streams} streams "
        f"({phase.streams_looping} looped); "
        f"{p.sent / max(phase.streams, 1) / (phase.deploy_s + 2 * SETTLE_S):.1f} probes/s a stream",
        flush=True,
    )
    for t in phase.transfers:
        print(
            f"{phase.name:9}   mptcp {t.client_ns} -> {t.address}: {t.layers_with_subflow} "
            f"subflow layers, {t.bytes / 1e6:.1f} MB, longest stall {t.stall_s:.1f} s, "
            f"{'RESET' if t.reset else 'no reset'} ({t.ended})",
            flush=True,
        )
    for note in phase.notes:
        print(f"{phase.name:9}   {note}", flush=True)


def summary_lines(phases: list[Phase]) -> list[str]:
    """One line per result, rounds and baseline side by side, and the targets."""
    lines = []
    for phase in phases:
        p = phase.probes
        lines.append(
            f"{phase.name:8} lost {p.lost:6d} of {p.sent:7d} probes (ICMP time exceeded "
            f"{p.ttl_exceeded}, unreachable {p.unreachable}, silent {p.silent}; "
            f"{phase.streams_losing} of {phase.streams} streams lost, {phase.streams_looping} "
            f"looped); MPTCP {sum(t.bytes for t in phase.transfers) / 1e6:.1f} MB, "
            f"resets {phase.resets}/{len(phase.transfers)}, longest stall "
            f"{max((t.stall_s for t in phase.transfers), default=0.0):.1f} s; deploy "
            f"{phase.deploy_s:.1f} s ({phase.outcome})"
        )
    by_name = {p.name: p for p in phases}
    if "rounds" in by_name and "baseline" in by_name:
        rounds, baseline = by_name["rounds"], by_name["baseline"]
        ratio = rounds.deploy_s / max(baseline.deploy_s, 1e-9)
        lines.append(
            f"target 0 probes lost with the rounds: {rounds.probes.lost} "
            f"(baseline {baseline.probes.lost}); MPTCP resets: {rounds.resets} "
            f"(baseline {baseline.resets}); deploy time rounds / baseline {ratio:.2f}x "
            f"(target <= 2x: {'met' if ratio <= 2 else 'missed'})"
        )
    return lines


def main() -> int:
    from fatpaths_cfg import api
    from fatpaths_cfg.deploy.devices import Access, load_device_book
    from fatpaths_cfg.deploy.push import DeployOptions, deploy
    from fatpaths_cfg.deploy.rounds import RoundResult, ordered_deploy
    from fatpaths_cfg.lab.lifecycle import down, fail, repair, up
    from fatpaths_cfg.lab.plan import build_plan

    parser = argparse.ArgumentParser()
    parser.add_argument("work", nargs="?", type=Path)
    parser.add_argument("--pairs", type=int, default=50)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--skip-cable", action="store_true")
    parser.add_argument(
        "--figures", type=Path, default=REPO / "docs" / "figures" / "deploy_hitless.txt"
    )
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="hitless-"))
    old, new = work / "seed1", work / "seed2"
    for seed, out in ((1, old), (2, new)):
        api.compile_to_directory(INVENTORY, out, seed)
    plan = build_plan(old)
    streams = pick_streams(plan, args.pairs, args.seed)
    transfers = pick_transfers(plan, args.seed)
    print(
        f"slimfly-q5: {len(plan.switches)} switches, {len(plan.hosts)} hosts, "
        f"{len(plan.layer_ids)} layers; {len(streams)} probe streams at "
        f"{1 / INTERVAL_S:.0f}/s, {len(transfers)} MPTCP transfers at "
        f"{MPTCP_RATE / 1e6:.1f} MB/s; deploy --parallel {args.parallel}",
        flush=True,
    )
    phases: list[Phase] = []
    traffic = Traffic(plan, streams, transfers, work / "traffic")
    began = time.monotonic()
    undo_mptcp: Callable[[], None] | None = None
    try:
        summary = up(old, mgmt_pool="198.18.0.0/15")
        print(f"lab up {summary.seconds:.1f} s", flush=True)
        assert summary.devices is not None
        book = load_device_book(summary.devices, Access())
        options = DeployOptions(verify_timeout=30.0)
        undo_mptcp = setup_mptcp(plan, transfers)

        def measured(name: str, action: Callable[[Phase], None], idle: float = 0.0) -> Phase:
            phase = Phase(name)
            traffic.start(name)
            time.sleep(SETTLE_S)
            layers = traffic.subflow_layers()
            began_deploy = time.monotonic()
            phase.marks.append((time.time(), "before"))
            if idle:
                time.sleep(idle)
                phase.outcome = "nothing deployed"
            else:
                action(phase)
            phase.deploy_s = time.monotonic() - began_deploy
            phase.marks.append((time.time(), "deploy"))
            time.sleep(SETTLE_S)
            # The early count can precede a connection on a loaded machine: take the larger.
            late = traffic.subflow_layers()
            traffic.stop(phase)
            for transfer, *counts in zip(phase.transfers, layers, late, strict=True):
                transfer.layers_with_subflow = max(counts)
            phases.append(phase)
            print_phase(phase)
            return phase

        def rounds(phase: Phase, before: Callable[[int], None] | None = None) -> None:
            def show(r: RoundResult) -> None:
                proof = r.proof
                walk = f"{proof.loops} loops, {proof.blackholes} blackholes" if proof else "-"
                why = "; ".join(f"{name}: {reason}" for name, reason in sorted(r.failed.items()))
                line = (
                    f"{'undo ' if r.undo else ''}round {r.number} ({r.kind}): {r.seconds:.1f} s, "
                    f"{walk}, {len(r.failed)} failed" + (f" ({why[:300]})" if why else "")
                )
                phase.notes.append(line)
                phase.marks.append((time.time(), f"{'undo ' if r.undo else ''}round {r.number}"))
                print(f"  {line}", flush=True)

            report = ordered_deploy(
                old, new, book, options, args.parallel, on_round=show, before_round=before
            )
            phase.outcome = f"{report.outcome}, read back as {report.state}"

        def plain(target: Path) -> Callable[[Phase], None]:
            def run(phase: Phase) -> None:
                report = deploy(target, None, book, options, args.parallel)
                ok = sum(r.ok for r in report.results)
                phase.outcome = f"{ok}/{len(report.results)} switches committed"

            return run

        def restore() -> None:
            start = time.monotonic()
            report = deploy(old, None, book, options, args.parallel)
            print(
                f"back to seed 1 (plain deploy, not measured): {time.monotonic() - start:.1f} s, "
                f"{sum(r.ok for r in report.results)}/{len(report.results)} committed",
                flush=True,
            )

        measured("idle", lambda _: None, idle=20.0)
        measured("rounds", rounds)
        restore()
        measured("baseline", plain(new))
        if not args.skip_cable:
            restore()
            cable = busiest_link(plan, streams)

            def cable_case(phase: Phase) -> None:
                def before(number: int) -> None:
                    if number == 2:
                        ends = fail(old, str(cable))
                        phase.notes.append(f"failed {ends} before round 2")

                try:
                    rounds(phase, before)
                finally:
                    repair(old, str(cable))
                    phase.notes.append(f"repaired link {cable} after the deploy")

            measured("cable", cable_case)
    finally:
        traffic.kill()
        if undo_mptcp is not None:
            undo_mptcp()
        down(old)
    lines = summary_lines(phases)
    print("\nrounds vs baseline (same run):")
    for line in lines:
        print(f"  {line}")
    result = {
        "wall_s": round(time.monotonic() - began, 1),
        "streams": len(streams),
        "transfers": len(transfers),
        "parallel": args.parallel,
        "phases": [
            {**asdict(p), "resets": p.resets, "deploy_s": round(p.deploy_s, 1)} for p in phases
        ],
    }
    (work / "deploy_hitless.json").write_text(json.dumps(result, indent=1) + "\n")
    if args.figures is not None:
        header = (
            f"slimfly-q5, seed 1 -> 2: {len(streams)} probe streams, {len(transfers)} MPTCP "
            f"transfers, deploy --parallel {args.parallel}\n"
        )
        notes = [f"{p.name:8} {note}" for p in phases for note in p.notes]
        args.figures.write_text(header + "".join(f"{line}\n" for line in lines + notes))
    print(f"figures: {work / 'deploy_hitless.json'} {args.figures or ''}")
    by_name = {p.name: p for p in phases}
    rounds_ok = "rounds" in by_name and not by_name["rounds"].probes.lost
    return 0 if rounds_ok and not by_name["rounds"].resets else 1


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--peer":
        if sys.argv[2] == "server":
            serve(int(sys.argv[3]))
        else:
            send(sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
        sys.exit(0)
    sys.exit(main())
