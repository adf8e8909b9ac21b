"""`lab test`: real pings for every (source switch, destination switch, layer) and traceroutes
whose hops must equal the compiled path.

Pings leave from the layer's own source address, so the reply comes back on the same layer and
a broken layer shows as broken whichever direction it broke in. Every address family of the
fabric is probed on its own (a dual-stack fabric gets IPv4 and IPv6 pings and traceroutes): the
two families have separate routes, so one can break while the other works. With failed links
the expected outcome of every probe is computed from the compiled tables, so `lab test` tells a
failure the fabric predicts (a static layer crossing a dead link) from one it does not (a
config bug).

Parallel dataplanes: every layer spans every plane, and a host has one address per (plane,
layer); probes go between the hosts' switches in the plane, from and to the addresses of that
plane and layer: every (switch pair, plane, layer) is pinged.
"""

from __future__ import annotations

import itertools
import json
import time
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from fatpaths_cfg.compiled.paths import walk
from fatpaths_cfg.lab.low_latency import LowLatencyResult, check_low_latency
from fatpaths_cfg.lab.names import HOST_UPLINK
from fatpaths_cfg.lab.netns import (
    FIRST_WAIT_SECONDS,
    RETRY_WAIT_SECONDS,
    in_netns,
    parallel,
    parallel_retried,
    run,
)
from fatpaths_cfg.lab.plan import HostNode, LabPlan
from fatpaths_cfg.lab.trace import trace_switches

# fabric.json's address keys per IP version, in probing order.
FAMILY_KEYS = {4: "v4", 6: "v6"}


@dataclass(frozen=True)
class Probe:
    layer: int
    src_switch: int
    dst_switch: int
    src: HostNode
    dst: HostNode
    family: int  # IP version
    src_address: str
    dst_address: str
    plane: int = 0


@dataclass
class ProbeResult:
    probe: Probe
    ok: bool
    # True: no compiled path of this probe (either direction) crosses a failed link, or (with
    # backup routes) each one that does is carried around it by the backups.
    expected_ok: bool
    crossed: bool = False  # a primary path of this probe crosses a failed link


@dataclass
class TraceResult:
    probe: Probe
    hops: list[int | None]
    expected: list[int]
    ok: bool


@dataclass(frozen=True)
class PacingResult:
    """A host whose inventory asks for shaping: what its uplink's root qdisc really does."""

    host: str
    wanted_mbit: int
    found: str  # e.g. "fq maxrate 50000 Mb/s", "tbf rate 50000 Mb/s", "pfifo_fast"
    ok: bool


@dataclass
class LabTestReport:
    pings: list[ProbeResult]
    traces: list[TraceResult]
    failed_links: list[int]
    seconds: float
    layer_ids: list[int] = field(default_factory=list)
    pacing: list[PacingResult] = field(default_factory=list)
    low_latency: list[LowLatencyResult] = field(default_factory=list)
    backups: bool = False  # the switches hold backup routes (`routing.backup`)

    @property
    def families(self) -> list[int]:
        return sorted({r.probe.family for r in self.pings})

    @property
    def failures(self) -> list[ProbeResult]:
        return [r for r in self.pings if not r.ok]

    @property
    def unexpected(self) -> list[ProbeResult]:
        return [r for r in self.pings if not r.ok and r.expected_ok]

    @property
    def crossed(self) -> list[ProbeResult]:
        """Probes whose primary path (either direction) crosses a failed link."""
        return [r for r in self.pings if r.crossed]

    @property
    def trace_failures(self) -> list[TraceResult]:
        return [t for t in self.traces if not t.ok]

    @property
    def ok(self) -> bool:
        return not self.failures and self.explained

    @property
    def explained(self) -> bool:
        """Every failure is one the failed links predict: no ping fails that the compiled
        tables say gets through, no traceroute of an intact path strays, and the host checks
        (shaping, low latency, which already leave out what the failed links break) pass."""
        return (
            not self.unexpected
            and not self.trace_failures
            and all(result.ok for result in self.pacing)
            and all(result.ok for result in self.low_latency)
        )

    def pairs_with_a_working_layer(self, by_host: bool = False) -> tuple[int, int]:
        """Switch pairs (or, across planes, host pairs) that some probe got through."""
        working: dict[tuple[int, int], bool] = defaultdict(bool)
        for r in self.pings:
            p = r.probe
            key = (p.src.index, p.dst.index) if by_host else (p.src_switch, p.dst_switch)
            working[key] = working[key] or r.ok
        return sum(working.values()), len(working)


