"""The fabric as the simulator sees it: switches, links, hosts and per-layer routing tables.

`network_of` builds it from the compiled model (`load_network` reads that model from an output
directory), so the simulator forwards exactly as the compiled switches would.
`network_from_edges` builds the same thing from a bare graph (tests, benchmarks, generator
specs) with layer 1 = all links.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from fatpaths_cfg.errors import UserErrors

if TYPE_CHECKING:
    from pathlib import Path

    from fatpaths_cfg.compiled import LoadedCompiled

UNREACHABLE = 255


class NetworkLoadError(ValueError):
    """The output directory is missing, foreign or inconsistent."""


@dataclass(frozen=True)
class SimNetwork:
    name: str
    switch_names: list[str]
    host_names: list[str]
    host_switch: npt.NDArray[np.int32]
    link_a: npt.NDArray[np.int32]
    link_b: npt.NDArray[np.int32]
    link_gbps: npt.NDArray[np.float64]
    host_gbps: npt.NDArray[np.float64]
    # layer_links[l, e] == 1 when link e belongs to layer l (layer index = layer id - 1).
    layer_links: npt.NDArray[np.uint8]
    # [layer, switch, destination switch], as in routing.npz.
    dist: npt.NDArray[np.uint8]
    # As `dist`; None when every layer was built multipath and no single next hop was searched
    # for (`next_hops()` searches then, with seed `routing_seed + layer`).
    next_hop: npt.NDArray[np.int32] | None
    # Per layer: forward over every equal-cost next hop (True) or the compiled one only.
    multipath: list[bool]
    link_latency_ps: int = 1_000_000
    host_latency_ps: int = 1_000_000
    meta: dict[str, object] = field(default_factory=dict)
    # Multi-plane fabrics (P-Net): [host, plane] the switch of each host's NIC in each plane
    # (column 0 is `host_switch`); None: one NIC per host.
    host_uplinks: npt.NDArray[np.int32] | None = None
    # Whether layer 0 holds every link with its minimal distances (`network_from_edges`), so
    # that the baselines' equal-cost routing can take them instead of searching again.
    minimal_first_layer: bool = False
    # The tie-break seed of layer 0's next hops when `next_hops()` searches for them.
    routing_seed: int = 0

    @property
    def planes(self) -> int:
        return 1 if self.host_uplinks is None else int(self.host_uplinks.shape[1])

    @property
    def n_switches(self) -> int:
        return len(self.switch_names)

    @property
    def n_hosts(self) -> int:
        return len(self.host_names)

    @property
    def n_layers(self) -> int:
        return len(self.multipath)

    @property
    def topology(self) -> str | None:
        """The generator kind the fabric came from, when it was generated."""
        kind = self.meta.get("topology")
        return kind if isinstance(kind, str) else None

    def diameter(self) -> int:
        """Longest minimal path between switches in layer 1 (reachable pairs)."""
        d = self.dist[0]
        reachable = d[d != UNREACHABLE]
        return int(reachable.max()) if reachable.size else 0

    def port_ends(self, port: int) -> tuple[str, str]:
        """Names of the sending and receiving node of a simulator port (see network.rs)."""
        n_links = len(self.link_a)
        if port < 2 * n_links:
            a = self.switch_names[int(self.link_a[port // 2])]
            b = self.switch_names[int(self.link_b[port // 2])]
            return (a, b) if port % 2 == 0 else (b, a)
        host, plane = divmod((port - 2 * n_links) // 2, self.planes)
        switch = self.switch_names[int(self.nic_switches()[host, plane])]
        name = self.host_names[host]
        return (name, switch) if port % 2 == 0 else (switch, name)

    def next_hops(self) -> npt.NDArray[np.int32]:
        """[layer, switch, destination] single next hops: the stored ones, or (for a network
        built without them) each layer's shortest-path next hops over its links."""
        if self.next_hop is not None:
            return self.next_hop
        masks = self.layer_links.astype(bool)
        return np.stack(
            [
                minimal_routing(self.n_switches, self.link_a[m], self.link_b[m], seed)[1]
                for seed, m in enumerate(masks, start=self.routing_seed)
            ]
        )

    def nic_switches(self) -> npt.NDArray[np.int32]:
        """[host, plane]: the switch each host NIC is attached to."""
        if self.host_uplinks is None:
            return self.host_switch.reshape(-1, 1)
        return self.host_uplinks

    def hosts_per_switch(self) -> npt.NDArray[np.int64]:
        return np.bincount(self.host_switch, minlength=self.n_switches).astype(np.int64)

    def with_options(
        self,
        *,
        all_equal_cost: bool | None = None,
        link_latency_ps: int | None = None,
        host_gbps: float | None = None,
        link_gbps: float | None = None,
    ) -> SimNetwork:
        """A copy with simulation-side knobs changed (the compiled tables stay as they are)."""

        changes: dict[str, object] = {}
        if all_equal_cost is not None:
            changes["multipath"] = [all_equal_cost] * self.n_layers
        if link_latency_ps is not None:
            changes["link_latency_ps"] = link_latency_ps
            changes["host_latency_ps"] = link_latency_ps
        if host_gbps is not None:
            changes["host_gbps"] = np.full(self.n_hosts, host_gbps, dtype=np.float64)
        if link_gbps is not None:
            changes["link_gbps"] = np.full(len(self.link_a), link_gbps, dtype=np.float64)
        return replace(self, **changes)  # type: ignore[arg-type]

    def baseline(self, *, multipath: bool) -> SimNetwork:
        """One layer of every link with its minimal routing, independent of the compiled
        layers: what ECMP, LetFlow and spraying (`multipath`) or single-path minimal routing
        run on."""
        if multipath and self.minimal_first_layer:
            # Equal-cost forwarding reads only the distances (not the tie-broken next hops),
            # and layer 0's are already the minimal ones over every link.
            return replace(
                self,
                layer_links=self.layer_links[:1],
                dist=self.dist[:1],
                next_hop=None if self.next_hop is None else self.next_hop[:1],
                multipath=[True],
            )
        dist, next_hop = minimal_routing(self.n_switches, self.link_a, self.link_b, seed=0)
        return replace(
            self,
            layer_links=np.ones((1, len(self.link_a)), dtype=np.uint8),
            dist=dist[np.newaxis],
            next_hop=next_hop[np.newaxis],
            multipath=[multipath],
        )

    def native_dict(self) -> dict[str, object]:
        """The flat arrays the native `PacketSimulator` takes."""
        return {
            "n_switches": self.n_switches,
            "planes": self.planes,
            "host_switch": np.ascontiguousarray(self.nic_switches(), dtype=np.int32).ravel(),
            # Every NIC of a host runs at the host's rate.
            "host_gbps": np.repeat(np.asarray(self.host_gbps, dtype=np.float64), self.planes),
            "host_latency_ps": int(self.host_latency_ps),
            "link_a": np.ascontiguousarray(self.link_a, dtype=np.int32),
            "link_b": np.ascontiguousarray(self.link_b, dtype=np.int32),
            "link_gbps": np.ascontiguousarray(self.link_gbps, dtype=np.float64),
            "link_latency_ps": int(self.link_latency_ps),
            "layer_links": np.ascontiguousarray(self.layer_links, dtype=np.uint8).ravel(),
            "dist": np.ascontiguousarray(self.dist, dtype=np.uint8).ravel(),
            # Multipath layers forward by `dist` alone; the engine takes no next hops then.
            "next_hop": (
                np.zeros(0, dtype=np.int32)
                if all(self.multipath)
                else np.ascontiguousarray(self.next_hops(), dtype=np.int32).ravel()
            ),
            "multipath": [bool(m) for m in self.multipath],
        }


