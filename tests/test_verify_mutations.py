"""Mutation tests: break one rendered file on purpose and check that verify reports exactly
that fault, with the file and line at fault."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from fatpaths_cfg import addressing, api
from fatpaths_cfg.compiled import FamilyAddresses, LoadedCompiled, load_compiled
from fatpaths_cfg.ifnames import kernel_ifname
from fatpaths_cfg.platforms import PLATFORMS as REGISTRY
from fatpaths_cfg.platforms.cumulus import PORTS as CUMULUS_PORTS
from fatpaths_cfg.platforms.junos import PORTS as JUNOS_PORTS
from fatpaths_cfg.platforms.nxos import PORTS as NXOS_PORTS
from fatpaths_cfg.verify.checker import check_forwarding
from fatpaths_cfg.verify.findings import (
    BAD_NEXT_HOP,
    DUPLICATE_ADDRESS,
    HOST_ON_LINK,
    MISSING_ADDRESS,
    MISSING_CONFIG,
    MISSING_HOST_ADDRESS,
    MISSING_ROUTE,
    NOT_SHORTEST,
    OUTSIDE_LAYER,
    UNPARSED,
    Finding,
)
from fatpaths_cfg.verify.model import Location
from fatpaths_cfg.verify.readers import plan_reading, read_configs

INVENTORY = Path(__file__).resolve().parent.parent / "inventories" / "slimfly-q5.yaml"
# Every registered platform; each needs its expected files below (the test data of a platform,
# like its goldens).
PLATFORMS = tuple(REGISTRY)
ROUTES_FILE = {
    "frr": "configs/frr/{}/frr.conf",
    "linux": "configs/linux/{}.sh",
    "eos": "configs/eos/{}.cfg",
    "sonic": "configs/sonic/{}/frr.conf",
    "cumulus": "configs/cumulus/{}/frr.conf",
    "junos": "configs/junos/{}.set",
    "nxos": "configs/nxos/{}.cfg",
}
ADDRESS_FILE = {
    "frr": "configs/frr/{}/interfaces.sh",
    "linux": "configs/linux/{}.sh",
    "eos": "configs/eos/{}.cfg",
    "sonic": "configs/sonic/{}/config_db.json",
    "cumulus": "configs/cumulus/{}/interfaces",
    "junos": "configs/junos/{}.set",
    "nxos": "configs/nxos/{}.cfg",
}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("slimfly-q5")
    compiled = api.compile_fabric(INVENTORY)
    api.build_output(compiled, platforms=list(PLATFORMS)).commit(out)
    return out


@pytest.fixture
def out(pristine: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "out"
    shutil.copytree(pristine, copy)
    return copy


def _verify(out: Path, platform: str) -> list[Finding]:
    # As `fatpaths verify` reads: files of addresses and host plans in the forked address
    # check, the rest before it or beside it.
    loaded = load_compiled(out)
    return check_forwarding(loaded, plan_reading(loaded, platform)).findings


def _v4(loaded: LoadedCompiled) -> FamilyAddresses:
    assert loaded.addresses is not None and loaded.addresses.v4 is not None
    return loaded.addresses.v4


def _gateways(loaded: LoadedCompiled) -> list[list[str]]:
    gateways = _v4(loaded).gateways
    assert gateways is not None
    return gateways


def _prefix(loaded: LoadedCompiled, layer: int, t: int) -> str:
    return _v4(loaded).subnets[layer - 1][t]


def _hop_address(loaded: LoadedCompiled, s: int, n: int) -> str:
    index = loaded.fabric.link_between[(s, n)]
    side = "a" if loaded.fabric.links[index].a == n else "b"
    return _v4(loaded).links[index][0 if side == "a" else 1].split("/")[0]


def _edit_route(
    out: Path, platform: str, switch: str, prefix: str, change: Callable[[str], str | None]
) -> int:
    """Apply `change` to the route line for `prefix` (None deletes it); returns its line."""
    path = out / ROUTES_FILE[platform].format(switch)
    lines = path.read_text().splitlines(keepends=True)
    for number, text in enumerate(lines, start=1):
        words = text.split()
        if prefix in words and "route" in words:
            changed = change(text)
            lines[number - 1 : number] = [] if changed is None else [changed]
            path.write_text("".join(lines))
            return number
    raise AssertionError(f"no route to {prefix} in {path}")


def _drop_address(path: Path, address: str) -> None:
    """Remove every line (or config_db key) that configures `address` (with prefix length)."""
    if path.suffix == ".json":
        data = json.loads(path.read_text())
        for table in data.values():
            for key in [k for k in table if k.endswith(f"|{address}")]:
                del table[key]
        path.write_text(json.dumps(data, indent=2))
        return
    lines = path.read_text().splitlines(True)
    kept = [x for x in lines if f"{address} " not in x and not x.rstrip().endswith(address)]
    assert len(kept) < len(lines), f"{address} not in {path}"
    if path.suffix == ".cfg":
        # EOS: when the primary SVI address goes, the first secondary takes its place.
        for i, text in enumerate(kept):
            if text.strip().startswith("ip address") and text.rstrip().endswith(" secondary"):
                if not kept[i - 1].strip().startswith("ip address"):
                    kept[i] = text.replace(" secondary", "")
                break
    path.write_text("".join(kept))


def _add_address(out: Path, platform: str, switch: str, port: str, address: str) -> int:
    """Configure `address` (with prefix length) on one more line for `port` ("lo": the
    loopback) of `switch`, beside the port's own address; returns the new line."""
    path = out / ADDRESS_FILE[platform].format(switch)
    if platform == "sonic":
        data = json.loads(path.read_text())
        table, name = ("LOOPBACK_INTERFACE", "Loopback0") if port == "lo" else ("INTERFACE", port)
        data[table][f"{name}|{address}"] = {}
        path.write_text(json.dumps(data, indent=2))
        return next(
            number
            for number, text in enumerate(path.read_text().splitlines(), start=1)
            if f'"{name}|{address}"' in text
        )
    lines = path.read_text().splitlines(True)
    if platform == "eos":
        start = lines.index(f"interface {'Loopback0' if port == 'lo' else port}\n")
        own = next(i for i in range(start, len(lines)) if "ip address" in lines[i])
        lines.insert(own + 1, f"   ip address {address} secondary\n")
    elif platform == "nxos":
        interface = "loopback0" if port == "lo" else NXOS_PORTS.name(port)
        start = lines.index(f"interface {interface}\n")
        own = next(i for i in range(start, len(lines)) if "ip address" in lines[i])
        lines.insert(own + 1, f"  ip address {address} secondary\n")
    elif platform == "cumulus":
        stanza = "lo inet loopback" if port == "lo" else CUMULUS_PORTS.name(port)
        start = lines.index(f"iface {stanza}\n")
        own = next(i for i in range(start, len(lines)) if "address" in lines[i].split())
        lines.insert(own + 1, f"    address {address}\n")
    elif platform == "junos":
        name = "lo0" if port == "lo" else JUNOS_PORTS.name(port)
        head = f"set interfaces {name} unit 0 family inet address "
        own = next(i for i, x in enumerate(lines) if x.startswith(head))
        lines.insert(own + 1, f"{head}{address}\n")
    else:
        device = f" dev {kernel_ifname(port)}\n"
        own = next(i for i, x in enumerate(lines) if "addr replace" in x and x.endswith(device))
        lines.insert(own + 1, f"ip addr replace {address}{device}")
    path.write_text("".join(lines))
    return own + 2