def plane_family_addresses(plan: LabPlan) -> dict[int, dict[str, dict[tuple[int, int], str]]]:
    """IP version -> host name -> (plane, layer) -> address (no prefix length), for every
    family the address plan gives the hosts."""
    found: dict[int, dict[str, dict[tuple[int, int], str]]] = {}
    plan_addresses = plan.compiled.addresses
    if plan_addresses is None:
        return found
    names = [h.name for h in plan.compiled.fabric.hosts]
    for version, key in FAMILY_KEYS.items():
        tables = plan_addresses.of(key)
        if tables is None:
            continue
        by_family = found.setdefault(version, {})
        for name, addresses in zip(names, tables.hosts, strict=True):
            by_family[name] = {
                place: address.split("/")[0]
                for place, address in zip(plan_addresses.host_places, addresses, strict=True)
            }
    return found


def family_addresses(plan: LabPlan) -> dict[int, dict[str, dict[int, str]]]:
    """IP version -> host name -> layer -> address: plane 0's (a single plane's)."""
    return {
        version: {
            host: {layer: a for (plane, layer), a in by_place.items() if plane == 0}
            for host, by_place in by_host.items()
        }
        for version, by_host in plane_family_addresses(plan).items()
    }


def hosts_by_switch(plan: LabPlan, plane: int) -> dict[int, list[HostNode]]:
    """The switches of a plane that have hosts, and their hosts."""
    on_switch: dict[int, list[HostNode]] = defaultdict(list)
    for host in plan.hosts:
        on_switch[host.switch_in(plane)].append(host)
    return on_switch


def plan_probes(plan: LabPlan) -> list[Probe]:
    """One probe per (family, layer, s, t), rotating over the hosts of s and t so all hosts
    take part; s and t are switches of the layer's plane."""
    per_plane = {plane: hosts_by_switch(plan, plane) for plane in range(plan.planes)}
    probes = []
    for version, addresses in plane_family_addresses(plan).items():
        for plane, layer in itertools.product(range(plan.planes), plan.layer_ids):
            on_switch = per_plane[plane]
            switches = sorted(on_switch)
            for s in switches:
                for t in switches:
                    if s == t:
                        continue
                    src = on_switch[s][(t + layer) % len(on_switch[s])]
                    dst = on_switch[t][(s + layer) % len(on_switch[t])]
                    src_address = addresses[src.name][(plane, layer)]
                    dst_address = addresses[dst.name][(plane, layer)]
                    probes.append(
                        Probe(layer, s, t, src, dst, version, src_address, dst_address, plane)
                    )
    return probes


