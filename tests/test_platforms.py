"""The platform registry: every descriptor is complete, and a new platform is one descriptor.

The throwaway platform below is registered the way a new module of `fatpaths_cfg.platforms`
would be, with its templates in a folder of its own; no other module learns of it, yet the
schema accepts it, compile renders it and verify reads it back.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.cli import build_app
from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.inventory.json_schema import inventory_json_schema
from fatpaths_cfg.inventory.load import load_inventory
from fatpaths_cfg.lab.clab import ClabImages
from fatpaths_cfg.platforms import PLATFORMS, Platform, SwitchFile, resolve
from fatpaths_cfg.platforms.descriptor import READERS, Limits, Snapshot
from fatpaths_cfg.verify.run import verify_output

REPO = Path(__file__).resolve().parent.parent
HAND6 = REPO / "inventories" / "hand-6.yaml"
TOY = "toyos"
# Its own route syntax file, in FRR statements (so the FRR route reader reads it back), and an
# interfaces script that includes a template of the shared root.
ROUTES_TEMPLATE = """\
! {{ view.name }}: toyos layer routes
{% for layer in view.layers %}
! layer {{ layer.number }}
{% if layer.routes_v4 %}
{{ layer.routes_v4 | route_lines("ip route %s %s") }}
{% endif %}
{% if layer.routes_v6 %}
{{ layer.routes_v6 | route_lines("ipv6 route %s %s") }}
{% endif %}
{% endfor %}
"""
INTERFACES_TEMPLATE = """\
#!/bin/sh
set -e
{% include "linux/interfaces_body.sh.j2" %}
"""


def toy_platform(folder: Path) -> Platform:
    (folder / "routes.j2").write_text(ROUTES_TEMPLATE, encoding="utf-8")
    (folder / "interfaces.sh.j2").write_text(INTERFACES_TEMPLATE, encoding="utf-8")
    return Platform(
        name=TOY,
        summary="a platform that exists only in this test",
        files=(
            SwitchFile("{switch}/routes.conf", f"{READERS}:read_frr_routes", template="routes.j2"),
            SwitchFile(
                "{switch}/interfaces.sh",
                f"{READERS}:read_iproute2_addresses",
                template="interfaces.sh.j2",
            ),
        ),
        encodings=("prefix",),
        limits=Limits(routes=10_000, vlans=0, static_macs=0),
        kernel=True,
        snapshot=Snapshot(folder=None, model="sonic"),
        templates=folder,
    )


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Platform:
    folder = tmp_path / "templates"
    folder.mkdir()
    platform = toy_platform(folder)
    monkeypatch.setitem(PLATFORMS, TOY, platform)
    return platform


def toy_inventory(tmp_path: Path) -> Path:
    data = yaml.safe_load(HAND6.read_text(encoding="utf-8"))
    data["defaults"]["platform"] = TOY
    path = tmp_path / "toy.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_an_unregistered_platform_is_refused_by_the_schema(tmp_path: Path) -> None:
    with pytest.raises(UserErrors) as caught:
        load_inventory(toy_inventory(tmp_path))
    (error,) = caught.value.errors
    assert error.field == "defaults.platform"
    assert f"got '{TOY}'" in error.message and "'frr'" in error.message


def test_a_registered_descriptor_is_a_platform_of_every_stage(
    toy: Platform, tmp_path: Path
) -> None:
    inventory = toy_inventory(tmp_path)
    enum = inventory_json_schema()["$defs"]["Defaults"]["properties"]["platform"]["enum"]
    assert enum == [*PLATFORMS] and TOY in enum

    compiled = api.compile_fabric(inventory)
    assert {s.platform for s in compiled.fabric.switches} == {TOY}
    out = tmp_path / "out"
    api.build_output(compiled, batfish=True).commit(out)
    routes = (out / "configs" / TOY / "leaf1" / "routes.conf").read_text(encoding="utf-8")
    assert routes.startswith("! leaf1: toyos layer routes\n")
    assert "ip route " in routes
    script = (out / "configs" / TOY / "leaf1" / "interfaces.sh").read_text(encoding="utf-8")
    assert "ip addr replace " in script
    # Batfish reads it as its model, SONiC; containerlab cannot run it, so no topology.
    assert (out / "batfish" / "sonic_configs" / "leaf1" / "config_db.json").is_file()
    assert not (out / "lab").exists()

    report = verify_output(out)
    (check,) = report.checks
    assert check.platform == TOY
    assert [str(f) for f in check.findings] == []
    nr = len(compiled.fabric.switches)
    assert check.walks == len(compiled.layers) * nr * (nr - 1)
    assert check.routes > 0 and check.host_addresses > 0


def test_a_registered_descriptor_is_a_cli_choice(toy: Platform, tmp_path: Path) -> None:
    out = tmp_path / "out"
    runner = CliRunner()
    result = runner.invoke(build_app(), ["compile", str(HAND6), "-o", str(out), "--platform", TOY])
    assert result.exit_code == 0, result.output
    assert (out / "configs" / TOY / "leaf2" / "routes.conf").is_file()
    report = tmp_path / "report"
    args = ["verify", str(out), "--platform", TOY, "--report", str(report)]
    result = runner.invoke(build_app(), args)
    assert result.exit_code == 0, result.output
    data = json.loads((report / "report.json").read_text(encoding="utf-8"))
    assert data["ok"] and [f["platform"] for f in data["forwarding"]] == [TOY]


@pytest.mark.parametrize("name", list(PLATFORMS))
def test_every_descriptor_names_what_exists(name: str) -> None:
    platform = PLATFORMS[name]
    assert platform.name == name
    for file in platform.files:
        assert "{switch}" in file.path
        assert callable(resolve(file.reader))
        if file.builder is not None:
            assert callable(resolve(file.builder))
        else:
            assert file.template is not None
            assert (platform.template_folder / file.template).is_file()
    paths = {file.path for file in platform.files}
    model = platform.snapshot.model
    if platform.snapshot.folder is None:
        assert model in PLATFORMS and PLATFORMS[model].snapshot.folder is not None
        assert set(platform.snapshot.shared) <= paths & {f.path for f in PLATFORMS[model].files}
    if platform.clab is not None:
        assert callable(platform.clab.ifname)
        assert ClabImages().tag(platform.clab.image)
        assert {own for own, _ in platform.clab.binds} <= paths
    if platform.netns is not None:
        assert platform.netns.script in paths
        assert platform.netns.frr_conf is None or platform.netns.frr_conf in paths
    if platform.deploy is not None:
        assert ":" not in platform.deploy.driver or isinstance(
            resolve(platform.deploy.driver), type
        )
        candidate = platform.deploy.candidate
        assert candidate in paths or any(p.startswith(candidate + "/") for p in paths)