def _only(findings: list[Finding]) -> Finding:
    assert len(findings) == 1, "\n".join(str(f) for f in findings)
    return findings[0]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_pristine_output_verifies(pristine: Path, platform: str) -> None:
    assert [str(f) for f in _verify(pristine, platform)] == []


@pytest.mark.parametrize("platform", PLATFORMS)
def test_deleted_route_is_reported_as_missing_at_its_switch(out: Path, platform: str) -> None:
    loaded = load_compiled(out)
    s, t = 4, 31
    names = [sw.name for sw in loaded.fabric.switches]
    _edit_route(out, platform, names[s], _prefix(loaded, 2, t), lambda _: None)
    finding = _only(_verify(out, platform))
    assert finding.kind == MISSING_ROUTE
    assert (finding.layer, finding.source, finding.destination) == (2, names[s], names[t])
    assert finding.location is not None
    assert finding.location.file == ROUTES_FILE[platform].format(names[s])
    assert _prefix(loaded, 2, t) in finding.message


@pytest.mark.parametrize("platform", PLATFORMS)
def test_route_to_the_wrong_neighbour_loops_and_names_the_line(out: Path, platform: str) -> None:
    loaded = load_compiled(out)
    layer, s = 3, 7
    nh = loaded.next_hop[layer - 1]
    # A neighbour in the layer that sends t straight back through s closes a two-hop loop.
    t, n = next(
        (t, n)
        for t in range(loaded.fabric.nr)
        for n in range(loaded.fabric.nr)
        if t != s
        and (s, n) in loaded.fabric.link_between
        and loaded.layer_masks[layer - 1][loaded.fabric.link_between[(s, n)]]
        and nh[n, t] == s
    )
    right = _hop_address(loaded, s, int(nh[s, t]))
    wrong = _hop_address(loaded, s, n)
    names = [sw.name for sw in loaded.fabric.switches]
    line = _edit_route(
        out, platform, names[s], _prefix(loaded, layer, t), lambda text: text.replace(right, wrong)
    )
    finding = _only(_verify(out, platform))
    assert finding.kind == NOT_SHORTEST
    assert finding.location is not None
    assert (finding.location.file, finding.location.line) == (
        ROUTES_FILE[platform].format(names[s]),
        line,
    )
    assert finding.layer == layer
    assert finding.path[:3] == (names[s], names[n], names[s])
    assert "loops" in finding.message


