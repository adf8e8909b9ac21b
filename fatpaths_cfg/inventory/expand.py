"""Expand a `generate:` block into explicit wiring with deterministic port and host names."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.inventory.load import LoadedInventory
from fatpaths_cfg.inventory.schema import MAX_PLANES, InventorySpec
from fatpaths_cfg.support.stable_hash import plane_seed
from fatpaths_cfg.topologies import generate
from fatpaths_cfg.topologies.base import GeneratedTopology, TopologyParameterError

DEFAULT_WIRING_SEED = 1
# Kinds whose wiring depends on the seed: the only ones whose planes can differ.
SEEDED_KINDS = ("jellyfish", "xpander")


def topology_wiring(topology: GeneratedTopology, port_prefix: str = "Ethernet") -> dict[str, Any]:
    """Switches, links and hosts of a generated topology as inventory data.

    Ports are numbered per switch: links first, in neighbour order, then hosts, so that the same
    topology always yields the same cabling plan.
    """
    nr = len(topology.switch_names)
    neighbours: list[list[int]] = [[] for _ in range(nr)]
    for u, v in topology.edges:
        neighbours[u].append(v)
        neighbours[v].append(u)
    port_of: dict[tuple[int, int], str] = {}
    host_ports: list[list[str]] = []
    port_counts: list[int] = []
    for s in range(nr):
        number = 0
        for nb in sorted(neighbours[s]):
            number += 1
            port_of[(s, nb)] = f"{port_prefix}{number}"
        host_ports.append(
            [f"{port_prefix}{number + j + 1}" for j in range(topology.hosts_per_switch[s])]
        )
        port_counts.append(number + topology.hosts_per_switch[s])
    names = topology.switch_names
    switches = [
        {"name": names[s], "role": topology.switch_roles[s], "ports": max(port_counts[s], 1)}
        for s in range(nr)
    ]
    links = [
        {"a": f"{names[u]}:{port_of[(u, v)]}", "b": f"{names[v]}:{port_of[(v, u)]}"}
        for u, v in topology.edges
    ]
    hosts = [
        {"name": f"{names[s]}-h{j}", "uplink": f"{names[s]}:{port}"}
        for s in range(nr)
        for j, port in enumerate(host_ports[s])
    ]
    return {"switches": switches, "links": links, "hosts": hosts}


def planes_wiring(planes: list[GeneratedTopology], port_prefix: str = "Ethernet") -> dict[str, Any]:
    """Inventory data of parallel planes: each plane's switches named with a `pN-` prefix and
    `plane: N`, and host j of rack r cabled to rack r's switch in every plane.

    One plane is exactly `topology_wiring`, so single-plane inventories keep their bytes.
    """
    if len(planes) == 1:
        return topology_wiring(planes[0], port_prefix)
    switches: list[dict[str, Any]] = []
    links: list[dict[str, Any]] = []
    uplinks: dict[str, list[str]] = {}
    for plane, topology in enumerate(planes):
        wiring = topology_wiring(topology, port_prefix)
        prefix = f"p{plane}-"
        switches += [
            {**sw, "name": prefix + sw["name"], "plane": plane} for sw in wiring["switches"]
        ]
        links += [{"a": prefix + link["a"], "b": prefix + link["b"]} for link in wiring["links"]]
        for host in wiring["hosts"]:
            uplinks.setdefault(host["name"], []).append(prefix + host["uplink"])
    hosts = [{"name": name, "uplinks": ends} for name, ends in uplinks.items()]
    # Same kind and parameters give every plane the same racks and hosts per rack.
    assert all(len(h["uplinks"]) == len(planes) for h in hosts)
    return {"switches": switches, "links": links, "hosts": hosts}


def run_plane_generators(
    kind: str,
    params: dict[str, Any],
    file: str,
    line_of: Callable[[str], int],
    field_prefix: str = "generate",
) -> list[GeneratedTopology]:
    """One topology per plane from `planes:` (1..8) and `heterogeneous:` (each plane its own
    seeded wiring on the same racks) beside the kind's own parameters."""
    params = dict(params)
    planes = params.pop("planes", 1)
    heterogeneous = params.pop("heterogeneous", False)

    def bad(name: str, message: str, hint: str) -> UserErrors:
        return UserErrors.single(file, f"{field_prefix}.{name}", message, hint, line=line_of(name))

    if isinstance(planes, bool) or not isinstance(planes, int) or not 1 <= planes <= MAX_PLANES:
        raise bad(
            "planes",
            f"planes must be 1..{MAX_PLANES}, got {planes!r}",
            "P-Net attaches hosts to at most 8 planes",
        )
    if not isinstance(heterogeneous, bool):
        raise bad(
            "heterogeneous",
            f"must be true or false, got {heterogeneous!r}",
            "true: every plane its own random wiring",
        )
    if heterogeneous and kind not in SEEDED_KINDS:
        raise bad(
            "heterogeneous",
            f"kind {kind!r} has one wiring only",
            "heterogeneous planes need a seeded kind: " + ", ".join(SEEDED_KINDS),
        )
    first = run_generator(kind, params, file, line_of, field_prefix)
    if not heterogeneous:
        return [first] * planes
    seed = params.get("seed", DEFAULT_WIRING_SEED)
    topologies = [first]
    for plane in range(1, planes):
        plane_params = {**params, "seed": plane_seed(seed, plane)}
        topologies.append(run_generator(kind, plane_params, file, line_of, field_prefix))
    return topologies


