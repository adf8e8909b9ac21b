"""The cumulus, junos and nxos platforms: vendor port names, refused encodings, the Batfish
snapshot layout. (Their configs are proved by Batfish in test_batfish.py and read back by the
checker in test_verify_mutations.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fatpaths_cfg import api
from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.platforms.cumulus import PORTS as CUMULUS_PORTS
from fatpaths_cfg.platforms.junos import PORTS as JUNOS_PORTS
from fatpaths_cfg.platforms.nxos import PORTS as NXOS_PORTS

ROOT = Path(__file__).resolve().parent.parent
HAND6 = ROOT / "inventories" / "hand-6.yaml"
VLAN = Path(__file__).resolve().parent / "golden" / "hand6-vlan.yaml"
VENDORS = ("cumulus", "junos", "nxos")


@pytest.mark.parametrize(
    ("port", "cumulus", "junos", "nxos"),
    [
        ("Ethernet7", "swp7", "et-0/0/7", "Ethernet1/7"),
        ("Ethernet1/12", "swp1s12", "et-0/0/1:12", "Ethernet1/12"),
        ("swp3", "swp3", "et-0/0/3", "Ethernet1/3"),
        ("xe-0/0/4", None, "xe-0/0/4", "Ethernet0/0/4"),
        ("uplink", None, None, None),
    ],
)
def test_vendor_port_names(
    port: str, cumulus: str | None, junos: str | None, nxos: str | None
) -> None:
    assert CUMULUS_PORTS.name(port) == cumulus
    assert JUNOS_PORTS.name(port) == junos
    assert NXOS_PORTS.name(port) == nxos


def test_ports_that_share_or_lack_a_vendor_name_are_named() -> None:
    problems = CUMULUS_PORTS.problems(("Ethernet1", "eth1", "uplink", "swp2"))
    assert problems == [
        "ports 'Ethernet1' and 'eth1' both become cumulus port swp1",
        "port 'uplink' has no cumulus name (it needs 1 or 2 numbers)",
    ]


def test_a_fabric_with_unnameable_ports_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    inventory = tmp_path / "named.yaml"
    text = HAND6.read_text().replace("leaf1:Ethernet5", "leaf1:hostport")
    ports = "[Ethernet1, Ethernet2, Ethernet3, Ethernet4, hostport, Ethernet6]"
    inventory.write_text(text.replace("{name: leaf1, ports: 6,", f"{{name: leaf1, ports: {ports},"))
    compiled = api.compile_fabric(inventory)
    with pytest.raises(UserErrors) as caught:
        api.build_output(compiled, platforms=["junos"])
    error = caught.value.errors[0]
    assert len(caught.value.errors) == 1
    assert (
        error.message
        == "switch 'leaf1': port 'hostport' has no junos name (it needs 1 or 2 numbers)"
    )
    assert (error.file, error.line, error.field) == (str(inventory), 8, "switches[0].ports")
    # The same fabric renders where ports keep their names.
    assert api.build_output(compiled, platforms=["eos"]).files


@pytest.mark.parametrize("platform", VENDORS)
def test_vlan_encoding_is_refused_with_the_supported_encodings(platform: str) -> None:
    with pytest.raises(UserErrors) as caught:
        api.build_output(api.compile_fabric(VLAN), platforms=[platform])
    error = caught.value.errors[0]
    assert error.message == f"platform {platform} does not support the vlan encoding"
    assert error.field == "addressing.encoding"
    assert f"{platform} supports: prefix" in error.hint


@pytest.mark.parametrize(
    ("platform", "snapshot", "link_port", "host_port"),
    [
        ("cumulus", "batfish/configs/leaf1.cfg", "swp1", "swp5"),
        ("junos", "batfish/configs/leaf1.set", "et-0/0/1", "et-0/0/5"),
        ("nxos", "batfish/configs/leaf1.cfg", "Ethernet1/1", "Ethernet1/5"),
    ],
)
def test_the_snapshot_holds_the_vendor_file_and_wires_vendor_ports(
    platform: str, snapshot: str, link_port: str, host_port: str
) -> None:
    files = api.build_output(api.compile_fabric(HAND6), platforms=[platform], batfish=True).files
    assert snapshot in files
    assert not any(name.startswith("batfish/sonic_configs/") for name in files)
    edges = json.loads(files["batfish/batfish/layer1_topology.json"])["edges"]
    leaf1 = {e["node1"]["interfaceName"] for e in edges if e["node1"]["hostname"] == "leaf1"}
    assert {link_port, host_port} <= leaf1
    assert not any(port.startswith("Ethernet") and "/" not in port for port in leaf1)
    # Hosts keep their own uplink name.
    assert {e["node1"]["interfaceName"] for e in edges if e["node1"]["hostname"] == "h1a"} == {
        "eth0"
    }


def test_cumulus_snapshot_concatenates_the_device_files_in_batfish_order() -> None:
    files = api.build_output(api.compile_fabric(HAND6), platforms=["cumulus"], batfish=True).files
    interfaces = files["configs/cumulus/leaf1/interfaces"]
    frr = files["configs/cumulus/leaf1/frr.conf"]
    joined = files["batfish/configs/leaf1.cfg"]
    assert joined == b"leaf1\n" + interfaces + b"# ports.conf --\n" + frr
    assert interfaces.startswith(b"# This file describes the network interfaces")
    assert frr.startswith(b"frr version ")


@pytest.mark.parametrize("platform", VENDORS)
def test_an_inventory_of_the_platform_compiles_and_verifies(tmp_path: Path, platform: str) -> None:
    from fatpaths_cfg.verify.run import verify_output

    inventory = tmp_path / "fabric.yaml"
    inventory.write_text(HAND6.read_text().replace("platform: frr", f"platform: {platform}"))
    out = tmp_path / "out"
    api.build_output(api.compile_fabric(inventory), platforms=None).commit(out)
    assert sorted(p.name for p in (out / "configs").iterdir()) == [platform]
    # No containerlab node exists for it, so no containerlab topology is written.
    assert not list(out.glob("lab/*.clab.yml"))
    report = verify_output(out)
    assert [c.platform for c in report.checks] == [platform]
    assert [str(f) for f in report.checks[0].findings] == []
    assert report.checks[0].routes == 90
