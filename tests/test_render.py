"""Rendered configs, host plans and the Batfish snapshot.

Golden files: `tests/golden/<case>/` holds the rendered configs, host plans and Batfish snapshot
of a small fabric (hand-6 on every platform, hand-6 in the VLAN encoding on EOS, hand-6
dual-stack on frr, eos and sonic, and hand-6 IPv6-only, with ECMP inside layers and in acyclic
mode on frr), so that a template change shows up as a diff; test_ir_golden.py keeps the IR. After an
intended change, regenerate them with

    FATPATHS_UPDATE_GOLDEN=1 python -m pytest tests/test_render.py -k golden

and review the diff before committing.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.cli import build_app
from fatpaths_cfg.compiled import CompiledFabric
from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.ifnames import kernel_ifname
from fatpaths_cfg.platforms import PLATFORMS
from fatpaths_cfg.platforms.frr.render import interfaces_body
from fatpaths_cfg.render.base import FABRIC_MTU, template
from fatpaths_cfg.render.environment import environment, route_lines, vlan_ranges
from fatpaths_cfg.render.hosts import host_view, render_host
from fatpaths_cfg.render.routes import EMPTY_ROUTES, PackedTexts, RouteTable
from fatpaths_cfg.render.switch_view import ViewBuilder
from fatpaths_cfg.render.switch_view import _routes as route_table

ROOT = Path(__file__).resolve().parent.parent
SLIMFLY_Q5 = ROOT / "inventories" / "slimfly-q5.yaml"
HAND6 = ROOT / "inventories" / "hand-6.yaml"
GOLDEN = Path(__file__).resolve().parent / "golden"
GOLDEN_CASES = {
    "hand6": (HAND6, ["frr", "linux", "eos", "sonic"]),
    "hand6-vlan": (GOLDEN / "hand6-vlan.yaml", None),
    "hand6-dual": (GOLDEN / "hand6-dual.yaml", ["frr", "eos", "sonic"]),
    "hand6-v6": (GOLDEN / "hand6-v6.yaml", ["frr", "linux"]),
    "hand6-ecmp": (GOLDEN / "hand6-ecmp.yaml", ["frr", "linux"]),
    "hand6-acyclic": (GOLDEN / "hand6-acyclic.yaml", ["frr"]),
    "hand6-lfa": (GOLDEN / "hand6-lfa.yaml", ["frr", "eos", "junos", "nxos"]),
    # One platform per case, so that the Batfish snapshot is that platform's own files.
    "hand6-cumulus": (HAND6, ["cumulus"]),
    "hand6-junos": (HAND6, ["junos"]),
    "hand6-nxos": (HAND6, ["nxos"]),
}
ROUTE = re.compile(
    r"^(?:ip route (?:replace )?|set routing-options static route )"
    r"(\S+) (?:via |next-hop )?(\d+\.\d+\.\d+\.\d+)$"
)


@pytest.fixture(scope="module")
def slimfly() -> CompiledFabric:
    return api.compile_fabric(SLIMFLY_Q5)


@pytest.fixture(scope="module")
def slimfly_files(slimfly: CompiledFabric) -> dict[str, bytes]:
    return api.build_output(slimfly, platforms=list(PLATFORMS), batfish=True).files


def _config_text(files: dict[str, bytes], platform: str, switch: str) -> str:
    """The platform's first file of a switch: the one holding its routes."""
    return files[f"configs/{platform}/{PLATFORMS[platform].paths(switch)[0]}"].decode()


def _routes(text: str) -> list[tuple[str, str]]:
    return [m.groups() for m in map(ROUTE.match, text.splitlines()) if m]  # type: ignore[misc]


@pytest.mark.parametrize("platform", list(PLATFORMS))
def test_every_switch_holds_n_times_nr_minus_1_layer_routes(
    slimfly: CompiledFabric, slimfly_files: dict[str, bytes], platform: str
) -> None:
    expected = len(slimfly.layers) * (slimfly.fabric.nr - 1)
    for switch in slimfly.fabric.switches:
        routes = _routes(_config_text(slimfly_files, platform, switch.name))
        assert len(routes) == expected == slimfly.route_counts[switch.index]


