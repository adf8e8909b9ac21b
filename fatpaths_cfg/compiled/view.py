"""A compiled fabric as the stages after compile read it: typed, the same in memory and on disk.

`view_of` builds it from the `CompiledFabric` a compile holds in memory; `read.load_compiled`
builds it from an output directory (`fabric.json` and `routing.npz`), after checking both.
Every later stage (verify, lab, simulate, analyze, plan, deploy) reads this one shape, so what
they see does not depend on where the fabric came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from fatpaths_cfg.compiled.schema import SCHEMA

if TYPE_CHECKING:
    # Annotations only: a view read back from disk needs none of the compiler's models.
    from fatpaths_cfg.addressing import AddressPlan, FamilyTables
    from fatpaths_cfg.compiled.ir import CompiledFabric
    from fatpaths_cfg.fabric import Fabric

FAMILIES = ("v4", "v6")
# The address families of `addressing.family`.
FAMILIES_OF = {"ipv4": ("v4",), "ipv6": ("v6",), "dual": ("v4", "v6")}


@dataclass(frozen=True)
class LayerRecord:
    """One routing layer as fabric.json records it."""

    number: int  # 1-based, as operators count layers
    algorithm: str
    links: np.ndarray  # int64: the indices of its links in `fabric.links`, ascending
    ecmp: bool
    up_down_rank: tuple[int, ...] | None  # per switch, acyclic layers only
    deadlock_free: bool | None  # None: not recorded (an output of schema 1)
    completed_links: int = 0  # links completion added to connect the layer


@dataclass(frozen=True)
class FamilyAddresses:
    """One address family's addresses, spelt as fabric.json spells them."""

    loopbacks: list[str]  # per switch, with prefix length ("192.168.0.1/32")
    subnets: list[list[str]]  # [layer][switch] host subnet ("10.0.8.0/29")
    gateways: list[list[str]] | None  # [layer][switch] (prefix encoding), else None
    links: list[tuple[str, str]]  # per link: (a side, b side), with prefix length
    hosts: list[list[str]]  # [host][place], with prefix length; places: `host_places`


@dataclass(frozen=True)
class AddressRecords:
    """The address plan of a compiled fabric (`addressing` in fabric.json)."""

    encoding: str  # prefix | vlan
    family: str  # ipv4 | ipv6 | dual
    v4: FamilyAddresses | None
    v6: FamilyAddresses | None
    numbers: list[int]  # per switch: its number in the plan (kept by --keep-layers)
    locals: list[int | None]  # per switch: its number within its plane (None: schema 1)
    host_places: list[tuple[int, int]]  # (plane, layer) of each host address, in order
    host_macs: list[str]  # per host (VLAN encoding), else []
    vlans: list[int]  # VLAN id per layer (VLAN encoding), else []
    pools: dict[str, str]  # the inventory's pools the plan was drawn from (`host_pool_v4`, ...)

    @property
    def families(self) -> tuple[str, ...]:
        return tuple(f for f in FAMILIES if self.of(f) is not None)

    def of(self, family: str) -> FamilyAddresses | None:
        return self.v4 if family == "v4" else self.v6 if family == "v6" else None

    def tables(self) -> list[tuple[str, FamilyAddresses]]:
        """(family, its addresses) for each family the plan has."""
        return [(f, t) for f in FAMILIES if (t := self.of(f)) is not None]

    def host_address(self, family: str, host: int, plane: int, layer: int) -> str | None:
        tables = self.of(family)
        if tables is None:
            return None
        return tables.hosts[host][self._place_index[(plane, layer)]]

    @cached_property
    def _place_index(self) -> dict[tuple[int, int], int]:
        return {place: i for i, place in enumerate(self.host_places)}


