"""Layers and next hops carried over from an earlier compile (`compile --keep-layers OLD`).

The global, greedy algorithms (overlap, SPAIN, PAST, k-shortest) choose every layer from the
whole fabric at once, so one changed cable can move many of their links. Carrying the old layers
over keeps them as they were: a cable that left the fabric leaves its layers, a new cable joins
layer n when its name's draw for n falls below rho (the random layers' rule), and a layer that
no longer connects every switch is completed by the fewest cables (`build_layers`). The old next
hops are carried too: one still among the shortest wins its tie, so a change moves only the
routes that must move, whatever cable came or went.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fatpaths_cfg.compiled import EARLIER_SCHEMAS, LoadedCompiled, load_compiled
from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.layers import layer_draws, seeded_keys

if TYPE_CHECKING:
    from fatpaths_cfg.fabric import Fabric
    from fatpaths_cfg.inventory.schema import RoutingSpec


# What a compile keeps of an earlier one: its layers, switch numbers and next hops.
EarlierCompile = LoadedCompiled


def cable_key(a_switch: str, a_port: str, b_switch: str, b_port: str) -> tuple[str, str]:
    """A cable's identity: its two `switch:port` ends, sorted."""
    ends = sorted((f"{a_switch}:{a_port}", f"{b_switch}:{b_port}"))
    return ends[0], ends[1]


def _fail(where: Path, field: str, message: str, hint: str = "") -> UserErrors:
    return UserErrors.single(str(where), field, message, hint)


def read_earlier(old: Path) -> EarlierCompile:
    """An earlier output (schema 1 or 2), checked; UserErrors when it is not one."""
    return load_compiled(
        old,
        "--keep-layers",
        "give the output directory of an earlier `fatpaths compile`",
        EARLIER_SCHEMAS,
    )


def _old_layers(earlier: EarlierCompile) -> tuple[list[tuple[str, str]], list[set[Any]]]:
    """The earlier fabric's cables and its sparse layers (2..n), each as a set of cables."""
    names = earlier.fabric.switches
    cables = [
        cable_key(names[c.a].name, c.a_port, names[c.b].name, c.b_port)
        for c in earlier.fabric.links
    ]
    layers = [{cables[int(i)] for i in layer.links} for layer in earlier.layers]
    return cables, layers[1:]


def kept_next_hops(earlier: EarlierCompile, fabric: Fabric) -> np.ndarray:
    """The earlier compile's next hops in this fabric's numbering ([layer, switch,
    destination], -1 where a switch, its destination or its next hop is not in this fabric)."""
    next_hop = earlier.next_hop  # checked by the reader: ids in range, the fabric's shape
    names = [s.name for s in earlier.fabric.switches]
    here = fabric.switch_index
    # Old index -> this fabric's index; the last slot maps -1 to -1.
    to_new = np.array([here.get(n, -1) for n in names] + [-1], dtype=np.int64)
    mapped = to_new[next_hop]
    rows = np.array([here.get(n, -1) for n in names], dtype=np.int64)
    kept = rows >= 0
    prefer = np.full((next_hop.shape[0], fabric.nr, fabric.nr), -1, dtype=np.int32)
    prefer[:, rows[kept][:, None], rows[kept][None, :]] = mapped[:, kept][:, :, kept]
    return prefer


def earlier_numbers(earlier: EarlierCompile) -> dict[str, tuple[int, int]]:
    """Each switch's (number, number in its plane) in the earlier address plan; an output of
    schema 1 numbered them densely, by position."""
    plan = earlier.addresses
    switches = earlier.fabric.switches
    seen: dict[int, int] = {}
    numbers = {}
    for index, switch in enumerate(switches):
        local = plan.locals[index] if plan is not None else None
        if local is None:
            local = seen.get(switch.plane, 0)
        seen[switch.plane] = seen.get(switch.plane, 0) + 1
        number = plan.numbers[index] if plan is not None else index
        numbers[switch.name] = (number, local)
    return numbers


def kept_routing(
    earlier: EarlierCompile, fabric: Fabric, spec: RoutingSpec, seed: int
) -> tuple[list[np.ndarray], np.ndarray]:
    """Masks over `fabric.links` of the sparse layers to keep (new cables joined by the rule),
    and the next hops to prefer."""
    fabric_file = earlier.fabric_file
    if earlier.name != fabric.name:
        raise _fail(
            fabric_file,
            "name",
            f"is fabric {earlier.name!r}, not {fabric.name!r}",
            "keep the layers of an earlier compile of the same fabric",
        )
    old_cables, layers = _old_layers(earlier)
    if len(layers) != spec.layers - 1:
        raise _fail(
            fabric_file,
            "layers",
            f"has {len(layers) + 1} layers, the inventory asks for {spec.layers}",
            "keep layers only with the same routing.layers, or compile without --keep-layers",
        )
    names = fabric.switches
    cables = [cable_key(names[c.a].name, c.a_port, names[c.b].name, c.b_port) for c in fabric.links]
    known = set(old_cables)
    new = np.array([c not in known for c in cables], dtype=bool)
    keys = seeded_keys(fabric.link_keys, seed)
    masks = []
    for number, members in enumerate(layers, 2):
        mask = np.fromiter((c in members for c in cables), dtype=bool, count=len(cables))
        mask |= new & (layer_draws(keys, number) < spec.rho)
        masks.append(mask)
    return masks, kept_next_hops(earlier, fabric)