def test_routes_point_at_the_layer_next_hop(
    slimfly: CompiledFabric, slimfly_files: dict[str, bytes]
) -> None:
    plan, fabric = slimfly.plan_json, slimfly.fabric
    assert plan is not None
    subnet_of = {
        e["v4"]: (e["layer"] - 1, fabric.switch_index[s["name"]])
        for s in plan["switches"]
        for e in s["subnets"]
    }
    owner = {}
    for link in fabric.links:
        a, b = plan["links"][link.index]["a_v4"], plan["links"][link.index]["b_v4"]
        owner[a.split("/")[0]] = link.a
        owner[b.split("/")[0]] = link.b
    for switch in fabric.switches[:10]:
        for prefix, hop in _routes(_config_text(slimfly_files, "frr", switch.name)):
            layer, target = subnet_of[prefix]
            assert owner[hop] == slimfly.routing.next_hop[layer, switch.index, target]
            assert (switch.index, owner[hop]) in fabric.link_between


def test_equal_cost_next_hops_give_a_line_per_next_hop(tmp_path: Path) -> None:
    inventory = tmp_path / "ecmp.yaml"
    text = SLIMFLY_Q5.read_text(encoding="utf-8")
    inventory.write_text(text.replace("  seed: 1\n", "  seed: 1\n  ecmp_within_layer: true\n"))
    compiled = api.compile_fabric(inventory)
    files = api.build_output(compiled, platforms=["frr", "linux"]).files
    assert sum(compiled.route_counts) > len(compiled.layers) * 50 * 49
    for switch in compiled.fabric.switches[:5]:
        frr = _routes(_config_text(files, "frr", switch.name))
        assert len(frr) == compiled.route_counts[switch.index]
        linux = _config_text(files, "linux", switch.name)
        multipath = [line for line in linux.splitlines() if "nexthop via" in line]
        assert multipath and len(_routes(linux)) + len(multipath) == 4 * 49


def test_every_host_plan_holds_one_address_per_layer(
    slimfly: CompiledFabric, slimfly_files: dict[str, bytes]
) -> None:
    for host in slimfly.fabric.hosts:
        script = slimfly_files[f"hosts/{host.name}.sh"].decode()
        addresses = re.findall(r"^ip addr replace (\S+) dev eth0$", script, re.M)
        assert len(addresses) == len(slimfly.layers) == 4
        assert len({ipaddress.IPv4Interface(a).network for a in addresses}) == 4
        endpoints = re.findall(r"^ip mptcp endpoint add (\S+) dev eth0 signal$", script, re.M)
        assert endpoints == [a.split("/")[0] for a in addresses[1:]]
        assert "ip mptcp limits set subflow 6 add_addr_accepted 3" in script


def test_structured_files_parse_back(
    slimfly: CompiledFabric, slimfly_files: dict[str, bytes]
) -> None:
    fabric = slimfly.fabric
    switch = fabric.switches[0]
    db = json.loads(slimfly_files[f"configs/sonic/{switch.name}/config_db.json"])
    assert db["DEVICE_METADATA"]["localhost"]["hostname"] == switch.name
    link_ports = {fabric.port_towards(0, int(n)) for n in fabric.adjacency[0].indices}
    assert {k for k in db["INTERFACE"] if "|" not in k} == link_ports
    assert len([k for k in db["VLAN_INTERFACE"] if "|" in k]) == len(slimfly.layers)
    topology = json.loads(slimfly_files["batfish/batfish/layer1_topology.json"])
    assert len(topology["edges"]) == 2 * (len(fabric.links) + len(fabric.hosts))
    first = topology["edges"][0]
    assert {"node1": first["node2"], "node2": first["node1"]} in topology["edges"]
    host = json.loads(slimfly_files[f"batfish/hosts/{fabric.hosts[0].name}.json"])
    assert host["hostInterfaces"]["eth0"]["prefix"] == "10.0.0.2/29"
    assert f"batfish/sonic_configs/{switch.name}/config_db.json" in slimfly_files