@pytest.mark.parametrize("platform", PLATFORMS)
def test_route_over_a_link_outside_the_layer_is_reported(out: Path, platform: str) -> None:
    loaded = load_compiled(out)
    layer = 2
    mask = loaded.layer_masks[layer - 1]
    link = loaded.fabric.links[int(np.flatnonzero(~mask)[0])]
    s, n = link.a, link.b
    t = next(t for t in range(loaded.fabric.nr) if t not in (s, n))
    right = _hop_address(loaded, s, int(loaded.next_hop[layer - 1, s, t]))
    wrong = _hop_address(loaded, s, n)
    names = [sw.name for sw in loaded.fabric.switches]
    line = _edit_route(
        out, platform, names[s], _prefix(loaded, layer, t), lambda text: text.replace(right, wrong)
    )
    finding = _only(_verify(out, platform))
    assert finding.kind == OUTSIDE_LAYER
    assert finding.location is not None and finding.location.line == line
    assert f"link {link.index}" in finding.message


def test_next_hop_that_is_no_neighbour_is_reported(out: Path) -> None:
    loaded = load_compiled(out)
    s, t = 0, 9
    stranger = next(li for li in loaded.fabric.links if s not in (li.a, li.b))
    right = _hop_address(loaded, s, int(loaded.next_hop[0, s, t]))
    wrong = _hop_address(loaded, stranger.a, stranger.b)
    name = loaded.fabric.switches[s].name
    line = _edit_route(out, "frr", name, _prefix(loaded, 1, t), lambda x: x.replace(right, wrong))
    finding = _only(_verify(out, "frr"))
    assert finding.kind == BAD_NEXT_HOP
    assert finding.location is not None and finding.location.line == line


@pytest.mark.parametrize("platform", ["frr", "linux"])
def test_dropped_host_route_makes_that_host_unreachable(out: Path, platform: str) -> None:
    loaded = load_compiled(out)
    host = loaded.fabric.hosts[5]
    address = _v4(loaded).hosts[5][2].split("/")[0]
    switch = loaded.fabric.switches[host.switch].name
    path = out / ADDRESS_FILE[platform].format(switch)
    path.write_text(
        "".join(x for x in path.read_text().splitlines(True) if f"{address}/32 dev" not in x)
    )
    finding = _only(_verify(out, platform))
    assert finding.kind == MISSING_HOST_ADDRESS
    assert (finding.layer, finding.destination) == (3, host.name)
    assert finding.location is not None
    assert finding.location.file == ADDRESS_FILE[platform].format(switch)


def test_dropped_address_in_a_host_plan_is_reported(out: Path) -> None:
    loaded = load_compiled(out)
    host = loaded.fabric.hosts[11]
    address = _v4(loaded).hosts[11][1]
    path = out / "hosts" / f"{host.name}.sh"
    path.write_text("".join(x for x in path.read_text().splitlines(True) if address not in x))
    finding = _only(_verify(out, "eos"))
    assert finding.kind == MISSING_HOST_ADDRESS
    assert (finding.layer, finding.destination) == (2, host.name)
    assert finding.location is not None and finding.location.file == f"hosts/{host.name}.sh"