class PathModel:
    """Compiled forwarding of every layer: the paths a probe may take, as switch sequences."""

    def __init__(self, plan: LabPlan) -> None:
        fabric = plan.compiled.fabric
        self.dist = plan.compiled.dist
        self.next_hop = plan.compiled.next_hop
        self.backup = plan.compiled.backup  # loop-free alternates (`routing.backup`) or None
        self.ecmp = plan.compiled.ecmp
        self.link_of = {(min(k.a, k.b), max(k.a, k.b)): k.index for k in fabric.links}
        self.layer_links = [set(layer.links.tolist()) for layer in plan.compiled.layers]
        self.neighbours: dict[int, list[int]] = defaultdict(list)
        for link in fabric.links:
            self.neighbours[link.a].append(link.b)
            self.neighbours[link.b].append(link.a)

    def hops(self, layer: int, s: int, t: int) -> list[int]:
        """Every switch a packet s -> t in this layer may visit next (ECMP gives several)."""
        li = layer - 1
        if not self.ecmp:
            return [int(self.next_hop[li, s, t])]
        d = int(self.dist[li, s, t])
        return [
            n
            for n in self.neighbours[s]
            if self.link_of[min(s, n), max(s, n)] in self.layer_links[li]
            and int(self.dist[li, n, t]) == d - 1
        ]

    def links_used(self, layer: int, s: int, t: int) -> set[int]:
        used: set[int] = set()
        frontier = {s}
        while frontier:
            step: set[int] = set()
            for u in frontier:
                if u == t:
                    continue
                for n in self.hops(layer, s=u, t=t):
                    if n < 0:
                        continue
                    used.add(self.link_of[min(u, n), max(u, n)])
                    step.add(n)
            frontier = step
        return used

    def arrives(self, layer: int, s: int, t: int, failed: set[int]) -> bool:
        """Whether s reaches t in this layer with `failed` links down: a switch whose next hop
        is over a failed link takes its backup (withdrawn too when it is over one)."""
        li, at, seen = layer - 1, s, {s}
        while at != t:
            nxt = int(self.next_hop[li, at, t])
            if nxt < 0:
                return False
            if self.link_of[min(at, nxt), max(at, nxt)] in failed:
                nxt = int(self.backup[li, at, t]) if self.backup is not None else -1
                if nxt < 0 or self.link_of[min(at, nxt), max(at, nxt)] in failed:
                    return False
            if nxt in seen:
                return False
            seen.add(nxt)
            at = nxt
        return True

    def path(self, layer: int, s: int, t: int) -> list[int]:
        """The first-choice path (exact without ECMP); [] where the layer has none."""
        if not self.ecmp:
            found = walk(self.next_hop[layer - 1], s, t)
            return list(found) if found is not None else []
        path = [s]
        while path[-1] != t:
            # Each ECMP hop is one closer to t, so this ends; a switch with none has no path.
            hops = self.hops(layer, path[-1], t)
            if not hops:
                return []
            path.append(hops[0])
        return path

    def is_path(self, layer: int, hops: list[int], t: int) -> bool:
        if not hops or hops[-1] != t:
            return False
        return all(b in self.hops(layer, a, t) for a, b in itertools.pairwise(hops))


def _ping_batch(batch: list[tuple[int, Probe]], wait: int) -> dict[int, bool]:
    """All pings of one source host in one shell in its namespace, running side by side."""
    lines = [
        f"(ping -{p.family} -n -q -c1 -W{wait} -I {p.src_address} {p.dst_address}"
        f" >/dev/null 2>&1 && echo ok {k} || echo fail {k}) &"
        for k, p in batch
    ]
    out = run(in_netns(batch[0][1].src.netns, ["sh", "-c", "\n".join([*lines, "wait"])]))
    results = {}
    for line in out.splitlines():
        verdict, _, key = line.partition(" ")
        results[int(key)] = verdict == "ok"
    return results


def run_pings(probes: list[Probe], workers: int = 12) -> list[bool]:
    def by_source(keys: list[int], wait: int) -> dict[int, bool]:
        groups: dict[str, list[tuple[int, Probe]]] = defaultdict(list)
        for k in keys:
            groups[probes[k].src.netns].append((k, probes[k]))
        merged: dict[int, bool] = {}
        for part in parallel(lambda g: _ping_batch(g, wait), list(groups.values()), workers):
            merged.update(part)
        return merged

    results = by_source(list(range(len(probes))), FIRST_WAIT_SECONDS)
    # One retry with a longer wait: a first packet can be lost to ARP or neighbour discovery
    # under load.
    retry = [k for k, ok in results.items() if not ok]
    if retry:
        results.update(by_source(retry, RETRY_WAIT_SECONDS))
    return [results.get(k, False) for k in range(len(probes))]


def _traceroute(plan: LabPlan, probe: Probe, max_hops: int, wait: int) -> list[int | None]:
    hops, _ = trace_switches(
        plan,
        probe.src.netns,
        probe.dst_address,
        max_hops,
        family=f"-{probe.family}",
        source=probe.src_address,
        wait=wait,
    )
    return hops


def sample_traces(probes: list[Probe], per_layer: int, seed: int) -> list[Probe]:
    """`per_layer` traceroutes per layer of every family and plane."""
    rng = np.random.default_rng(seed)
    chosen = []
    for key in sorted({(p.family, p.plane, p.layer) for p in probes}):
        of_layer = [p for p in probes if (p.family, p.plane, p.layer) == key]
        take = min(per_layer, len(of_layer))
        chosen += [of_layer[i] for i in sorted(rng.choice(len(of_layer), take, replace=False))]
    return chosen