def test_a_switch_over_a_platform_limit_is_a_named_error(
    slimfly: CompiledFabric, monkeypatch: pytest.MonkeyPatch
) -> None:
    eos = PLATFORMS["eos"]
    monkeypatch.setitem(PLATFORMS, "eos", replace(eos, limits=replace(eos.limits, routes=100)))
    with pytest.raises(UserErrors) as caught:
        api.build_output(slimfly, platforms=["eos"], limit=["sf-0-0-0"])
    (error,) = caught.value.errors
    assert "switch 'sf-0-0-0' needs 196 layer routes" in error.message
    assert "platform eos holds at most 100" in error.message


def test_vlan_encoding_is_refused_by_routed_only_platforms() -> None:
    compiled = api.compile_fabric(GOLDEN / "hand6-vlan.yaml")
    with pytest.raises(UserErrors) as caught:
        api.build_output(compiled, platforms=["frr"])
    assert "platform frr does not support the vlan encoding" in caught.value.errors[0].message
    files = api.build_output(compiled).files
    config = files["configs/eos/leaf1.cfg"].decode()
    macs = re.findall(r"^mac address-table static \S+ vlan (\d+) interface \S+$", config, re.M)
    assert len(macs) == 3 * 12  # n * N entries
    assert "spanning-tree mode none" in config and "ip route" not in config


def test_kernel_ifname_and_filters() -> None:
    assert kernel_ifname("Ethernet1/1") == "Ethernet1_1"
    long = kernel_ifname("HundredGigE1/0/0/12")
    assert len(long) == 15 and long.startswith("HundredGig_")
    assert long != kernel_ifname("HundredGigE1/0/0/13")
    assert vlan_ranges([102, 100, 101, 105]) == "100-102,105"


def test_cli_platform_limit_and_unchanged_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    runner = CliRunner()
    args = ["compile", str(HAND6), "-o", str(out), "--platform", "eos,frr"]
    assert runner.invoke(build_app(), args).exit_code == 0
    assert (out / "configs/eos/leaf3.cfg").is_file() and (out / "configs/frr/leaf3").is_dir()
    before = (out / "configs/eos/leaf3.cfg").stat().st_mtime_ns
    result = runner.invoke(build_app(), [*args, "--limit", "leaf1,leaf2"])
    assert result.exit_code == 0, result.output
    # Switches outside --limit keep their files; unchanged files are not rewritten.
    assert (out / "configs/eos/leaf3.cfg").stat().st_mtime_ns == before
    result = runner.invoke(build_app(), [*args, "--limit", "leaf9"])
    assert result.exit_code == 2 and "unknown switch 'leaf9'" in result.stderr
    assert "Traceback" not in result.output


def test_batfish_snapshot_is_written_only_when_asked(tmp_path: Path) -> None:
    out = tmp_path / "out"
    runner = CliRunner()
    args = ["compile", str(HAND6), "-o", str(out)]
    assert runner.invoke(build_app(), args).exit_code == 0
    assert (out / "configs").is_dir() and not (out / "batfish").exists()
    assert runner.invoke(build_app(), [*args, "--batfish"]).exit_code == 0
    assert (out / "batfish/batfish/layer1_topology.json").is_file()
    # A limited run without --batfish drops the snapshot rather than mix old and new devices.
    result = runner.invoke(build_app(), [*args, "--limit", "leaf1"])
    assert result.exit_code == 0, result.output
    assert (out / "configs").is_dir() and not (out / "batfish").exists()


def _rendered(case: str) -> dict[str, bytes]:
    inventory, platforms = GOLDEN_CASES[case]
    files = api.build_output(api.compile_fabric(inventory), platforms=platforms, batfish=True).files
    keep = ("configs/", "hosts/", "batfish/")
    return {k: v for k, v in files.items() if k.startswith(keep)}