def minimal_routing(
    n_switches: int, link_a: npt.NDArray[np.int32], link_b: npt.NDArray[np.int32], seed: int
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int32]]:
    """Shortest-path (dist, next_hop) over the given links, oriented [switch, destination]."""
    from fatpaths_cfg import _native

    dist_t, next_t = _native.layer_forwarding(
        n_switches,
        np.ascontiguousarray(link_a, dtype=np.int32),
        np.ascontiguousarray(link_b, dtype=np.int32),
        seed,
    )
    # The native kernel returns [destination, switch]; routing.npz stores the transpose.
    return np.ascontiguousarray(dist_t.T), np.ascontiguousarray(next_t.T)


def minimal_distances(
    n_switches: int, link_a: npt.NDArray[np.int32], link_b: npt.NDArray[np.int32]
) -> npt.NDArray[np.uint8]:
    """Shortest-path hop counts over the given links, [switch, destination] (symmetric), with
    no next hops: what multipath layers forward by. (`fatpaths_cfg.routing.hop_distances` does
    the same for the compiler's side; importing it here would load the layer builders, about
    3 ms, into every simulation's start-up.)"""
    from fatpaths_cfg import _native

    return _native.layer_distances(
        n_switches,
        np.ascontiguousarray(link_a, dtype=np.int32),
        np.ascontiguousarray(link_b, dtype=np.int32),
    )