def run_generator(
    kind: str,
    params: dict[str, Any],
    file: str,
    line_of: Callable[[str], int],
    field_prefix: str = "generate",
) -> GeneratedTopology:
    """Run a generator; a bad parameter becomes a located user error.

    `seed` is the wiring seed (random topologies only), kept apart from the routing seed so
    that re-seeding the layers never rewires the fabric.
    """
    params = dict(params)
    seed = params.pop("seed", DEFAULT_WIRING_SEED)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise UserErrors.single(
            file,
            f"{field_prefix}.seed",
            f"seed must be an integer >= 0, got {seed!r}",
            line=line_of("seed"),
        )
    try:
        return generate(kind, params, seed)
    except TopologyParameterError as exc:
        raise UserErrors.single(
            file, f"{field_prefix}.{exc.field}", exc.message, exc.hint, line=line_of(exc.field)
        ) from None


def expand_generator(
    loaded: LoadedInventory, size_check: Callable[[int, int, int], None] | None = None
) -> InventorySpec:
    """The generator block as wiring; `size_check(switches, links, hosts)` sees the
    generated sizes before the wiring (a Python object per port, link and host) is built."""
    spec = loaded.spec
    assert spec.generate is not None
    params = spec.generate.parameters()
    planes = run_plane_generators(
        spec.generate.kind,
        params,
        loaded.source.file,
        lambda name: loaded.source.line_of(("generate", name)),
    )
    if size_check is not None:
        size_check(
            sum(len(t.switch_names) for t in planes),
            sum(len(t.edges) for t in planes),
            sum(sum(t.hosts_per_switch) for t in planes),
        )
    wiring = planes_wiring(planes, spec.defaults.port_prefix)
    data = spec.model_dump(exclude={"generate"})
    data.update(wiring)
    return InventorySpec.model_validate(data)


# First line of a generated inventory: what made it, and what lets a rerun overwrite it.
GENERATED_INVENTORY = "# Written by fatpaths topo generate:"


def generated_inventory(
    kind: str, params: dict[str, Any], name: str | None, platform: str, made_by: str
) -> tuple[str, list[GeneratedTopology]]:
    """The wiring inventory of a generated topology (`params` with its seed; `planes=N` makes
    parallel planes), under the header that lets a rerun replace it; and its planes."""
    from fatpaths_cfg.support.block_yaml import dump_block_yaml

    planes = run_plane_generators(kind, params, "<command line>", lambda _: 0, "--param")
    fabric_name = name or "-".join([kind, *(f"{k}{v}" for k, v in params.items() if k != "seed")])
    data = {
        "fabric": fabric_name,
        "defaults": {"platform": platform, "link_speed": "100G"},
        **planes_wiring(planes),
    }
    return f"{GENERATED_INVENTORY} {made_by}\n" + dump_block_yaml(data), planes