@pytest.mark.parametrize("case", sorted(GOLDEN_CASES))
def test_golden_output(case: str) -> None:
    files = _rendered(case)
    folder = GOLDEN / case
    if os.environ.get("FATPATHS_UPDATE_GOLDEN") == "1":
        shutil.rmtree(folder, ignore_errors=True)
        for relative, data in files.items():
            (folder / relative).parent.mkdir(parents=True, exist_ok=True)
            (folder / relative).write_bytes(data)
    stored = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert stored == set(files), "rendered file set changed; see the module docstring"
    for relative, data in sorted(files.items()):
        assert (folder / relative).read_bytes().decode() == data.decode(), relative


# Batfish's VendorConfigurationFormatDetector calls a file ARISTA when one of these matches;
# without them a file that starts with `!` is taken for Cisco IOS.
ARISTA_DEVICE_LINE = re.compile(r"(?m)^! device: .*\(.*EOS-\d.*")
ARISTA_BOOT_LINE = re.compile(r"(?m)^.*boot system flash.*\.swi")


EOS_CASES = sorted(
    case for case, (_, platforms) in GOLDEN_CASES.items() if platforms is None or "eos" in platforms
)


@pytest.mark.parametrize("case", EOS_CASES)
def test_eos_golden_files_start_as_an_eos_running_config(case: str) -> None:
    configs = sorted((GOLDEN / case).glob("**/eos/*.cfg")) + sorted(
        (GOLDEN / case).glob("batfish/configs/*.cfg")
    )
    assert configs
    for path in configs:
        lines = path.read_text().splitlines()
        assert ARISTA_DEVICE_LINE.match(lines[0]), path
        assert lines[0] == f"! device: {path.stem} (DCS-7050CX3-32S, EOS-4.32.0F)"
        assert ARISTA_BOOT_LINE.search("\n".join(lines[:4])), path
        assert lines[-1] == "end"


def test_dual_stack_eos_keeps_its_ipv6_lines() -> None:
    config = (GOLDEN / "hand6-dual/configs/eos/leaf1.cfg").read_text()
    assert "ipv6 unicast-routing" in config
    assert re.search(r"(?m)^   ipv6 address fd00:fa7:1::/127$", config)
    assert len(re.findall(r"(?m)^ipv6 route \S+ \S+$", config)) == 3 * 5


def _eos_mtus(config: str) -> dict[str, int]:
    mtus: dict[str, int] = {}
    interface = ""
    for line in config.splitlines():
        if line.startswith("interface "):
            interface = line.split()[1]
        elif line.startswith("   mtu "):
            mtus[interface] = int(line.split()[1])
    return mtus


@pytest.mark.parametrize("case", ["hand6", "hand6-dual"])
def test_eos_and_sonic_set_one_fabric_mtu(case: str) -> None:
    for switch in [f"leaf{i}" for i in range(1, 7)]:
        eos = _eos_mtus((GOLDEN / case / f"configs/eos/{switch}.cfg").read_text())
        db = json.loads((GOLDEN / case / f"configs/sonic/{switch}/config_db.json").read_text())
        routed = {k for k in db["INTERFACE"] if "|" not in k}
        # Every routed port and the host gateway SVI carry it on EOS, every port on SONiC.
        assert set(eos) == routed | {"Vlan1000"}
        assert set(eos.values()) == {FABRIC_MTU}
        assert {int(port["mtu"]) for port in db["PORT"].values()} == {FABRIC_MTU}
    # The frr/linux output sets no MTU: the kernel's default, which FABRIC_MTU matches.
    assert FABRIC_MTU == 1500
    assert "mtu" not in (GOLDEN / "hand6/configs/frr/leaf1/interfaces.sh").read_text()


def test_sonic_config_db_is_a_config_load_patch() -> None:
    db = json.loads((GOLDEN / "hand6/configs/sonic/leaf1/config_db.json").read_text())
    metadata = db["DEVICE_METADATA"]["localhost"]
    # split-unified: docker-fpm-frr keeps our integrated frr.conf and boots FRR from it.
    assert metadata["docker_routing_config_mode"] == "split-unified"
    assert metadata["hostname"] == "leaf1"
    # What only the box knows stays out, so `config load` merges without clobbering it.
    assert not {"hwsku", "platform", "mac"} & set(metadata)
    for port in db["PORT"].values():
        assert not {"lanes", "alias", "index"} & set(port)
    frr = (GOLDEN / "hand6/configs/sonic/leaf1/frr.conf").read_text()
    assert "service integrated-vtysh-config" in frr