@dataclass(frozen=True)
class LoadedCompiled:
    """A compiled fabric as verify, lab, simulate, analyze, plan and deploy read it."""

    directory: Path  # where it was read from (a fabric compiled in memory: its name)
    schema: str
    inventory: str  # the inventory's file name
    seed: int
    fabric: Fabric
    ecmp: bool  # every equal-cost next hop within a layer is used (`routing.ecmp_within_layer`)
    backup_mode: str  # `routing.backup`: none | lfa
    layers: list[LayerRecord]
    addresses: AddressRecords | None  # None: written without an address plan
    dist: np.ndarray  # uint8 (layers, switches, switches): hops, 255 = unreachable
    next_hop: np.ndarray  # int32, same shape; -1 = none
    backup: np.ndarray | None = None  # the compiled loop-free alternates (`routing.backup`)

    @property
    def name(self) -> str:
        return self.fabric.name

    @property
    def fabric_file(self) -> Path:
        return self.directory / "fabric.json"

    @property
    def layer_ids(self) -> list[int]:
        return [layer.number for layer in self.layers]

    @property
    def layer_masks(self) -> list[np.ndarray]:
        masks = []
        for layer in self.layers:
            mask = np.zeros(len(self.fabric.links), dtype=bool)
            mask[layer.links] = True
            masks.append(mask)
        return masks


def view_of(compiled: CompiledFabric) -> LoadedCompiled:
    """What `load_compiled` reads back from this fabric's output, without writing it (sweeps
    analyse and simulate thousands of fabrics that never reach a disk)."""
    routing = compiled.routing
    spec = compiled.addressing_spec.model_dump()
    layers = [
        LayerRecord(
            layer.number,
            layer.algorithm,
            np.flatnonzero(layer.links).astype(np.int64),
            routing.ecmp,
            None if layer.rank is None else tuple(int(r) for r in layer.rank),
            compiled.deadlock_free[i],
            layer.completed_links,
        )
        for i, layer in enumerate(compiled.layers)
    ]
    return LoadedCompiled(
        Path(compiled.name),
        SCHEMA,
        compiled.inventory_name,
        compiled.seed,
        compiled.fabric,
        bool(compiled.routing_spec.ecmp_within_layer),
        str(compiled.routing_spec.backup),
        layers,
        address_records(compiled.address_plan, compiled.fabric, pools_of(spec)),
        routing.dist,
        routing.next_hop,
        routing.backup,
    )


def address_records(plan: AddressPlan, fabric: Fabric, pools: dict[str, str]) -> AddressRecords:
    """The plan's addresses as fabric.json spells them (`AddressPlan.to_json`)."""
    numbers = plan.numbers
    places = [(p, layer + 1) for p in range(plan.planes) for layer in range(plan.layer_count)]
    return AddressRecords(
        plan.encoding,
        plan.family,
        None if plan.v4 is None else _family(plan, plan.v4, 32, fabric, places),
        None if plan.v6 is None else _family(plan, plan.v6, 128, fabric, places),
        list(numbers.number) if numbers else list(range(fabric.nr)),
        list(numbers.local) if numbers else [None] * fabric.nr,
        places,
        list(plan.host_macs),
        list(plan.vlans),
        pools,
    )


def pools_of(spec: dict[str, object]) -> dict[str, str]:
    """The pools of an `addressing_spec` (`host_pool_v4`, `link_pool_v6`, ...)."""
    return {key: str(value) for key, value in spec.items() if "_pool_" in key}


def _family(
    plan: AddressPlan,
    tables: FamilyTables,
    loopback_length: int,
    fabric: Fabric,
    places: list[tuple[int, int]],
) -> FamilyAddresses:
    link_length, host_length = tables.link_prefix_len, tables.host_prefix_len
    return FamilyAddresses(
        [f"{a}/{loopback_length}" for a in tables.loopbacks],
        [list(row) for row in tables.subnets],
        [list(row) for row in tables.gateways] if plan.encoding == "prefix" else None,
        [(f"{a}/{link_length}", f"{b}/{link_length}") for a, b in tables.links],
        [
            [f"{tables.host_address(p, layer - 1, h.index)}/{host_length}" for p, layer in places]
            for h in fabric.hosts
        ],
    )
