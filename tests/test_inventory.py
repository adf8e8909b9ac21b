"""Inventory loading details not covered by the golden error cases."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.cli import build_app
from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.inventory.json_schema import inventory_json_schema, inventory_json_schema_text
from fatpaths_cfg.inventory.load import load_inventory

REPO = Path(__file__).resolve().parent.parent


def test_committed_json_schema_is_current() -> None:
    committed = (REPO / "inventories" / "inventory.schema.json").read_text(encoding="utf-8")
    assert committed == inventory_json_schema_text(), (
        "run: fatpaths schema -o inventories/inventory.schema.json"
    )


def test_every_example_inventory_matches_the_json_schema() -> None:
    schema = inventory_json_schema()
    for path in sorted((REPO / "inventories").glob("*.yaml")):
        jsonschema.validate(yaml.safe_load(path.read_text()), schema)


def test_json_schema_rejects_unknown_keys() -> None:
    schema = inventory_json_schema()
    bad = {"fabric": "x", "switches": [{"name": "a", "colour": "red"}]}
    try:
        jsonschema.validate(bad, schema)
    except jsonschema.ValidationError as exc:
        assert "colour" in exc.message
    else:
        raise AssertionError("unknown key accepted")


def test_lines_point_at_the_offending_value(tmp_path: Path) -> None:
    inventory = tmp_path / "inv.yaml"
    inventory.write_text("fabric: f\nswitches:\n  - name: a\n  - name: b\n    ports: 3\n")
    loaded = load_inventory(inventory)
    assert loaded.source.line_of(("switches", 1, "ports")) == 5
    assert loaded.source.line_of(("switches", 1, "name")) == 4


def test_long_port_names_shortened_to_one_kernel_name_are_refused(tmp_path: Path) -> None:
    # Both names exceed 15 characters and their shortened forms share the 4-digit hash.
    first, second = "HundredGigE1/0/230", "HundredGigE1/0/251"
    inventory = tmp_path / "inv.yaml"
    inventory.write_text(
        "fabric: f\nswitches:\n  - name: a\n  - name: b\n  - name: c\nlinks:\n"
        f"  - {{a: 'a:{first}', b: 'b:Ethernet1'}}\n"
        f"  - {{a: 'a:{second}', b: 'c:Ethernet1'}}\n"
        "  - {a: 'b:Ethernet2', b: 'c:Ethernet2'}\n"
    )
    with pytest.raises(UserErrors) as caught:
        api.load_fabric(inventory)
    (error,) = caught.value.errors
    assert (error.line, error.field) == (8, "links[1].a")
    assert first in error.message and second in error.message and "line 7" in error.message
    assert "'HundredGig_3767'" in error.message


def test_topo_show_reports_slimfly_q19_closed_forms(tmp_path: Path) -> None:
    inventory = tmp_path / "q19.yaml"
    inventory.write_text("fabric: q19\ngenerate: {kind: slimfly, q: 19}\n")
    result = CliRunner().invoke(build_app(), ["topo", "show", str(inventory), "--json"])
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout)
    assert stats["switches (Nr)"] == 722
    assert stats["network radix k' (max)"] == 29 == stats["network radix k' (min)"]
    assert stats["hosts (N)"] == 722 * 15
    assert stats["diameter"] == 2


def test_topo_generate_writes_an_inventory_that_compiles(tmp_path: Path) -> None:
    out = tmp_path / "mlfm.yaml"
    runner = CliRunner()
    result = runner.invoke(build_app(), ["topo", "generate", "mlfm", "-p", "h=3", "-o", str(out)])
    assert result.exit_code == 0, result.output
    data = yaml.safe_load(out.read_text())
    assert len(data["switches"]) == 18 and len(data["hosts"]) == 36
    result = runner.invoke(build_app(), ["compile", str(out), "-o", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "o" / "fabric.json").is_file()


def test_topo_generate_bad_parameter_exits_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        build_app(), ["topo", "generate", "slimfly", "-p", "q=6", "-o", str(tmp_path / "x.yaml")]
    )
    assert result.exit_code == 2
    assert "q=6 is not a prime power" in result.stderr
    assert not (tmp_path / "x.yaml").exists()
