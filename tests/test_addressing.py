"""Address plan: field widths, subnets per (layer, switch), links, loopbacks, VLANs, fit errors."""

from __future__ import annotations

import csv
import io
import ipaddress
import json
from pathlib import Path

import pytest

from fatpaths_cfg import api
from fatpaths_cfg.addressing import allocate_addresses, field_widths, host_mac
from fatpaths_cfg.errors import UserErrors

INVENTORIES = Path(__file__).resolve().parent.parent / "inventories"
HAND6 = INVENTORIES / "hand-6.yaml"
SLIMFLY_Q5 = INVENTORIES / "slimfly-q5.yaml"


def _with_addressing(tmp_path: Path, source: Path, block: str) -> Path:
    text = source.read_text(encoding="utf-8")
    inventory = tmp_path / source.name
    inventory.write_text(
        f"{text}\naddressing:\n{block}"
        if "addressing:" not in text
        else text.split("addressing:")[0] + f"addressing:\n{block}",
        encoding="utf-8",
    )
    return inventory


def test_field_widths_follow_layers_switches_and_hosts() -> None:
    # 4 layers -> 2 bits, 50 switches -> 6 bits, 4 hosts + gateway + network + broadcast -> 3.
    assert field_widths(4, 50, 4) == field_widths(4, 64, 5)
    widths = field_widths(4, 50, 4)
    assert (widths.layer_bits, widths.switch_bits, widths.host_bits) == (2, 6, 3)
    assert field_widths(9, 722, 15).v4_bits == 4 + 10 + 5


def test_prefix_plan_gives_each_layer_and_switch_its_own_subnet() -> None:
    compiled = api.compile_fabric(SLIMFLY_Q5)
    plan = compiled.plan_json
    assert plan is not None and plan["encoding"] == "prefix"
    pool = ipaddress.IPv4Network(plan["layout"]["host_pool_v4"])
    subnets = {}
    for switch in plan["switches"]:
        assert len(switch["subnets"]) == len(compiled.layers)
        for entry in switch["subnets"]:
            subnet = ipaddress.IPv4Network(entry["v4"])
            assert subnet.subnet_of(pool)
            # The switch is the first usable address of its subnet.
            assert ipaddress.IPv4Address(entry["gateway_v4"]) == subnet.network_address + 1
            subnets[(entry["layer"], switch["name"])] = subnet
    assert len(set(subnets.values())) == len(subnets) == 4 * 50
    for host in plan["hosts"]:
        assert [a["layer"] for a in host["addresses"]] == [1, 2, 3, 4]
        for address in host["addresses"]:
            interface = ipaddress.IPv4Interface(address["v4"])
            assert interface.network == subnets[(address["layer"], host["switch"])]
            assert interface.ip not in (
                interface.network.network_address,
                interface.network.broadcast_address,
                interface.network.network_address + 1,
            )


def test_links_get_distinct_31s_and_switches_loopbacks() -> None:
    plan = api.compile_fabric(HAND6).plan_json
    assert plan is not None
    seen = set()
    for link in plan["links"]:
        a, b = ipaddress.IPv4Interface(link["a_v4"]), ipaddress.IPv4Interface(link["b_v4"])
        assert a.network == b.network and a.network.prefixlen == 31 and a.ip != b.ip
        seen.add(a.network)
    assert len(seen) == len(plan["links"]) == 9
    loopbacks = [s["loopback_v4"] for s in plan["switches"]]
    assert loopbacks[0] == "192.168.0.1/32" and len(set(loopbacks)) == 6


def test_ipv6_plan_uses_64_subnets_and_127_links(tmp_path: Path) -> None:
    inventory = _with_addressing(tmp_path, HAND6, "  family: ipv6\n")
    plan = api.compile_fabric(inventory).plan_json
    assert plan is not None and plan["layout"]["host_pool_v4"] is None
    entry = plan["switches"][2]["subnets"][1]
    assert entry["v4"] is None and ipaddress.IPv6Network(entry["v6"]).prefixlen == 64
    assert ipaddress.IPv6Interface(plan["links"][0]["a_v6"]).network.prefixlen == 127
    host = ipaddress.IPv6Interface(plan["hosts"][0]["addresses"][0]["v6"])
    assert host.network == ipaddress.IPv6Network(plan["switches"][0]["subnets"][0]["v6"])


