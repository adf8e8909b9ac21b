"""Expand a `generate:` block into explicit wiring with deterministic port and host names."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.inventory.load import LoadedInventory
from fatpaths_cfg.inventory.schema import InventorySpec
from fatpaths_cfg.topologies import generate
from fatpaths_cfg.topologies.base import GeneratedTopology, TopologyParameterError

DEFAULT_WIRING_SEED = 1


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


def expand_generator(loaded: LoadedInventory) -> InventorySpec:
    spec = loaded.spec
    assert spec.generate is not None
    params = spec.generate.parameters()
    topology = run_generator(
        spec.generate.kind,
        params,
        loaded.source.file,
        lambda name: loaded.source.line_of(("generate", name)),
    )
    wiring = topology_wiring(topology, spec.defaults.port_prefix)
    data = spec.model_dump(exclude={"generate"})
    data.update(wiring)
    return InventorySpec.model_validate(data)
