"""Cabling read from the devices: lldpd in each switch namespace, cables that the test swaps,
and `fatpaths deploy --check-cabling` / `fatpaths discover` reading them over SSH."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from test_deploy_support import NamespaceLab
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.cli import build_app
from fatpaths_cfg.deploy import report as deploy_report
from fatpaths_cfg.deploy.cabling import CablingProblem, compare_cabling
from fatpaths_cfg.deploy.linux_box import lldp_neighbors

TRIANGLE = """\
fabric: triangle
defaults: {platform: frr}
switches:
  - {name: s1, ports: 3}
  - {name: s2, ports: 3}
  - {name: s3, ports: 3}
links:
  - {a: s1:Ethernet1, b: s2:Ethernet1}
  - {a: s1:Ethernet2, b: s3:Ethernet1}
  - {a: s2:Ethernet2, b: s3:Ethernet2}
hosts:
  - {name: h1, uplink: s1:Ethernet3}
  - {name: h2, uplink: s2:Ethernet3}
  - {name: h3, uplink: s3:Ethernet3}
routing: {layers: 2, rho: 0.8, seed: 3}
"""


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deploy_report.console, "width", 250)


@pytest.fixture
def triangle(tmp_path: Path) -> Iterator[tuple[NamespaceLab, Path]]:
    inventory = tmp_path / "triangle.yaml"
    inventory.write_text(TRIANGLE)
    out = tmp_path / "out"
    api.compile_to_directory(inventory, out)
    lab = NamespaceLab(tmp_path)
    try:
        for name in ("s1", "s2", "s3"):
            lab.add_switch(name, ["Ethernet3"], lldp=True)
        lab.cable("s1", "Ethernet1", "s2", "Ethernet1")
        lab.cable("s1", "Ethernet2", "s3", "Ethernet1")
        lab.cable("s2", "Ethernet2", "s3", "Ethernet2")
        yield lab, out
    finally:
        lab.close()


def lldp_seen(lab: NamespaceLab, name: str) -> dict[str, str]:
    """Port -> neighbours as lldpd in the namespace reports them (not through the driver);
    a port still listing its previous cable's neighbour shows both."""
    device = lab.devices[name]
    text = device.sh("lldpcli", "-u", str(device.lldp_socket), "-f", "json0", "show", "neighbors")
    seen = {}
    for lldp in json.loads(text).get("lldp", []):
        for interface in lldp.get("interface", []):
            chassis = interface["chassis"][0]["name"][0]["value"]
            end = f"{chassis}:{interface['port'][0]['id'][0]['value']}"
            port = interface["name"]
            seen[port] = f"{seen[port]}+{end}" if port in seen else end
    return seen