# The qdiscs a host plan installs for shaping, and where tc's JSON keeps their rate.
SHAPING_RATE_FIELD = {"fq": "maxrate", "tbf": "rate"}


def _uplink_shaping(host: HostNode, wanted_mbit: int, device: str = HOST_UPLINK) -> PacingResult:
    """Read the uplink's root qdisc back: fq paces each flow (maxrate), tbf the whole uplink
    (kernels without fq); both in bytes per second in tc's JSON."""
    shown = run(in_netns(host.netns, ["tc", "-j", "qdisc", "show", "dev", device]))
    roots = [q for q in json.loads(shown or "[]") if q.get("root")]
    name = host.name if device == HOST_UPLINK else f"{host.name} {device}"
    if not roots:
        return PacingResult(name, wanted_mbit, "no root qdisc", False)
    kind, options = roots[0]["kind"], roots[0].get("options", {})
    label = SHAPING_RATE_FIELD.get(kind)
    rate = options.get(label) if label else None
    if rate is None:
        return PacingResult(name, wanted_mbit, kind, False)
    mbit = round(int(rate) * 8 / 1e6)
    return PacingResult(name, wanted_mbit, f"{kind} {label} {mbit} Mb/s", mbit == wanted_mbit)


def check_pacing(plan: LabPlan) -> list[PacingResult]:
    wanted = {h.name: h.pacing_gbps for h in plan.compiled.fabric.hosts if h.pacing_gbps}
    # Every uplink of a host is shaped: one per plane.
    shaped = [
        (h, h.device_in(p)) for h in plan.hosts if h.name in wanted for p in range(plan.planes)
    ]

    def read_back(port: tuple[HostNode, str]) -> PacingResult:
        host, device = port
        return _uplink_shaping(host, round(float(wanted[host.name]) * 1000), device)

    return parallel(read_back, shaped)


def run_lab_test(
    plan: LabPlan, failed_links: list[int], traces_per_layer: int = 8
) -> LabTestReport:
    started = time.monotonic()
    model = PathModel(plan)
    failed = set(failed_links)
    probes = plan_probes(plan)
    outcomes = run_pings(probes)
    pings = []
    for probe, ok in zip(probes, outcomes, strict=True):
        used = model.links_used(probe.layer, probe.src_switch, probe.dst_switch)
        used |= model.links_used(probe.layer, probe.dst_switch, probe.src_switch)
        crossed = bool(used & failed)
        carried = not crossed
        if crossed and model.backup is not None:
            s, t = probe.src_switch, probe.dst_switch
            carried = model.arrives(probe.layer, s, t, failed) and model.arrives(
                probe.layer, t, s, failed
            )
        pings.append(ProbeResult(probe, ok, carried, crossed))
    # Traceroutes only where the layer is intact: a dead link's trace has nothing to compare.
    candidates = [r.probe for r in pings if r.expected_ok and not r.crossed]
    sampled = sample_traces(candidates, traces_per_layer, plan.compiled.seed)
    max_hops = int(plan.compiled.dist[plan.compiled.dist < 255].max(initial=0)) + 2

    def trace(probe: Probe, wait: int) -> TraceResult:
        hops = _traceroute(plan, probe, max_hops, wait)
        expected = model.path(probe.layer, probe.src_switch, probe.dst_switch)
        clean = [h for h in hops if h is not None]
        ok = len(clean) == len(hops) and model.is_path(probe.layer, clean, probe.dst_switch)
        return TraceResult(probe, hops, expected, ok and clean[0] == probe.src_switch)

    traces = parallel_retried(trace, sampled, lambda _, result: result.ok)
    return LabTestReport(
        pings,
        traces,
        sorted(failed),
        round(time.monotonic() - started, 2),
        plan.layer_ids,
        check_pacing(plan),
        check_low_latency(plan, traces_per_layer, plan.compiled.seed, failed),
        model.backup is not None,
    )
