"""containerlab output: every emitted topology is complete, and validates against
containerlab's own schema where that schema is at hand (tests marked `clab_schema`; see
conftest.py for where it is looked for and how its absence is reported)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from conftest import clab_schema_path
from lab_fixtures import compiled_lab_output, has_rendered_configs

from fatpaths_cfg.compiled import load_compiled
from fatpaths_cfg.lab.clab import ClabImages, write_clab
from fatpaths_cfg.platforms import PLATFORMS

REPO = Path(__file__).resolve().parent.parent
IMAGES = ClabImages(
    frr="example/frr:1", host="example/host:1", sonic="example/sonic:1", ceos="example/ceos:1"
)


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft7Validator:
    schema = clab_schema_path()
    assert schema.is_file(), f"containerlab schema missing: {schema}"
    # No check_schema: its port patterns use \p{...} classes Python's `re` lacks; the parts
    # our files use are plain patterns and enums.
    return jsonschema.Draft7Validator(json.loads(schema.read_text()))


def mixed_inventory(tmp_path: Path) -> Path:
    """hand-6 with one switch per platform the emitter knows."""
    data = yaml.safe_load((REPO / "inventories" / "hand-6.yaml").read_text())
    for switch, platform in zip(
        data["switches"], ["frr", "eos", "sonic", "linux", "frr", "eos"], strict=True
    ):
        switch["platform"] = platform
    path = tmp_path / "mixed.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def emit(inventory: Path, out: Path, images: ClabImages) -> tuple[Path, dict[str, Any]]:
    compiled_lab_output(inventory, out)
    path = write_clab(out, images)
    return path, yaml.safe_load(path.read_text())


def inventory_path(inventory: str, tmp_path: Path) -> Path:
    return mixed_inventory(tmp_path) if inventory == "mixed" else REPO / "inventories" / inventory


@pytest.mark.clab_schema
@pytest.mark.parametrize("inventory", ["hand-6.yaml", "slimfly-q3.yaml", "mixed"])
def test_emitted_topology_validates(
    inventory: str, tmp_path: Path, validator: jsonschema.Draft7Validator
) -> None:
    _, topo = emit(inventory_path(inventory, tmp_path), tmp_path / "out", IMAGES)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(topo)]
    assert not errors, errors


@pytest.mark.parametrize("inventory", ["hand-6.yaml", "slimfly-q3.yaml", "mixed"])
def test_emitted_topology_is_complete(inventory: str, tmp_path: Path) -> None:
    path, topo = emit(inventory_path(inventory, tmp_path), tmp_path / "out", IMAGES)
    fabric = load_compiled(tmp_path / "out").fabric
    assert path == tmp_path / "out" / "lab" / f"{fabric.name}.clab.yml"
    nodes = topo["topology"]["nodes"]
    assert topo["topology"]["defaults"]["network-mode"] == "none"
    assert set(nodes) == {s.name for s in fabric.switches} | {h.name for h in fabric.hosts}
    wanted_image = {
        "frr": "example/frr:1",
        "linux": "example/host:1",
        "sonic": "example/sonic:1",
        "eos": "example/ceos:1",
    }
    for switch in fabric.switches:
        clab = PLATFORMS[switch.platform].clab
        assert clab is not None
        assert nodes[switch.name]["kind"] == clab.kind
        assert nodes[switch.name]["image"] == wanted_image[switch.platform]
    for host in fabric.hosts:
        assert nodes[host.name]["kind"] == "linux"
        assert nodes[host.name]["exec"] == ["sh /fatpaths/host.sh"]
    # One clab link per fabric link and host uplink, no interface used twice.
    endpoints = [e for link in topo["topology"]["links"] for e in link["endpoints"]]
    assert len(topo["topology"]["links"]) == len(fabric.links) + len(fabric.hosts)
    assert len(endpoints) == len(set(endpoints))
    assert all(len(e.split(":")[1]) <= 15 for e in endpoints)
    # Binds and startup configs point at compiled files (relative to the topology file).
    rendered = has_rendered_configs(tmp_path / "out")
    for node in nodes.values():
        sources = [b.split(":")[0] for b in node.get("binds", [])]
        sources += [node["startup-config"]] if "startup-config" in node else []
        for source_file in sources:
            if rendered or "/frr/" in source_file or "hosts/" in source_file:
                assert (path.parent / source_file).is_file(), source_file


def test_ceos_and_sonic_interface_names(tmp_path: Path) -> None:
    _, topo = emit(mixed_inventory(tmp_path), tmp_path / "out", ClabImages())
    ends = {e for link in topo["topology"]["links"] for e in link["endpoints"]}
    assert "leaf1:Ethernet1" in ends  # frr: the kernel name of the port
    assert "leaf2:eth1" in ends  # cEOS: Ethernet1 -> eth1
    assert "leaf3:eth2" in ends  # sonic-vs: the second front-panel port -> eth2
    assert "h1a:eth0" in ends


@pytest.mark.clab_schema
def test_a_wrong_field_is_caught(tmp_path: Path, validator: jsonschema.Draft7Validator) -> None:
    """The schema check is not vacuous: a bridged management network is rejected."""
    _, topo = emit(REPO / "inventories" / "hand-6.yaml", tmp_path / "out", ClabImages())
    topo["topology"]["nodes"]["leaf1"]["kind"] = "frr"
    assert list(validator.iter_errors(topo))


def compiled_topology(tmp_path: Path) -> tuple[str, dict[str, Any]]:
    out = compiled_lab_output(mixed_inventory(tmp_path), tmp_path / "out")
    fabric = load_compiled(out).fabric
    topo = yaml.safe_load((out / "lab" / f"{fabric.name}.clab.yml").read_text())
    return fabric.switches[0].name, topo


@pytest.mark.clab_schema
def test_compile_writes_a_valid_topology(
    tmp_path: Path, validator: jsonschema.Draft7Validator
) -> None:
    _, topo = compiled_topology(tmp_path)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(topo)]
    assert not errors, errors


def test_compile_writes_default_images_and_no_management_network(tmp_path: Path) -> None:
    first_switch, topo = compiled_topology(tmp_path)
    assert topo["topology"]["nodes"][first_switch]["image"] == ClabImages().frr
    # `network: none` names Docker's built-in network, which containerlab cannot attach to.
    assert topo["mgmt"] == {"skip-when-unused": True}


def test_lab_images_are_tagged_as_the_topology_names_them_and_hash_their_recipe() -> None:
    from dataclasses import replace

    from fatpaths_cfg.lab.images import recipes

    switch, host = recipes()
    assert (switch.tag, host.tag) == (ClabImages().frr, ClabImages().host)
    assert {"frr", "frr-pythontools", "iproute2", "lldpd", "openssh-server"} <= set(switch.packages)
    assert {"iproute2", "iputils-ping", "traceroute", "python3-minimal"} <= set(host.packages)
    # Same recipe, same hash (no rebuild); any change to it, a new one.
    assert recipes()[0].digest == switch.digest
    assert replace(switch, packages=(*switch.packages, "tcpdump")).digest != switch.digest
    assert replace(switch, start=switch.start + "\n").digest != switch.digest
    assert replace(switch, suite="trixie").digest != switch.digest


def test_rewriting_the_topology_refuses_one_fatpaths_did_not_write(tmp_path: Path) -> None:
    from fatpaths_cfg import api
    from fatpaths_cfg.errors import UserErrors

    out = tmp_path / "out"
    api.compile_to_directory(Path(__file__).parent.parent / "inventories" / "hand-6.yaml", out)
    written = write_clab(out, ClabImages(frr="mine/frr:1"))
    assert "mine/frr:1" in written.read_text(encoding="utf-8")
    written.write_text("# the user's own topology\n", encoding="utf-8")
    with pytest.raises(UserErrors, match="exists and was not written by fatpaths"):
        write_clab(out, ClabImages())
    assert written.read_text(encoding="utf-8") == "# the user's own topology\n"
    write_clab(out, ClabImages(), force=True)
    assert "written by fatpaths" in written.read_text(encoding="utf-8")