def wait_for_lldp(lab: NamespaceLab, expected: dict[str, dict[str, str]]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if all(lldp_seen(lab, n) == want for n, want in expected.items()):
            return
        time.sleep(0.5)
    raise AssertionError({n: lldp_seen(lab, n) for n in expected})


def run_cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(build_app(), list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


@pytest.mark.lab
def test_cabling_check_deploy_and_a_swapped_cable(
    triangle: tuple[NamespaceLab, Path], tmp_path: Path
) -> None:
    lab, out = triangle
    wait_for_lldp(
        lab,
        {
            "s1": {"Ethernet1": "s2:Ethernet1", "Ethernet2": "s3:Ethernet1"},
            "s2": {"Ethernet1": "s1:Ethernet1", "Ethernet2": "s3:Ethernet2"},
            "s3": {"Ethernet1": "s1:Ethernet2", "Ethernet2": "s2:Ethernet2"},
        },
    )
    devices = lab.devices_file(tmp_path / "devices.yaml")
    access = ["--devices", str(devices), "--known-hosts", str(lab.known_hosts)]

    # Cabled as compiled: checked, then pushed; every switch's tables read back equal.
    code, output = run_cli("deploy", str(out), *access, "--check-cabling")
    assert code == 0, output
    assert output.count("committed") == 3, output
    for name, device in lab.devices.items():
        conf = (out / f"configs/frr/{name}/frr.conf").read_text()
        compiled: dict[str, set[str]] = {}
        for line in conf.splitlines():
            if line.startswith("ip route "):
                compiled.setdefault(line.split()[2], set()).add(line.split()[3])
        assert device.rib() == compiled == device.fib(), name

    # Swap s1's two fabric cables.
    lab.uncable("s1", "Ethernet1")
    lab.uncable("s1", "Ethernet2")
    lab.cable("s1", "Ethernet1", "s3", "Ethernet1")
    lab.cable("s1", "Ethernet2", "s2", "Ethernet1")
    wait_for_lldp(lab, {"s1": {"Ethernet1": "s3:Ethernet1", "Ethernet2": "s2:Ethernet1"}})
    changed = tmp_path / "changed"
    api.compile_to_directory(tmp_path / "triangle.yaml", changed, 4)
    before = {n: d.running_config() for n, d in lab.devices.items()}
    code, output = run_cli("deploy", str(changed), *access, "--check-cabling")
    assert code == 1, output
    lines = [" ".join(line.replace("│", " ").split()) for line in output.splitlines()]
    assert "s1 Ethernet1 swapped with Ethernet2 s2:Ethernet1 s3:Ethernet1" in lines, output
    assert "s1 Ethernet2 swapped with Ethernet1 s3:Ethernet1 s2:Ethernet1" in lines, output
    assert "s2 Ethernet1 wrong s1:Ethernet1 s1:Ethernet2" in lines, output
    assert "s3 Ethernet1 wrong s1:Ethernet2 s1:Ethernet1" in lines, output
    assert "miscabled" in output and "committed" not in output
    assert {n: d.running_config() for n, d in lab.devices.items()} == before

    # Discover writes the wiring as it is now.
    wiring = tmp_path / "wiring.yaml"
    code, output = run_cli("discover", *access, "-o", str(wiring), "--name", "found")
    assert code == 0, output
    assert "3 switches, 3 links, 0 hosts" in output
    data = yaml.safe_load(wiring.read_text())
    assert data["fabric"] == "found"
    assert {(link["a"], link["b"]) for link in data["links"]} == {
        ("s1:Ethernet1", "s3:Ethernet1"),
        ("s1:Ethernet2", "s2:Ethernet1"),
        ("s2:Ethernet2", "s3:Ethernet2"),
    }


def test_compare_cabling_kinds() -> None:
    wanted = {
        "Ethernet1": ("s2", "Ethernet1"),
        "Ethernet2": ("s3", "Ethernet1"),
        "Ethernet3": ("h1", ""),
        "Ethernet4": ("s4", "Ethernet9"),
    }
    seen = {
        "Ethernet1": ("s3", "Ethernet1"),
        "Ethernet2": ("s2", "Ethernet1"),
        "Ethernet5": ("rogue", "eth0"),
        "mgmt0": ("oob", "Gi0/1"),
    }
    ports = ("Ethernet1", "Ethernet2", "Ethernet3", "Ethernet4", "Ethernet5")
    assert compare_cabling("s1", ports, wanted, seen) == [
        CablingProblem("s1", "Ethernet1", "swapped with Ethernet2", "s2:Ethernet1", "s3:Ethernet1"),
        CablingProblem("s1", "Ethernet2", "swapped with Ethernet1", "s3:Ethernet1", "s2:Ethernet1"),
        CablingProblem("s1", "Ethernet4", "missing", "s4:Ethernet9", "nothing"),
        CablingProblem("s1", "Ethernet5", "extra", "nothing", "rogue:eth0"),
    ]
    assert (
        compare_cabling("s1", ports, {"Ethernet3": ("h1", "")}, {"Ethernet3": ("h9", "eth0")})[
            0
        ].kind
        == "wrong"
    )


def test_lldp_json0_youngest_neighbour_first() -> None:
    def entry(age: str, host: str, port: str) -> dict[str, object]:
        return {
            "name": "Ethernet1",
            "age": age,
            "chassis": [{"name": [{"value": host}]}],
            "port": [{"id": [{"type": "ifname", "value": port}]}],
        }

    text = json.dumps(
        {
            "lldp": [
                {
                    "interface": [
                        entry("0 day, 00:00:09", "s2", "Ethernet1"),
                        entry("0 day, 00:00:01", "s3", "Ethernet1"),
                    ]
                }
            ]
        }
    )
    assert lldp_neighbors(text) == {
        "Ethernet1": [
            {"hostname": "s3", "port": "Ethernet1"},
            {"hostname": "s2", "port": "Ethernet1"},
        ]
    }
