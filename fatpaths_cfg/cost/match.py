"""Configurations of every kind for about N hosts: closed forms for sizes and diameters.

Each kind is enumerated over its own parameters at the generator's default hosts per switch
(the balanced choice of its paper), so every row can be built with `topo generate`; the random
kinds (jellyfish, xpander) have no size of their own and are offered at the network radices the
deterministic kinds found (or every radix when only random kinds are asked for), with their
diameter measured on the seed-1 wiring. The fat tree appears twice: as the generator builds it
(k-ary, oversubscription o puts o*k/2 hosts on each edge switch, whose radix grows to
(o+1)k/2) and as a uniform-radix 2:1 tree (every switch k ports, edge switches 2k/3 hosts and
k/3 uplinks; k a multiple of 6; N = k^3/3 on k^2 switches), which no generator builds yet.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

import numpy as np

from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.topologies import GeneratedTopology, generate
from fatpaths_cfg.topologies.galois import is_prime_power
from fatpaths_cfg.topologies.slimfly import network_radix

from .specs import GeneratorSpec

UNIFORM_FAT_TREE = "fattree-uniform"
MATCH_KINDS = (
    "slimfly",
    "hyperx",
    "dragonfly",
    "xpander",
    "jellyfish",
    "fattree",
    UNIFORM_FAT_TREE,
    "mlfm",
    "oft",
    "clos",
    "clique",
)
RANDOM_KINDS = ("xpander", "jellyfish")
# The oversubscriptions the generator's fat tree is offered at.
FAT_TREE_OVERSUBSCRIPTION = (1, 2, 3, 4)
# Network radices offered for random kinds when no deterministic kind gives one.
RANDOM_RADICES = range(3, 49)
RANDOM_SEED = 1
# Kinds whose network radices the random kinds are offered at: the low-diameter designs the
# FatPaths paper compares random graphs with at equal radix and size.
RADIX_SOURCES = ("slimfly", "hyperx", "dragonfly", "mlfm", "oft")
# Switches of more ports than this are left out unless --max-radix says otherwise: the largest
# single-chip 100G switches have 128 ports (12.8 Tb/s).
DEFAULT_MAX_RADIX = 128


@dataclass(frozen=True)
class Configuration:
    kind: str
    label: str
    hosts: int
    switches: int
    radix: int
    network_radix: int
    hosts_per_switch: int
    links: int
    diameter: int | None
    spec: GeneratorSpec | None
    note: str = ""
    built: list[GeneratedTopology] = field(default_factory=list, compare=False, repr=False)

    @property
    def ports_per_endpoint(self) -> float:
        return (2 * self.links + self.hosts) / self.hosts

    @property
    def cables_per_endpoint(self) -> float:
        return (self.links + self.hosts) / self.hosts

    def topology(self) -> GeneratedTopology:
        if not self.built:
            if self.spec is None:
                self.built.append(uniform_fat_tree(self.radix))
            else:
                self.built.append(generate(self.spec.kind, self.spec.params, RANDOM_SEED))
        return self.built[0]


def _slimfly(limit: int) -> Iterator[Configuration]:
    q = 3
    while 2 * q * q <= limit:
        if is_prime_power(q) and q % 4 != 2:
            k = network_radix(q)
            p = (k + 1) // 2
            nr = 2 * q * q
            yield Configuration(
                "slimfly",
                f"q={q}",
                nr * p,
                nr,
                k + p,
                k,
                p,
                nr * k // 2,
                2,
                GeneratorSpec("slimfly", {"q": q}),
            )
        q += 1


def _hyperx(limit: int) -> Iterator[Configuration]:
    for dims in (2, 3, 4):
        size = 2
        while size**dims <= limit:
            nr, k, p = size**dims, dims * (size - 1), size - 1
            yield Configuration(
                "hyperx", f"L={dims} S={size}", nr * p, nr, k + p, k, p, nr * k // 2, dims,
                GeneratorSpec("hyperx", {"L": dims, "S": size}),
            )  # fmt: skip
            size += 1


def _dragonfly(limit: int) -> Iterator[Configuration]:
    p = 1
    while True:
        a, h = 2 * p, p
        g = a * h + 1
        nr = a * g
        if nr > limit:
            return
        links = g * a * (a - 1) // 2 + g * (g - 1) // 2
        yield Configuration(
            "dragonfly", f"p={p} a={a} h={h}", nr * p, nr, a - 1 + h + p, a - 1 + h, p, links, 3,
            GeneratorSpec("dragonfly", {"p": p}),
        )  # fmt: skip
        p += 1


def _fattree(limit: int) -> Iterator[Configuration]:
    k = 2
    while 5 * k * k // 4 <= limit:
        for over in FAT_TREE_OVERSUBSCRIPTION:
            half = k // 2
            yield Configuration(
                "fattree", f"k={k} o={over}", over * k**3 // 4, 5 * k * k // 4,
                max(k, (over + 1) * half), k, over * half, k**3 // 2, 4,
                GeneratorSpec("fattree", {"k": k, "oversubscription": over}),
                note="edge switches (o+1)k/2 ports" if over > 1 else "",
            )  # fmt: skip
        k += 2


def _uniform_fat_tree(limit: int) -> Iterator[Configuration]:
    k = 6
    while k * k <= limit:
        yield Configuration(
            UNIFORM_FAT_TREE, f"k={k} 2:1", k**3 // 3, k * k, k, k, 2 * k // 3, k**3 // 3, 4, None,
            note="no generator: closed form",
        )  # fmt: skip
        k += 6


def _mlfm(limit: int) -> Iterator[Configuration]:
    h = 1
    while 3 * h * (h + 1) // 2 <= limit:
        yield Configuration(
            "mlfm", f"h={h}", h**3 + h * h, 3 * h * (h + 1) // 2, 2 * h, 2 * h, h, h * h * (h + 1),
            2, GeneratorSpec("mlfm", {"h": h}),
        )  # fmt: skip
        h += 1


def _oft(limit: int) -> Iterator[Configuration]:
    k = 3
    while 3 * (1 + k * (k - 1)) <= limit:
        if is_prime_power(k - 1):
            rl = 1 + k * (k - 1)
            yield Configuration(
                "oft", f"k={k}", 2 * k * rl, 3 * rl, 2 * k, 2 * k, k, 2 * rl * k, 2,
                GeneratorSpec("oft", {"k": k}),
            )  # fmt: skip
        k += 1


def _clos(limit: int) -> Iterator[Configuration]:
    n = 1
    while 3 * n <= limit:
        yield Configuration(
            "clos", f"n={n} r={2 * n} m={n}", 2 * n * n, 3 * n, 2 * n, 2 * n, n, 2 * n * n, 2,
            GeneratorSpec("clos", {"n": n, "r": 2 * n, "m": n}),
        )  # fmt: skip
        n += 1


def _clique(limit: int) -> Iterator[Configuration]:
    k = 2
    while k + 1 <= limit:
        yield Configuration(
            "clique", f"k={k}", (k + 1) * k, k + 1, 2 * k, k, k, (k + 1) * k // 2, 1,
            GeneratorSpec("clique", {"k": k}),
        )  # fmt: skip
        k += 1


_DETERMINISTIC: dict[str, Callable[[int], Iterator[Configuration]]] = {
    "slimfly": _slimfly,
    "hyperx": _hyperx,
    "dragonfly": _dragonfly,
    "fattree": _fattree,
    UNIFORM_FAT_TREE: _uniform_fat_tree,
    "mlfm": _mlfm,
    "oft": _oft,
    "clos": _clos,
    "clique": _clique,
}


def _random(kind: str, hosts: int, radices: list[int]) -> Iterator[Configuration]:
    for k in radices:
        p = k // 2
        if p < 1:
            continue
        if kind == "jellyfish":
            nr = max(k + 1, round(hosts / p))
            if nr * k % 2:
                nr += 1 if nr * p < hosts else -1
            if nr <= k:
                continue
            spec = GeneratorSpec("jellyfish", {"nr": nr, "k": k})
            label = f"nr={nr} k={k}"
        else:
            lift = max(1, round(hosts / (p * (k + 1))))
            nr = (k + 1) * lift
            spec = GeneratorSpec("xpander", {"k": k, "l": lift})
            label = f"k={k} l={lift}"
        yield Configuration(
            kind, label, nr * p, nr, k + p, k, p, nr * k // 2, None, spec,
            note=f"diameter of seed {RANDOM_SEED}",
        )  # fmt: skip


def measured_diameter(topology: GeneratedTopology) -> int | None:
    """Switch hops between the farthest two switches that have hosts (the indirect kinds'
    upper switches carry no traffic of their own)."""
    from fatpaths_cfg.routing import UNREACHABLE, hop_distances

    dist = hop_distances(topology.num_switches, np.array(topology.edges, dtype=np.int32))
    with_hosts = np.array(topology.hosts_per_switch) > 0
    off = dist[np.ix_(with_hosts, with_hosts)][~np.eye(int(with_hosts.sum()), dtype=bool)]
    return None if (off == UNREACHABLE).any() else int(off.max(initial=0))


def uniform_fat_tree(k: int) -> GeneratedTopology:
    """The uniform-radix 2:1 fat tree: k pods of k/2 edge switches (2k/3 hosts, k/3 uplinks,
    one to each of the pod's k/3 aggregation switches) and k/3 aggregation switches (k/2 down,
    k/2 up); k^2/6 cores, each linked once to every pod. Every switch has k ports."""
    third, half = k // 3, k // 2
    n_edge, n_agg, n_core = k * half, k * third, k * k // 6
    edges = []
    for pod in range(k):
        for i in range(half):
            for j in range(third):
                edges.append((pod * half + i, n_edge + pod * third + j))
        for j in range(third):
            for m in range(half):
                edges.append((n_edge + pod * third + j, n_edge + n_agg + j * half + m))
    names = [f"ft-edge-{pod}-{i}" for pod in range(k) for i in range(half)]
    names += [f"ft-agg-{pod}-{j}" for pod in range(k) for j in range(third)]
    names += [f"ft-core-{c}" for c in range(n_core)]
    roles = ["edge"] * n_edge + ["aggregation"] * n_agg + ["core"] * n_core
    return GeneratedTopology(
        kind=UNIFORM_FAT_TREE,
        params={"k": k},
        switch_names=names,
        switch_roles=roles,
        edges=edges,
        hosts_per_switch=[2 * third] * n_edge + [0] * (n_agg + n_core),
    )


def parse_tolerance(text: str) -> float:
    """'10%' or '0.1' -> 0.1; out of [0, 100%) is a user error naming --tolerance."""
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not 0 <= value < 1:
        raise UserErrors.single(
            "--tolerance", "", f"{text!r} is out of range", "a share in [0, 100%), e.g. 10% or 0.1"
        )
    return value


def match(
    hosts: int, tolerance: float, kinds: list[str] | None, max_radix: int = DEFAULT_MAX_RADIX
) -> list[Configuration]:
    """Every configuration within `tolerance` of `hosts`, kind by kind; a kind asked for by
    name that has none is a user error naming --kinds."""
    if hosts < 2:
        raise UserErrors.single("--hosts", "", f"{hosts} is too few", "at least 2 hosts")
    if max_radix < 2:
        raise UserErrors.single("--max-radix", "", f"{max_radix} is too small", "at least 2 ports")
    asked = kinds is not None
    wanted = list(kinds) if kinds is not None else list(MATCH_KINDS)
    unknown = [k for k in wanted if k not in MATCH_KINDS]
    if unknown:
        raise UserErrors.single(
            "--kinds", "", f"unknown kind {unknown[0]!r}", "one of " + ", ".join(MATCH_KINDS)
        )
    low, high = hosts * (1 - tolerance), hosts * (1 + tolerance)

    def fits(c: Configuration) -> bool:
        return low <= c.hosts <= high and c.radix <= max_radix

    found: dict[str, list[Configuration]] = {}
    nearest: dict[str, list[Configuration]] = {}
    for kind in wanted:
        if kind in RANDOM_KINDS:
            continue
        # No switch of a configuration within tolerance has more hosts than it has in total.
        every = list(_DETERMINISTIC[kind](math.floor(high)))
        found[kind] = [c for c in every if fits(c)]
        nearest[kind] = sorted(every, key=lambda c: abs(c.hosts - hosts))[:2]
    radices = sorted({c.network_radix for kind in RADIX_SOURCES for c in found.get(kind, [])})
    for kind in wanted:
        if kind not in RANDOM_KINDS:
            continue
        offered = radices or [k for k in RANDOM_RADICES if k + k // 2 <= max_radix]
        candidates = list(_random(kind, hosts, offered))
        found[kind] = [
            replace(c, diameter=measured_diameter(c.topology())) for c in candidates if fits(c)
        ]
        nearest[kind] = sorted(candidates, key=lambda c: abs(c.hosts - hosts))[:2]
    if asked:
        errors = []
        for kind in wanted:
            if not found[kind]:
                close = ", ".join(
                    f"{c.label} (N={c.hosts}, radix {c.radix})" for c in nearest[kind]
                )
                limit = f" with at most {max_radix} ports"
                errors.append(
                    (
                        f"kind {kind!r} has no configuration within {tolerance:.0%} of "
                        f"{hosts} hosts{limit}",
                        f"nearest: {close}" if close else "no configuration this small",
                    )
                )
        if errors:
            from fatpaths_cfg.errors import UserError

            raise UserErrors([UserError("--kinds", 0, "", m, h) for m, h in errors])
    return [c for kind in wanted for c in sorted(found[kind], key=lambda c: c.hosts)]
