"""Goldens of the IR: `fabric.json` and every switch's structured view, per feature.

The rendered goldens (test_render.py) show what a template change does; these show what a
change to the compiler core does before any template sees it: layers, addresses, deadlock
verdicts, route counts, and per switch the ports, addresses and routes its config is made of.
After an intended change, regenerate with

    FATPATHS_UPDATE_GOLDEN=1 python -m pytest tests/test_ir_golden.py

and review the diff before committing.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path

import pytest

from fatpaths_cfg import api
from fatpaths_cfg.render.routes import RouteTable
from fatpaths_cfg.render.switch_view import ViewBuilder
from fatpaths_cfg.support.output import dumps_json_records

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
# One small fabric per feature the compiler core handles differently.
IR_CASES = {
    "hand6": ROOT / "inventories" / "hand-6.yaml",
    "hand6-v6": GOLDEN / "hand6-v6.yaml",
    "hand6-dual": GOLDEN / "hand6-dual.yaml",
    "hand6-vlan": GOLDEN / "hand6-vlan.yaml",
    "hand6-ecmp": GOLDEN / "hand6-ecmp.yaml",
    "hand6-acyclic": GOLDEN / "hand6-acyclic.yaml",
    "hand6-lfa": GOLDEN / "hand6-lfa.yaml",
}


def ir_files(inventory: Path) -> dict[str, str]:
    compiled = api.compile_fabric(inventory)
    files = {"fabric.json": dumps_json_records(compiled.to_json())}
    builder = ViewBuilder(compiled, compiled.address_plan)
    for switch in compiled.fabric.switches:
        view = dataclasses.asdict(builder.view(switch.index, switch.platform))
        if compiled.routing.backup is None:
            # Views of fabrics without backup routes stay as they were before backups existed.
            del view["backup_distance"]
            for layer in view["layers"]:
                del layer["backup_v4"], layer["backup_v6"]
        text = json.dumps(view, indent=1, default=_route_table_json)
        files[f"views/{switch.name}.json"] = text + "\n"
    return files


def _route_table_json(value: object) -> dict[str, list[str]]:
    """A route table as the two string lists templates read from it."""
    if not isinstance(value, RouteTable):
        raise TypeError(f"{type(value).__name__} in a switch view")
    return {"prefixes": value.prefixes, "next_hops": value.next_hops}


@pytest.mark.parametrize("case", sorted(IR_CASES))
def test_ir_golden(case: str) -> None:
    files = ir_files(IR_CASES[case])
    folder = GOLDEN / "ir" / case
    if os.environ.get("FATPATHS_UPDATE_GOLDEN") == "1":
        shutil.rmtree(folder, ignore_errors=True)
        for relative, text in files.items():
            (folder / relative).parent.mkdir(parents=True, exist_ok=True)
            (folder / relative).write_text(text, encoding="utf-8")
    stored = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert stored == set(files), "IR file set changed; see the module docstring"
    for relative, text in sorted(files.items()):
        assert (folder / relative).read_text(encoding="utf-8") == text, relative


def test_features_really_differ_in_the_ir() -> None:
    """The per-feature cases are not copies of hand6: each changes what it says it changes."""
    base = json.loads(ir_files(IR_CASES["hand6"])["fabric.json"])
    v6 = json.loads(ir_files(IR_CASES["hand6-v6"])["fabric.json"])
    ecmp = json.loads(ir_files(IR_CASES["hand6-ecmp"])["fabric.json"])
    acyclic = json.loads(ir_files(IR_CASES["hand6-acyclic"])["fabric.json"])
    for address in v6["addressing"]["hosts"][0]["addresses"]:
        assert address["v4"] is None and ":" in address["v6"]
    assert sum(s["layer_routes"] for s in ecmp["switches"]) > sum(
        s["layer_routes"] for s in base["switches"]
    )
    assert all(layer["up_down_rank"] is not None for layer in acyclic["layers"])
    assert all(layer["deadlock_free"] for layer in acyclic["layers"])