def test_a_pool_too_small_names_the_field_and_the_bits_needed(tmp_path: Path) -> None:
    inventory = _with_addressing(tmp_path, SLIMFLY_Q5, "  host_pool_v4: 10.0.0.0/24\n")
    with pytest.raises(UserErrors) as caught:
        api.compile_fabric(inventory)
    (error,) = caught.value.errors
    assert error.field == "addressing.host_pool_v4"
    assert error.line > 0
    assert "needs 11 bits" in error.message and "leaves 8 bits" in error.message
    assert "family: ipv6" in error.hint and "/21" in error.hint


def test_pools_of_an_unused_family_may_overlap(tmp_path: Path) -> None:
    # An IPv4 fabric takes no address from the IPv6 pools, so their overlap harms nothing.
    block = "  host_pool_v6: fd00::/16\n  link_pool_v6: fd00::/16\n"
    assert api.compile_fabric(_with_addressing(tmp_path, HAND6, block)).plan_json


def test_a_pool_overlapping_a_default_is_named_at_the_written_field(tmp_path: Path) -> None:
    inventory = _with_addressing(tmp_path, HAND6, "  loopback_pool_v4: 10.1.0.0/16\n")
    with pytest.raises(UserErrors) as caught:
        api.compile_fabric(inventory)
    (error,) = caught.value.errors
    assert error.field == "addressing.loopback_pool_v4"
    assert (
        error.line
        == inventory.read_text().splitlines().index("  loopback_pool_v4: 10.1.0.0/16") + 1
    )
    assert error.message == (
        "10.1.0.0/16 lies inside addressing.host_pool_v4 10.0.0.0/8 (its default)"
    )


def test_vlan_encoding_numbers_layers_from_the_base(tmp_path: Path) -> None:
    inventory = _with_addressing(tmp_path, HAND6, "  encoding: vlan\n  vlan_base: 200\n")
    plan = api.compile_fabric(inventory).plan_json
    assert plan is not None
    assert plan["vlans"] == [
        {"layer": 1, "vlan": 200},
        {"layer": 2, "vlan": 201},
        {"layer": 3, "vlan": 202},
    ]
    # Layer-wide broadcast domains: hosts carry the layer block (pool /8 + 2 layer bits).
    assert plan["hosts"][0]["addresses"][0]["v4"].endswith("/10")
    assert plan["hosts"][0]["mac"] == host_mac(0) == "02:fa:00:00:00:00"
    assert plan["switches"][0]["subnets"][0]["gateway_v4"] is None


def test_vlan_ids_past_4094_and_platform_limits_are_errors(tmp_path: Path) -> None:
    inventory = _with_addressing(tmp_path, HAND6, "  encoding: vlan\n  vlan_base: 4093\n")
    with pytest.raises(UserErrors) as caught:
        api.compile_fabric(inventory)
    assert [e.field for e in caught.value.errors] == ["addressing.vlan_base"]
    assert "reach VLAN 4095" in caught.value.errors[0].message
    compiled = api.compile_fabric(HAND6)
    spec = compiled.addressing_spec.model_copy(update={"encoding": "vlan"})
    with pytest.raises(UserErrors) as caught:
        allocate_addresses(compiled.fabric, 3, spec, {"tiny": 2})
    assert "platform tiny supports at most 2" in caught.value.errors[0].message


def test_plan_is_in_fabric_json_and_addresses_csv(tmp_path: Path) -> None:
    out = tmp_path / "out"
    api.compile_to_directory(HAND6, out)
    data = json.loads((out / "fabric.json").read_text(encoding="utf-8"))
    assert data["addressing"]["layout"]["layer_bits"] == 2
    rows = list(csv.reader(io.StringIO((out / "hosts" / "addresses.csv").read_text())))
    assert rows[0] == ["host", "plane", "layer", "address"]
    assert len(rows) - 1 == 12 * 3
    assert rows[1] == ["h1a", "0", "1", data["addressing"]["hosts"][0]["addresses"][0]["v4"]]
    addresses = json.loads((out / "hosts" / "addresses.json").read_text(encoding="utf-8"))
    assert addresses["hosts"] == data["addressing"]["hosts"]
