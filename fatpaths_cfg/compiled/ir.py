"""The compiled fabric: the IR every later stage (render, verify, lab, simulate) reads.

`fabric.json` is its schema-versioned, human-readable form and `routing.npz` holds the dense
per-layer tables. Both are written in a fixed order so the same inventory and seed give the
same bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from fatpaths_cfg.addressing import AddressPlan
from fatpaths_cfg.compiled.schema import SCHEMA
from fatpaths_cfg.errors import UserError
from fatpaths_cfg.fabric import Fabric
from fatpaths_cfg.layers import Layer
from fatpaths_cfg.routing import Routing

if TYPE_CHECKING:
    # Annotations only: reading a compiled fabric back needs no pydantic models.
    from fatpaths_cfg.inventory.schema import AddressingSpec, RoutingSpec


@dataclass(frozen=True)
class CompiledFabric:
    """Built once, by `api.compile_fabric`, from every stage's result; never filled in later."""

    fabric: Fabric
    routing_spec: RoutingSpec
    addressing_spec: AddressingSpec
    seed: int
    layers: list[Layer]
    routing: Routing
    inventory_name: str
    address_plan: AddressPlan
    deadlock_free: list[bool]  # per layer: can its routes deadlock under PFC?
    route_counts: list[int]  # layer routes per switch
    # Where later stages point their errors: the inventory as the user named it, and the line
    # of a path in it (0 when the fabric was not compiled from a file in this process).
    inventory_file: str = ""
    line_of: Callable[[tuple[str | int, ...]], int] = field(default=lambda _: 0)
    # Advice the compile prints but that does not stop it (e.g. the Clos half-rate rule).
    warnings: tuple[UserError, ...] = ()

    @property
    def name(self) -> str:
        return self.fabric.name

    @cached_property
    def plan_json(self) -> dict[str, Any]:
        """The address plan as fabric.json stores it (names and address strings)."""
        return self.address_plan.to_json(self.fabric)

    def to_json(self) -> dict[str, Any]:
        fabric = self.fabric
        data: dict[str, Any] = {
            "schema": SCHEMA,
            "name": fabric.name,
            "inventory": self.inventory_name,
            "seed": self.seed,
            "routing": self.routing_json(),
            "addressing_spec": self.addressing_spec.model_dump(),
            "origin": fabric.origin,
            "planes": fabric.planes,
            "switches": [
                {
                    "index": s.index,
                    "name": s.name,
                    "platform": s.platform,
                    "role": s.role,
                    "plane": s.plane,
                    "mgmt": s.mgmt,
                    "ports": list(s.ports),
                    "hosts": [fabric.hosts[h].name for h in fabric.hosts_of_switch[s.index]],
                    "layer_routes": self.route_counts[s.index],
                }
                for s in fabric.switches
            ],
            "links": [
                {
                    "index": link.index,
                    "a": {"switch": fabric.switches[link.a].name, "port": link.a_port},
                    "b": {"switch": fabric.switches[link.b].name, "port": link.b_port},
                    "speed_gbps": link.speed_gbps,
                }
                for link in fabric.links
            ],
            "hosts": [
                {
                    "index": h.index,
                    "name": h.name,
                    "switch": fabric.switches[h.switch].name,
                    "port": h.port,
                    "uplinks": [
                        {"plane": u.plane, "switch": fabric.switches[u.switch].name, "port": u.port}
                        for u in h.uplinks
                    ],
                    "speed_gbps": h.speed_gbps,
                    # Only when set, so fabrics without shaping keep their bytes.
                    **({"pacing_gbps": h.pacing_gbps} if h.pacing_gbps is not None else {}),
                }
                for h in fabric.hosts
            ],
            "layers": [
                {
                    "id": layer.number,
                    "algorithm": layer.algorithm,
                    "links": np.flatnonzero(layer.links).tolist(),
                    "link_count": layer.link_count,
                    "ecmp": self.routing.ecmp,
                    "up_down_rank": None if layer.rank is None else layer.rank.tolist(),
                    "deadlock_free": self.deadlock_free[i],
                    "samples": layer.attempts,
                    "completed_links": layer.completed_links,
                }
                for i, layer in enumerate(self.layers)
            ],
        }
        data["addressing"] = self.plan_json
        return data

    def routing_json(self) -> dict[str, Any]:
        spec = {**self.routing_spec.model_dump(), "seed": self.seed}
        if spec.get("backup") == "none":
            del spec["backup"]  # fabrics without backup routes keep their bytes
        return spec

    def routing_arrays(self) -> dict[str, np.ndarray]:
        arrays = {"dist": self.routing.dist, "next_hop": self.routing.next_hop}
        if self.routing.backup is not None:
            arrays["backup"] = self.routing.backup
        return arrays
