"""Parallel dataplanes in the netns lab: real namespaces, real FRR, every host with one uplink
per plane; a whole plane failed and an MPTCP connection carrying on over the other."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from lab_fixtures import compiled_lab_output, torn_down_after
from rich.console import Console
from test_lab import invoke

from fatpaths_cfg.lab.mptcp import print_demo, run_demo
from fatpaths_cfg.lab.netns import run
from fatpaths_cfg.lab.plan import build_plan
from fatpaths_cfg.lab.probe import PathModel, plan_probes
from fatpaths_cfg.lab.state import load_state

REPO = Path(__file__).resolve().parent.parent
HAND2 = REPO / "inventories" / "hand-2planes.yaml"

pytestmark = [pytest.mark.lab, pytest.mark.usefixtures("mptcp_lab")]


@pytest.fixture
def hand2(tmp_path: Path) -> Iterator[Path]:
    # Shaped hosts, so `lab test` reads the qdisc of every uplink of every plane back.
    inventory = tmp_path / "hand-2planes.yaml"
    text = HAND2.read_text()
    assert "  link_speed: 50G" in text
    shaped = "  link_speed: 50G\n  host_flow_rate: 10G"
    inventory.write_text(text.replace("  link_speed: 50G", shaped))
    out = compiled_lab_output(inventory, tmp_path / "hand2")
    with torn_down_after(out):
        code, output = invoke("lab", "up", str(out))
        assert code == 0, output
        yield out


def test_every_host_has_one_uplink_per_plane(hand2: Path) -> None:
    plan = build_plan(hand2)
    assert plan.planes == 2
    for host in plan.hosts:
        for port in host.ports:
            shown = run(["ip", "-n", host.netns, "-4", "-o", "addr", "show", "dev", port.device])
            found = {line.split()[3] for line in shown.splitlines()}
            wanted = {
                address
                for (plane, _), address in host.plane_addresses.items()
                if plane == port.plane
            }
            assert {a.split("/")[0] for a in found} == wanted
            # The far end of the cable is the host's switch in that plane.
            peer = run(
                ["ip", "-n", plan.switches[port.switch].netns, "link", "show", port.switch_ifname]
            )
            assert "state UP" in peer or "LOWER_UP" in peer


def test_pings_every_pair_plane_and_layer_and_survives_a_failed_plane(hand2: Path) -> None:
    plan = build_plan(hand2)
    probes = plan_probes(plan)
    # 4 switches per plane with hosts: 12 ordered pairs, per plane and layer.
    assert {(p.plane, p.layer) for p in probes} == {(0, 1), (0, 2), (1, 1), (1, 2)}
    assert len(probes) == 2 * 2 * 12
    code, output = invoke("lab", "test", str(hand2))
    assert code == 0, output
    assert "48 pings" in output and "failures: 0" in output
    assert "traceroute mismatches: 0" in output
    # 4 hosts x 2 uplinks, each shaped by its host plan and read back with tc.
    assert "host shaping: 8/8 hosts shaped to 10000 Mb/s" in output
    # Connecting to a destination's low-latency address leaves on that plane from the listed
    # source and crosses the listed hops (`ip route get` and traceroute in the namespaces).
    assert "low latency: 8/8 sampled host pairs" in output

    code, output = invoke("lab", "fail", str(hand2), "--plane", "1")
    assert code == 0, output
    assert "plane 1: 4 links down" in output
    state = load_state(plan.state_file)
    assert state is not None and sorted(state.failed_links) == plan.plane_links(1)
    model = PathModel(plan)
    failed = set(plan.plane_links(1))
    broken = [
        p
        for p in probes
        if (
            model.links_used(p.layer, p.src_switch, p.dst_switch)
            | model.links_used(p.layer, p.dst_switch, p.src_switch)
        )
        & failed
    ]
    assert {p.plane for p in broken} == {1} and len(broken) == 24
    code, output = invoke("lab", "test", str(hand2))
    assert code == 1, output
    assert "failures: 24 (0 not explained by failed links)" in output
    # Plane 0 still connects every host pair it was probed for; low-latency choices are
    # checked on it alone (the table is compiled and does not follow failures).
    assert "at least one working plane and layer: 12/12" in output
    low = re.search(r"low latency: (\d+)/(\d+) sampled", output)
    assert low is not None and low.group(1) == low.group(2), output

    code, output = invoke("lab", "repair", str(hand2))
    assert code == 0, output
    code, output = invoke("lab", "test", str(hand2))
    assert code == 0, output


def test_mptcp_carries_on_over_the_other_plane(hand2: Path) -> None:
    demo = run_demo(hand2, seconds=4.0, plane=1)
    console = Console(file=io.StringIO(), width=200)
    print_demo(console, demo)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert demo.failed_plane == 1
    # Subflows on both planes carried data before the failure (ss -ti bytes_acked).
    assert demo.planes_used == [0, 1], text
    assert demo.subflows_before is not None and demo.subflows_before >= 3, text
    # After it, plane 1 acked nothing more and plane 0 carried the transfer on.
    assert demo.plane_growth(failed=True) == 0, text
    assert demo.plane_growth(failed=False) > 0, text
    assert demo.bytes_at_end - demo.bytes_at_failure > demo.bytes_at_failure // 4 > 0, text
    assert demo.ok, text
    assert "failed plane 1 (all its links)" in text
    # The plane is repaired and the hosts' own MPTCP settings are back.
    state = load_state(build_plan(hand2).state_file)
    assert state is not None and state.failed_links == []
    h1 = (hand2 / "hosts" / f"{demo.client}.sh").read_text()
    client = next(h for h in build_plan(hand2).hosts if h.name == demo.client)
    shown = run(["ip", "-n", client.netns, "mptcp", "endpoint", "show"])
    assert shown.count("signal") == h1.count("signal\n")