def network_from_edges(
    name: str,
    n_switches: int,
    edges: Sequence[tuple[int, int]] | npt.NDArray[np.int64],
    hosts_per_switch: Sequence[int] | npt.NDArray[np.int64],
    *,
    link_gbps: float = 100.0,
    host_gbps: float | None = None,
    link_latency_ps: int = 1_000_000,
    seed: int = 1,
    extra_layers: Sequence[npt.NDArray[np.bool_]] = (),
    extra_layers_multipath: bool = False,
) -> SimNetwork:
    """A single-layer network (plus optional extra layers given as link masks)."""
    arr = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    link_a = arr[:, 0].astype(np.int32)
    link_b = arr[:, 1].astype(np.int32)
    masks = [np.ones(len(arr), dtype=bool), *[np.asarray(m, dtype=bool) for m in extra_layers]]
    multipath = [True] + [extra_layers_multipath] * len(extra_layers)
    # Equal-cost forwarding reads only the distances; the single next hops' tie-breaking search
    # (most of the time on fabrics with many equal-cost paths) runs only for single-path layers.
    dists = [minimal_distances(n_switches, link_a[m], link_b[m]) for m in masks]
    host_switch = np.repeat(np.arange(n_switches, dtype=np.int32), np.asarray(hosts_per_switch))
    net = SimNetwork(
        name=name,
        switch_names=[f"s{i}" for i in range(n_switches)],
        host_names=[f"h{i}" for i in range(len(host_switch))],
        host_switch=host_switch,
        link_a=link_a,
        link_b=link_b,
        link_gbps=np.full(len(arr), link_gbps, dtype=np.float64),
        host_gbps=np.full(len(host_switch), host_gbps or link_gbps, dtype=np.float64),
        layer_links=np.stack(masks).astype(np.uint8),
        dist=np.stack(dists),
        next_hop=None,
        multipath=multipath,
        link_latency_ps=link_latency_ps,
        host_latency_ps=link_latency_ps,
        minimal_first_layer=True,
        routing_seed=seed,
    )
    # Kept with the network: every run over its single-path layers would search them again.
    return net if all(multipath) else replace(net, next_hop=net.next_hops())


def sampled_layers(
    net: SimNetwork, count: int, rho: float, seed: int
) -> list[npt.NDArray[np.bool_]]:
    """`count` random edge-sampling layers over the network's links, each connecting every
    switch pair: the compiler's own random layers, for networks built without a compile."""
    from fatpaths_cfg.inventory.schema import RoutingSpec
    from fatpaths_cfg.layers import build_layers

    edges = np.sort(np.stack([net.link_a, net.link_b], axis=1), axis=1).astype(np.int32)
    layers = build_layers(net.n_switches, edges, RoutingSpec(layers=count + 1, rho=rho), seed)
    return [layer.links for layer in layers[1:]]


def network_from_topology(
    kind: str,
    params: dict[str, int | float],
    seed: int = 1,
    *,
    link_gbps: float = 100.0,
    link_latency_ps: int = 1_000_000,
    planes: int = 1,
    heterogeneous: bool = False,
) -> SimNetwork:
    """Layer-1 (minimal, all equal-cost next hops) network of a generated topology; with
    `planes`, that many copies of it (`heterogeneous`: each plane wired with its own seed, as
    `generate: planes/heterogeneous` does), every host with one NIC per plane on its rack's
    switch of that plane."""
    from fatpaths_cfg.support.stable_hash import plane_seed
    from fatpaths_cfg.topologies import generate

    topologies = [
        generate(kind, params, plane_seed(seed, p) if heterogeneous and p else seed)
        for p in range(planes)
    ]
    topo = topologies[0]
    name = f"{kind}-" + "-".join(f"{k}{v}" for k, v in sorted(topo.params.items()))
    if planes == 1:
        net = network_from_edges(
            name,
            topo.num_switches,
            topo.edges,
            topo.hosts_per_switch,
            link_gbps=link_gbps,
            link_latency_ps=link_latency_ps,
            seed=seed,
        )
    else:
        net = network_from_planes(
            f"{name}-planes{planes}",
            [(t.num_switches, t.edges) for t in topologies],
            topo.hosts_per_switch,
            link_gbps=link_gbps,
            link_latency_ps=link_latency_ps,
            seed=seed,
        )
    # Topology-specific patterns (SC'15's worst cases) read the generator's kind and
    # parameters, as they do from a compiled fabric's origin; a multi-plane network's switch
    # numbering is no longer the generator's, so it goes without.
    generator = {"kind": kind, **topo.params} if planes == 1 else None
    return replace(net, meta={**net.meta, "topology": kind, "generator": generator})