def _mptcp(script: str) -> tuple[list[int], list[tuple[str, str]]]:
    """(subflow and add_addr_accepted limits, [(endpoint address, device)]) of a host plan."""
    limit_line = r"^ip mptcp limits set subflow (\d+) add_addr_accepted (\d+)$"
    limits = re.findall(limit_line, script, re.M)
    endpoints = re.findall(r"^ip mptcp endpoint add (\S+) dev (\S+) signal$", script, re.M)
    return [int(x) for pair in limits for x in pair], endpoints


def _own_addresses(script: str) -> dict[str, str]:
    """Every address the plan puts on the host -> its device."""
    found = re.findall(r"^ip (?:-6 )?addr replace (\S+) dev (\S+)", script, re.M)
    return {address.split("/")[0]: device for address, device in found}


def _assert_per_family_endpoints(script: str, families: set[int], layers: int) -> None:
    limits, endpoints = _mptcp(script)
    versions = [ipaddress.ip_address(address).version for address, _ in endpoints]
    # IPv6 first, then IPv4: a v6 connection's budget fills before any v4 address is offered.
    assert versions == sorted(versions, reverse=True)
    assert {v: versions.count(v) for v in set(versions)} == {v: layers - 1 for v in families}
    # Limits sized to one family's endpoint count, never the sum over families.
    # Subflow room for the passive end's futile joins beside the client's own.
    assert limits == [min(2 * (layers - 1), 8), layers - 1]
    own = _own_addresses(script)
    first_layer = set(list(own)[: len(families)])
    for address, device in endpoints:
        assert own[address] == device and address not in first_layer


def test_dual_stack_host_plans_announce_each_family_apart() -> None:
    plans = sorted((GOLDEN / "hand6-dual/hosts").glob("*.sh"))
    assert len(plans) == 12
    for plan in plans:
        _assert_per_family_endpoints(plan.read_text(), {4, 6}, layers=3)
    # Single-family fabrics are unchanged: that family's endpoints, sized the same way.
    for plan in sorted((GOLDEN / "hand6/hosts").glob("*.sh")):
        _assert_per_family_endpoints(plan.read_text(), {4}, layers=3)


@pytest.mark.parametrize(
    ("inventory", "family", "versions"),
    [("hand6-vlan.yaml", "dual", {4, 6}), ("hand6-dual.yaml", "ipv6", {6})],
)
def test_host_plans_announce_every_family_they_address(
    tmp_path: Path, inventory: str, family: str, versions: set[int]
) -> None:
    text = (GOLDEN / inventory).read_text()
    text = re.sub(r"(?m)^  family: \w+\n", "", text)
    text = text.replace("addressing:\n", f"addressing:\n  family: {family}\n")
    if "addressing:" not in text:
        text += f"addressing:\n  family: {family}\n"
    (tmp_path / "fabric.yaml").write_text(text)
    files = api.build_output(api.compile_fabric(tmp_path / "fabric.yaml"), platforms=["eos"]).files
    plans = [data.decode() for name, data in files.items() if re.match(r"hosts/.*\.sh$", name)]
    assert len(plans) == 12
    for script in plans:
        _assert_per_family_endpoints(script, versions, layers=3)


@pytest.mark.parametrize("case", ["hand6", "hand6-dual", "hand6-v6"])
@pytest.mark.parametrize("pacing_mbit", [None, 2500])
def test_single_plane_prefix_plans_match_the_template(case: str, pacing_mbit: int | None) -> None:
    """The string-built prefix plan is the template's branch byte for byte, with and without
    pacing and MPTCP endpoints (the goldens have no pacing)."""
    compiled = api.compile_fabric(GOLDEN_CASES[case][0])
    template = environment().get_template("hosts/host.sh.j2")
    for host in compiled.fabric.hosts:
        view = replace(
            host_view(compiled.fabric, compiled.address_plan, host), pacing_mbit=pacing_mbit
        )
        for shown in (view, replace(view, mptcp_endpoints=[], mptcp_limit=0)):
            assert render_host(shown) == template.render(host=shown)