@pytest.mark.parametrize("platform", PLATFORMS)
def test_dropped_gateway_is_reported(out: Path, platform: str) -> None:
    loaded = load_compiled(out)
    switch = loaded.fabric.switches[12].name
    gateway = _gateways(loaded)[3][12]
    prefix_length = _v4(loaded).subnets[3][12].split("/")[1]
    _drop_address(out / ADDRESS_FILE[platform].format(switch), f"{gateway}/{prefix_length}")
    finding = _only(_verify(out, platform))
    assert finding.kind == MISSING_ADDRESS
    assert finding.layer == 4 and gateway in finding.message
    assert finding.location is not None
    assert finding.location.file == ADDRESS_FILE[platform].format(switch)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_dropped_link_address_is_reported_on_its_port(out: Path, platform: str) -> None:
    loaded = load_compiled(out)
    link = loaded.fabric.links[20]
    address = _v4(loaded).links[20][1]
    switch = loaded.fabric.switches[link.b].name
    _drop_address(out / ADDRESS_FILE[platform].format(switch), address)
    finding = _only(_verify(out, platform))
    assert finding.kind == MISSING_ADDRESS
    assert link.b_port in finding.message and address in finding.message


@pytest.mark.parametrize("platform", PLATFORMS)
def test_another_switchs_loopback_is_a_duplicate_address_at_its_line(
    out: Path, platform: str
) -> None:
    loaded = load_compiled(out)
    names = [sw.name for sw in loaded.fabric.switches]
    loopback = _v4(loaded).loopbacks[7]
    line = _add_address(out, platform, names[3], "lo", loopback)
    finding = _only(_verify(out, platform))
    assert finding.kind == DUPLICATE_ADDRESS
    assert finding.location == Location(ADDRESS_FILE[platform].format(names[3]), line)
    assert loopback.split("/")[0] in finding.message
    # The other holder is named with its own file.
    assert f"{names[7]} port lo ({ADDRESS_FILE[platform].format(names[7])}:" in finding.message


@pytest.mark.parametrize("platform", ["frr", "eos", "cumulus", "junos", "nxos"])
def test_a_link_address_on_a_second_port_of_its_switch_is_a_duplicate(
    out: Path, platform: str
) -> None:
    loaded = load_compiled(out)
    link, other = loaded.fabric.links[20], loaded.fabric.links[21]
    assert link.a == other.a
    switch = loaded.fabric.switches[link.a].name
    address = _v4(loaded).links[20][0]
    line = _add_address(out, platform, switch, other.a_port, address)
    finding = _only(_verify(out, platform))
    assert finding.kind == DUPLICATE_ADDRESS
    assert finding.location == Location(ADDRESS_FILE[platform].format(switch), line)
    assert f"link 20's end at {switch} port {link.a_port}" in finding.message


def test_a_host_address_equal_to_a_link_address_is_named_in_the_host_plan(out: Path) -> None:
    loaded = load_compiled(out)
    host = loaded.fabric.hosts[9]
    link = loaded.fabric.links[30]
    address = _v4(loaded).links[30][1].split("/")[0]
    path = out / "hosts" / f"{host.name}.sh"
    lines = path.read_text().splitlines(True)
    number = next(i for i, x in enumerate(lines, start=1) if "addr replace" in x)
    lines.insert(number, f"ip addr replace {address}/29 dev eth0\n")
    path.write_text("".join(lines))
    finding = _only(_verify(out, "frr"))
    assert finding.kind == HOST_ON_LINK
    assert finding.location == Location(f"hosts/{host.name}.sh", number + 1)
    switch = loaded.fabric.switches[link.b].name
    assert f"host {host.name}: address {address}" in finding.message
    assert f"link 30's end at {switch} port {link.b_port}" in finding.message


def test_another_hosts_address_in_a_host_plan_is_a_duplicate_address(out: Path) -> None:
    loaded = load_compiled(out)
    owner, taker = loaded.fabric.hosts[40], loaded.fabric.hosts[3]
    address = _v4(loaded).hosts[40][1]
    path = out / "hosts" / f"{taker.name}.sh"
    lines = path.read_text().splitlines(True)
    number = next(i for i, x in enumerate(lines, start=1) if "addr replace" in x)
    lines.insert(number, f"ip addr replace {address} dev eth0\n")
    path.write_text("".join(lines))
    finding = _only(_verify(out, "linux"))
    assert finding.kind == DUPLICATE_ADDRESS
    assert finding.location == Location(f"hosts/{taker.name}.sh", number + 1)
    assert f"is also on host {owner.name} (hosts/{owner.name}.sh:" in finding.message


