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

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fatpaths_cfg.compiled import read_output_tables
from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.layers import layer_draws, seeded_keys

if TYPE_CHECKING:
    from fatpaths_cfg.fabric import Fabric
    from fatpaths_cfg.inventory.schema import RoutingSpec


@dataclass(frozen=True)
class EarlierCompile:
    """What a compile keeps of an earlier one: its fabric.json data and its next hops."""

    where: Path  # the output directory, for messages
    data: dict[str, Any]
    next_hop: np.ndarray  # [layer, switch, destination] in the earlier numbering


def cable_key(a_switch: str, a_port: str, b_switch: str, b_port: str) -> tuple[str, str]:
    """A cable's identity: its two `switch:port` ends, sorted."""
    ends = sorted((f"{a_switch}:{a_port}", f"{b_switch}:{b_port}"))
    return ends[0], ends[1]


def _fail(where: Path, field: str, message: str, hint: str = "") -> UserErrors:
    return UserErrors.single(str(where), field, message, hint)


def read_earlier(old: Path) -> EarlierCompile:
    """An earlier output's fabric.json and routing.npz; UserErrors when it is not one."""
    data, tables = read_output_tables(
        old,
        "--keep-layers",
        "give the output directory of an earlier `fatpaths compile`",
        ("next_hop",),
    )
    return EarlierCompile(old, data, tables["next_hop"])


def _old_layers(earlier: EarlierCompile) -> tuple[list[tuple[str, str]], list[set[Any]]]:
    """The earlier fabric's cables and its sparse layers (2..n), each as a set of cables."""
    fabric_file = earlier.where / "fabric.json"
    try:
        cables = [
            cable_key(li["a"]["switch"], li["a"]["port"], li["b"]["switch"], li["b"]["port"])
            for li in earlier.data["links"]
        ]
        layers = [
            {cables[int(i)] for i in layer["links"]}
            for layer in sorted(earlier.data["layers"], key=lambda layer: int(layer["id"]))
        ]
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise _fail(fabric_file, "layers", f"damaged links or layers ({exc!r})") from None
    return cables, layers[1:]


def kept_next_hops(earlier: EarlierCompile, fabric: Fabric) -> np.ndarray:
    """The earlier compile's next hops in this fabric's numbering ([layer, switch,
    destination], -1 where a switch, its destination or its next hop is not in this fabric)."""
    npz = earlier.where / "routing.npz"
    next_hop = earlier.next_hop
    try:
        names = [str(s["name"]) for s in earlier.data["switches"]]
    except (KeyError, TypeError) as exc:
        raise _fail(earlier.where / "fabric.json", "switches", f"damaged ({exc!r})") from None
    if next_hop.ndim != 3 or next_hop.shape[1:] != (len(names), len(names)):
        raise _fail(npz, "next_hop", f"shape {next_hop.shape} does not fit {len(names)} switches")
    if not np.issubdtype(next_hop.dtype, np.integer):
        raise _fail(npz, "next_hop", f"dtype {next_hop.dtype} is not an integer type")
    here = fabric.switch_index
    # Old index -> this fabric's index; the last slot maps -1 (and out-of-range ids) to -1.
    to_new = np.array([here.get(n, -1) for n in names] + [-1], dtype=np.int64)
    mapped = to_new[np.where((next_hop >= 0) & (next_hop < len(names)), next_hop, -1)]
    rows = np.array([here.get(n, -1) for n in names], dtype=np.int64)
    kept = rows >= 0
    prefer = np.full((next_hop.shape[0], fabric.nr, fabric.nr), -1, dtype=np.int32)
    prefer[:, rows[kept][:, None], rows[kept][None, :]] = mapped[:, kept][:, :, kept]
    return prefer


def earlier_numbers(earlier: EarlierCompile) -> dict[str, tuple[int, int]]:
    """Each switch's (number, number in its plane) in the earlier address plan; an output of
    schema 1 numbered them densely, by position."""
    try:
        switches = earlier.data["switches"]
        entries = earlier.data["addressing"]["switches"]
        seen: dict[int, int] = {}
        numbers = {}
        for index, (switch, entry) in enumerate(zip(switches, entries, strict=True)):
            plane = int(switch.get("plane", 0))
            local = entry.get("local")
            if local is None:
                local = seen.get(plane, 0)
            seen[plane] = seen.get(plane, 0) + 1
            numbers[str(switch["name"])] = (int(entry.get("number", index)), int(local))
    except (KeyError, TypeError, ValueError) as exc:
        raise _fail(earlier.where / "fabric.json", "addressing", f"damaged ({exc!r})") from None
    return numbers


def kept_routing(
    earlier: EarlierCompile, fabric: Fabric, spec: RoutingSpec, seed: int
) -> tuple[list[np.ndarray], np.ndarray]:
    """Masks over `fabric.links` of the sparse layers to keep (new cables joined by the rule),
    and the next hops to prefer."""
    fabric_file = earlier.where / "fabric.json"
    if earlier.data.get("name") != fabric.name:
        raise _fail(
            fabric_file,
            "name",
            f"is fabric {earlier.data.get('name')!r}, not {fabric.name!r}",
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
