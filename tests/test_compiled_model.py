"""One compiled model: what an output reads back as is what the compile in memory gives."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from compiled_edit import rewrite_fabric_json
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.cli import build_app
from fatpaths_cfg.compiled import CHECKSUMS, LoadedCompiled, load_compiled, view_of
from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.sim.network import load_network, network_of
from fatpaths_cfg.support.output import OUTPUT_MARKER

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
# Every feature the model carries differently: dual stack, VLANs, ECMP, up*/down*, backups,
# two planes.
CASES = {
    "hand6": ROOT / "inventories" / "hand-6.yaml",
    "hand6-dual": GOLDEN / "hand6-dual.yaml",
    "hand6-vlan": GOLDEN / "hand6-vlan.yaml",
    "hand6-ecmp": GOLDEN / "hand6-ecmp.yaml",
    "hand6-acyclic": GOLDEN / "hand6-acyclic.yaml",
    "hand6-lfa": GOLDEN / "hand6-lfa.yaml",
    "hand-2planes": ROOT / "inventories" / "hand-2planes.yaml",
}


def _same(read: LoadedCompiled, built: LoadedCompiled) -> None:
    # The inventory positions of the switches stay with the inventory; all else is the model.
    assert read.fabric.switches == built.fabric.switches
    assert read.fabric.links == built.fabric.links
    assert read.fabric.hosts == built.fabric.hosts
    assert read.fabric.origin == built.fabric.origin
    assert (read.schema, read.inventory, read.seed) == (built.schema, built.inventory, built.seed)
    assert (read.ecmp, read.backup_mode) == (built.ecmp, built.backup_mode)
    assert len(read.layers) == len(built.layers)
    for ours, theirs in zip(read.layers, built.layers, strict=True):
        assert ours.links.tolist() == theirs.links.tolist()
        assert (ours.number, ours.algorithm, ours.ecmp, ours.up_down_rank) == (
            theirs.number,
            theirs.algorithm,
            theirs.ecmp,
            theirs.up_down_rank,
        )
        assert (ours.deadlock_free, ours.completed_links) == (
            theirs.deadlock_free,
            theirs.completed_links,
        )
    assert read.addresses == built.addresses
    for name in ("dist", "next_hop"):
        found, wanted = getattr(read, name), getattr(built, name)
        assert found.dtype == wanted.dtype and np.array_equal(found, wanted)
    assert (read.backup is None) == (built.backup is None)
    if read.backup is not None and built.backup is not None:
        assert np.array_equal(read.backup, built.backup)


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_output_reads_back_as_the_compile_in_memory(name: str, tmp_path: Path) -> None:
    compiled = api.compile_fabric(CASES[name])
    api.build_output(compiled).commit(tmp_path / "out")
    read, built = load_compiled(tmp_path / "out"), view_of(compiled)
    _same(read, built)
    # The simulator builds the same network from either.
    from_disk, in_memory = load_network(tmp_path / "out"), network_of(built)
    for field in ("switch_names", "host_names", "multipath"):
        assert getattr(from_disk, field) == getattr(in_memory, field)
    for field in ("host_switch", "link_a", "link_b", "link_gbps", "host_gbps", "layer_links"):
        assert np.array_equal(getattr(from_disk, field), getattr(in_memory, field)), field
    assert (from_disk.host_uplinks is None) == (in_memory.host_uplinks is None)
    if from_disk.host_uplinks is not None and in_memory.host_uplinks is not None:
        assert np.array_equal(from_disk.host_uplinks, in_memory.host_uplinks)


def test_compile_records_the_checksums_the_loader_checks(tmp_path: Path) -> None:
    out = tmp_path / "out"
    api.compile_to_directory(CASES["hand6"], out)
    lines = (out / CHECKSUMS).read_text().splitlines()
    import hashlib

    assert lines == [
        f"{hashlib.sha256((out / name).read_bytes()).hexdigest()}  {name}"
        for name in ("fabric.json", "routing.npz")
    ]
    assert CHECKSUMS in (out / OUTPUT_MARKER).read_text().splitlines()
    # A value changed by hand, well formed: only the checksum can tell, and it does.
    data = json.loads((out / "fabric.json").read_text())
    data["links"][0]["speed_gbps"] = 40.0
    (out / "fabric.json").write_text(json.dumps(data))
    with pytest.raises(UserErrors, match="sha256 differs from the one compile recorded"):
        load_compiled(out)
    # Recorded again (what the tests' deliberate edits do), the edit is what is read.
    rewrite_fabric_json(out, data)
    assert load_compiled(out).fabric.links[0].speed_gbps == 40.0


def test_an_output_from_before_checksums_is_read_with_the_structural_checks(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    api.compile_to_directory(CASES["hand6"], out)
    (out / CHECKSUMS).unlink()
    marker = out / OUTPUT_MARKER
    marker.write_text(
        "".join(f"{line}\n" for line in marker.read_text().splitlines() if line != CHECKSUMS)
    )
    assert load_compiled(out).fabric.name == "hand6"
    data = json.loads((out / "fabric.json").read_text())
    data["layers"][1]["links"] = [0, 99]
    (out / "fabric.json").write_text(json.dumps(data))
    with pytest.raises(UserErrors, match=r"layers\[1\]\.links: link 99 is out of range"):
        load_compiled(out)


def _as_schema_1(out: Path) -> None:
    """An output as fatpaths wrote it under schema 1: no switch numbers, no checksums."""
    data = json.loads((out / "fabric.json").read_text())
    data["schema"] = "fatpaths.fabric/1"
    for entry in data["addressing"]["switches"]:
        del entry["number"], entry["local"]
    (out / "fabric.json").write_text(json.dumps(data))
    (out / CHECKSUMS).unlink()
    (out / OUTPUT_MARKER).unlink()


def test_plan_reads_a_schema_1_output_through_the_same_loader(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    api.compile_to_directory(CASES["hand6"], old)
    api.compile_to_directory(CASES["hand6"], new)
    _as_schema_1(old)
    result = CliRunner().invoke(build_app(), ["plan", str(old), str(new), "--no-check"])
    assert result.exit_code == 0, result.output
    assert "routes" in result.output
    # The other commands read the current schema only.
    refused = CliRunner().invoke(build_app(), ["analyze", str(old)])
    assert refused.exit_code == 2
    assert "unsupported schema 'fatpaths.fabric/1'" in refused.stderr