@pytest.mark.parametrize("case", ["hand6", "hand6-dual", "hand6-v6"])
def test_kernel_switch_scripts_match_the_template(case: str) -> None:
    """frr's string-built `interfaces.sh` body is linux's `interfaces_body.sh.j2` byte for byte."""
    compiled = api.compile_fabric(GOLDEN_CASES[case][0])
    builder = ViewBuilder(compiled, compiled.address_plan)
    body = template(PLATFORMS["linux"], "interfaces_body.sh.j2")
    for s in range(compiled.fabric.nr):
        view = builder.view(s, "frr")
        assert interfaces_body(view) == body.render(view=view)


def test_route_lines_written_natively_equal_the_plain_format() -> None:
    prefixes = PackedTexts.of(["10.0.0.0/27", "2001:db8::/64", "é-net/1"])
    hops = PackedTexts.of(["", "172.16.0.1", "fe80::1"])
    table = RouteTable(prefixes, np.array([2, 0, 1]), hops, np.array([1, 2, 1]))
    assert table.prefixes == ["é-net/1", "10.0.0.0/27", "2001:db8::/64"]
    assert table.next_hops == ["172.16.0.1", "fe80::1", "172.16.0.1"]
    pairs = list(zip(table.prefixes, table.next_hops, strict=True))
    for line in ("ip route %s %s", "set route %s next-hop %s;", "%s%s"):
        assert route_lines(table, line) == "\n".join(line % pair for pair in pairs)
    # A literal percent sign goes through Python's own formatting.
    assert route_lines(table, "%s via %s 100%%").splitlines()[0] == "é-net/1 via 172.16.0.1 100%"
    assert route_lines(EMPTY_ROUTES, "ip route %s %s") == ""


def test_route_tables_refuse_a_next_hop_that_is_not_a_neighbour() -> None:
    subnets = PackedTexts.of(["10.0.0.0/27", "10.0.0.32/27"])
    peers = PackedTexts.of(["", "172.16.0.1"])
    assert route_table(subnets, peers, np.array([0]), np.array([1])).next_hops == ["172.16.0.1"]
    with pytest.raises(KeyError):
        route_table(subnets, peers, np.array([1]), np.array([0]))
    with pytest.raises(ValueError):
        RouteTable(subnets, np.array([0, 1]), peers, np.array([1]))


def test_sparse_packed_texts_equal_the_dense_ones() -> None:
    entries = {4: "fe80::é", 1: "172.16.0.1", 2: "172.16.0.3"}
    dense = PackedTexts.of([entries.get(i, "") for i in range(6)])
    sparse = PackedTexts.sparse(6, entries)
    assert sparse.data == dense.data
    assert sparse.offsets.tolist() == dense.offsets.tolist()
    assert sparse.texts(np.arange(6)) == ["", "172.16.0.1", "172.16.0.3", "", "fe80::é", ""]
    assert PackedTexts.sparse(3, {}).offsets.tolist() == [0, 0, 0, 0]


def test_mptcp_limit_is_one_familys_endpoints_within_the_kernel_cap() -> None:
    from fatpaths_cfg.render.hosts import MPTCP_MAX_LIMIT, MptcpEndpoint, mptcp_limit

    v4 = [MptcpEndpoint(f"10.0.{i}.2", "eth0") for i in range(3)]
    v6 = [MptcpEndpoint(f"fd00:{i}::2", "eth0") for i in range(2)]
    assert mptcp_limit([]) == 0
    assert mptcp_limit(v6 + v4) == 3
    assert mptcp_limit(v6 + v6 + v6 + v4) == 6
    many = [MptcpEndpoint(f"10.1.{i}.2", "eth0") for i in range(MPTCP_MAX_LIMIT + 3)]
    assert mptcp_limit(many) == MPTCP_MAX_LIMIT