def test_verify_catches_overlapping_pools_that_compile_would_refuse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Defence in depth: with compile's pool check switched off, identical host and link pools
    # render configs whose routes are all sound, so only the address checks can tell.
    monkeypatch.setattr(addressing._PlanChecker, "disjoint", lambda self, fields: None)
    inventory = tmp_path / "same-pools.yaml"
    inventory.write_text(
        "fabric: same\ngenerate: {kind: hyperx, L: 2, S: 3}\nrouting: {layers: 2}\n"
        "addressing: {host_pool_v4: 10.0.0.0/8, link_pool_v4: 10.0.0.0/8}\n"
    )
    out = tmp_path / "out"
    api.build_output(api.compile_fabric(inventory), platforms=["frr"]).commit(out)
    findings = _verify(out, "frr")
    assert {f.kind for f in findings} == {DUPLICATE_ADDRESS, HOST_ON_LINK}
    for finding in findings:
        assert finding.location is not None and finding.location.line > 0
        assert (out / finding.location.file).is_file()


@pytest.mark.parametrize("platform", ["frr", "linux", "eos", "cumulus", "junos", "nxos"])
def test_a_line_the_reader_does_not_know_is_reported_not_skipped(out: Path, platform: str) -> None:
    name = load_compiled(out).fabric.switches[3].name
    path = out / ROUTES_FILE[platform].format(name)
    lines = path.read_text().splitlines(True)
    lines.insert(9, "ip rout 10.9.9.0/24 172.16.0.1\n")
    path.write_text("".join(lines))
    finding = _only(_verify(out, platform))
    assert finding.kind == UNPARSED
    assert finding.location is not None and finding.location.line == 10


@pytest.mark.parametrize("platform", ["frr", "cumulus"])
def test_a_line_unknown_in_a_file_of_addresses_is_reported_once(out: Path, platform: str) -> None:
    name = load_compiled(out).fabric.switches[3].name
    relative = ADDRESS_FILE[platform].format(name)
    path = out / relative
    lines = path.read_text().splitlines(True)
    lines.insert(5, "ip adress replace 10.9.9.9/32 dev lo\n")
    path.write_text("".join(lines))
    findings = _verify(out, platform)
    finding = _only(findings)
    assert finding.kind == UNPARSED
    assert finding.location == Location(relative, 6)
    # The same findings when everything is read before the checks, as the API allows.
    loaded = load_compiled(out)
    assert check_forwarding(loaded, read_configs(loaded, platform)).findings == findings


@pytest.fixture(scope="module")
def vlan_pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("slimfly-q5-vlan")
    inventory = folder / "slimfly-q5-vlan.yaml"
    inventory.write_text(INVENTORY.read_text().replace("encoding: prefix", "encoding: vlan"))
    out = folder / "out"
    api.build_output(api.compile_fabric(inventory), platforms=["eos"]).commit(out)
    return out


