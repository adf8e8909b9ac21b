"""The physical layout that gives every cable a length: switches in racks, racks in rows.

Each switch stands in a rack with its hosts (host cables stay in the rack). Switches are placed
group by group (a generator's groups, see `network.switch_group`), in name order; a group
starts a new rack unless it fits whole into what is left of the current one, so a group spans
as few racks as it can. Racks stand in rows of `racks_per_row` (default: a near-square floor).
A cable between two racks runs the Manhattan distance between them plus `slack_m` for the runs
up to the cable tray and down again, as in the Slim Fly paper's model; within a rack it is
`intra_rack_m` long.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from fatpaths_cfg.support.stable_hash import natural_key

from .network import CostNetwork, IntArray
from .prices import Layout

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Placement:
    rack_of_switch: IntArray
    racks: int
    racks_per_row: int

    @property
    def rows(self) -> int:
        return math.ceil(self.racks / self.racks_per_row)


def place(network: CostNetwork, layout: Layout) -> Placement:
    units = layout.switch_units + layout.host_units * network.host_cables
    order = sorted(
        range(network.nr),
        key=lambda s: (natural_key(network.groups[s]), natural_key(network.switch_names[s])),
    )
    group_units: dict[str, int] = {}
    for s in range(network.nr):
        group_units[network.groups[s]] = group_units.get(network.groups[s], 0) + int(units[s])
    rack_of = np.zeros(network.nr, dtype=np.int64)
    rack, used, current_group = -1, layout.rack_units, None
    for s in order:
        need = int(units[s])
        group = network.groups[s]
        if group != current_group:
            current_group = group
            # A new group starts a new rack unless all of it fits in what is left.
            if used + group_units[group] > layout.rack_units:
                rack, used = rack + 1, 0
        if used + need > layout.rack_units and used > 0:
            rack, used = rack + 1, 0
        rack_of[s] = rack
        used += need
    racks = rack + 1
    per_row = layout.racks_per_row or max(1, math.ceil(math.sqrt(racks)))
    return Placement(rack_of, racks, per_row)


def cable_lengths(network: CostNetwork, layout: Layout, placement: Placement) -> FloatArray:
    """Length in metres of every switch-to-switch cable, in `network.edges` order."""
    if len(network.edges) == 0:
        return np.zeros(0)
    rack_a = placement.rack_of_switch[network.edges[:, 0]]
    rack_b = placement.rack_of_switch[network.edges[:, 1]]
    per_row = placement.racks_per_row
    across = np.abs(rack_a % per_row - rack_b % per_row) * layout.rack_width_m
    between = np.abs(rack_a // per_row - rack_b // per_row) * layout.row_pitch_m
    return np.where(rack_a == rack_b, layout.intra_rack_m, across + between + layout.slack_m)