def network_from_planes(
    name: str,
    planes: Sequence[tuple[int, Sequence[tuple[int, int]] | npt.NDArray[np.int64]]],
    hosts_per_switch: Sequence[int] | npt.NDArray[np.int64],
    *,
    link_gbps: float = 100.0,
    link_latency_ps: int = 1_000_000,
    seed: int = 1,
) -> SimNetwork:
    """Disjoint planes, each `(n_switches, edges)` with as many switches as the others; host h
    has one NIC per plane on the same rack position (switch index) of every plane, racks filled
    as `hosts_per_switch` says. Switch s of plane p is switch `p * n_switches + s`."""
    sizes = {n for n, _ in planes}
    if len(sizes) != 1:
        raise ValueError("planes need the same number of switches")
    per_plane = sizes.pop()
    edges = np.concatenate(
        [
            np.asarray(e, dtype=np.int64).reshape(-1, 2) + p * per_plane
            for p, (_, e) in enumerate(planes)
        ]
    )
    net = network_from_edges(
        name,
        per_plane * len(planes),
        edges,
        [*hosts_per_switch, *[0] * (per_plane * (len(planes) - 1))],
        link_gbps=link_gbps,
        link_latency_ps=link_latency_ps,
        seed=seed,
    )
    racks = net.host_switch.astype(np.int32)
    uplinks = racks[:, np.newaxis] + per_plane * np.arange(len(planes), dtype=np.int32)
    return replace(net, host_uplinks=np.ascontiguousarray(uplinks, dtype=np.int32))


def load_network(out_dir: str | Path, *, link_latency_ps: int = 1_000_000) -> SimNetwork:
    """The network of a `fatpaths compile` output directory (`fabric.json` + `routing.npz`),
    read and checked by the compiled model's loader; UserErrors when it is not one."""
    # Imported here: the compiled model's loader pulls in the whole compiler, which a run on a
    # generated topology (most tests and benchmarks) never needs.
    from pathlib import Path

    from fatpaths_cfg.compiled import load_compiled

    out = Path(out_dir)
    return network_of(load_compiled(out), link_latency_ps=link_latency_ps, source=str(out))


def network_of(
    compiled: LoadedCompiled, *, link_latency_ps: int = 1_000_000, source: str = ""
) -> SimNetwork:
    """The network of a compiled fabric (read from an output directory, or `view_of` a
    compile in memory): the loader has checked every id and shape this relies on."""
    fabric = compiled.fabric
    links = fabric.links
    link_gbps = np.array([link.speed_gbps for link in links], dtype=np.float64)
    layer_links = np.zeros((len(compiled.layers), len(links)), dtype=np.uint8)
    for i, layer in enumerate(compiled.layers):
        layer_links[i, layer.links] = 1
    # Hosts attach at the speed of their switch's fabric links unless the fabric says otherwise.
    return SimNetwork(
        name=fabric.name,
        switch_names=[s.name for s in fabric.switches],
        host_names=[h.name for h in fabric.hosts],
        host_switch=np.array([h.switch for h in fabric.hosts], dtype=np.int32),
        link_a=np.array([link.a for link in links], dtype=np.int32),
        link_b=np.array([link.b for link in links], dtype=np.int32),
        link_gbps=link_gbps,
        host_gbps=np.array([h.speed_gbps for h in fabric.hosts], dtype=np.float64),
        layer_links=layer_links,
        dist=np.asarray(compiled.dist, dtype=np.uint8),
        next_hop=np.asarray(compiled.next_hop, dtype=np.int32),
        multipath=[layer.ecmp for layer in compiled.layers],
        link_latency_ps=link_latency_ps,
        host_latency_ps=link_latency_ps,
        host_uplinks=_uplinks(compiled),
        # Topology-specific patterns (SC'15 worst cases) need the generator and its parameters;
        # VC counts and Valiant intermediates need its kind.
        meta={
            "source": source,
            "generator": fabric.origin.get("generate"),
            "topology": _generator_kind(fabric.origin),
        },
    )


def _uplinks(compiled: LoadedCompiled) -> npt.NDArray[np.int32] | None:
    """[host, plane] switches from the hosts' uplinks (one per plane, by plane), or None for
    fabrics with one plane (or written before planes)."""
    hosts = compiled.fabric.hosts
    counts = {len(h.uplinks) for h in hosts}
    if not hosts or counts <= {0, 1}:
        return None
    if len(counts) != 1:
        raise UserErrors.single(
            str(compiled.fabric_file), "hosts", "hosts reach different numbers of planes"
        )
    rows = [[u.switch for u in sorted(h.uplinks, key=lambda u: u.plane)] for h in hosts]
    return np.asarray(rows, dtype=np.int32)


def _generator_kind(origin: dict[str, object]) -> str | None:
    generate = origin.get("generate")
    kind = generate.get("kind") if isinstance(generate, dict) else None
    return kind if isinstance(kind, str) else None