@pytest.fixture
def vlan_out(vlan_pristine: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "out"
    shutil.copytree(vlan_pristine, copy)
    return copy


def _mac_line(loaded: LoadedCompiled, host: int, layer: int) -> str:
    plan = loaded.addresses
    assert plan is not None
    mac = plan.host_macs[host].replace(":", "")
    vlan = plan.vlans[layer - 1]
    return f"mac address-table static {mac[0:4]}.{mac[4:8]}.{mac[8:12]} vlan {vlan} interface "


def test_vlan_pristine_output_verifies(vlan_pristine: Path) -> None:
    assert [str(f) for f in _verify(vlan_pristine, "eos")] == []


def test_vlan_deleted_mac_entry_is_a_missing_entry_for_that_host(vlan_out: Path) -> None:
    loaded = load_compiled(vlan_out)
    host, layer, s = 77, 2, 3
    name = loaded.fabric.switches[s].name
    path = vlan_out / ROUTES_FILE["eos"].format(name)
    needle = _mac_line(loaded, host, layer)
    path.write_text("".join(x for x in path.read_text().splitlines(True) if needle not in x))
    finding = _only(_verify(vlan_out, "eos"))
    assert finding.kind == MISSING_ROUTE
    assert (finding.layer, finding.source, finding.destination) == (
        layer,
        name,
        loaded.fabric.hosts[host].name,
    )


def test_vlan_entry_towards_the_wrong_port_loops(vlan_out: Path) -> None:
    loaded = load_compiled(vlan_out)
    layer, s = 1, 0
    nh = loaded.next_hop[layer - 1]
    fabric = loaded.fabric
    host = next(
        h
        for h in fabric.hosts
        if h.switch != s
        and any(nh[n, h.switch] == s for n in range(fabric.nr) if (s, n) in fabric.link_between)
    )
    back = next(
        n for n in range(fabric.nr) if (s, n) in fabric.link_between and nh[n, host.switch] == s
    )
    name = fabric.switches[s].name
    path = vlan_out / ROUTES_FILE["eos"].format(name)
    needle = _mac_line(loaded, host.index, layer)
    lines = path.read_text().splitlines(True)
    number = next(i for i, x in enumerate(lines, start=1) if x.startswith(needle))
    lines[number - 1] = needle + fabric.port_towards(s, back) + "\n"
    path.write_text("".join(lines))
    finding = _only(_verify(vlan_out, "eos"))
    assert finding.kind == NOT_SHORTEST
    assert finding.location is not None and finding.location.line == number
    assert "loops" in finding.message


def test_vlan_trunk_missing_a_layer_is_reported_at_its_line(vlan_out: Path) -> None:
    loaded = load_compiled(vlan_out)
    name = loaded.fabric.switches[0].name
    path = vlan_out / ROUTES_FILE["eos"].format(name)
    lines = path.read_text().splitlines(True)
    number = next(
        i for i, x in enumerate(lines, start=1) if "switchport trunk allowed vlan 100-102" in x
    )
    lines[number - 1] = lines[number - 1].replace("100-102", "100,102")
    path.write_text("".join(lines))
    finding = _only(_verify(vlan_out, "eos"))
    assert finding.kind == OUTSIDE_LAYER
    assert finding.location is not None and finding.location.line == number
    assert "VLANs [100, 102]" in finding.message and "[100, 101, 102]" in finding.message


def test_a_missing_switch_config_is_reported_once(out: Path) -> None:
    name = load_compiled(out).fabric.switches[8].name
    shutil.rmtree(out / "configs" / "frr" / name)
    finding = _only(_verify(out, "frr"))
    assert finding.kind == MISSING_CONFIG
    assert finding.source == name


@pytest.fixture(scope="module")
def ecmp_pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hyperx-ecmp")
    inventory = folder / "hyperx-ecmp.yaml"
    inventory.write_text(
        "fabric: hx-ecmp\n"
        "generate: {kind: hyperx, L: 2, S: 4}\n"
        "routing: {layers: 3, rho: 0.7, seed: 2, ecmp_within_layer: true}\n"
        "addressing: {family: ipv6}\n"
    )
    out = folder / "out"
    api.build_output(api.compile_fabric(inventory), platforms=["frr", "linux"]).commit(out)
    return out


@pytest.mark.parametrize("platform", ["frr", "linux"])
def test_ipv6_ecmp_output_verifies_and_a_dropped_member_is_named(
    ecmp_pristine: Path, tmp_path: Path, platform: str
) -> None:
    assert [str(f) for f in _verify(ecmp_pristine, platform)] == []
    out = tmp_path / "out"
    shutil.copytree(ecmp_pristine, out)
    name = load_compiled(out).fabric.switches[0].name
    path = out / ROUTES_FILE[platform].format(name)
    lines = path.read_text().splitlines(True)
    if platform == "linux":
        number = next(i for i, x in enumerate(lines) if " nexthop via " in x)
        words = lines[number].split()
        prefix = words[4]
        lines[number] = f"ip -6 route replace {prefix} via {words[7]}\n"
    else:
        routes = [x.split() for x in lines if x.startswith("ipv6 route ")]
        prefix = next(p[2] for i, p in enumerate(routes[:-1]) if routes[i + 1][2] == p[2])
        number = next(i for i, x in enumerate(lines) if x.split()[2:3] == [prefix])
        del lines[number]
    path.write_text("".join(lines))
    finding = _only(_verify(out, platform))
    assert finding.kind == MISSING_ROUTE
    assert f"has 1 of 2 equal-cost next hops towards {prefix}" in finding.message
