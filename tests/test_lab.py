"""The netns lab end to end on the hand-6 fabric: real namespaces, real FRR, real pings.

Every test tears its lab down in a fixture finaliser, and asserts no namespace of the lab is
left, whatever happened in between.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from lab_fixtures import compiled_lab_output, require_lab, torn_down_after
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.cli.lab import add_commands
from fatpaths_cfg.lab.lifecycle import down
from fatpaths_cfg.lab.names import lab_id
from fatpaths_cfg.lab.netns import existing_netns
from fatpaths_cfg.lab.plan import LabPlan, build_plan
from fatpaths_cfg.lab.probe import PathModel, plan_probes
from fatpaths_cfg.lab.state import load_state, process_starttime

REPO = Path(__file__).resolve().parent.parent
HAND6 = REPO / "inventories" / "hand-6.yaml"
HAND6_DUAL = REPO / "tests" / "golden" / "hand6-dual.yaml"

pytestmark = pytest.mark.lab


@pytest.fixture(autouse=True)
def lab_prerequisites() -> None:
    require_lab()


def cli() -> typer.Typer:
    app = typer.Typer()
    add_commands(app)

    @app.callback()
    def _root() -> None:
        """Keep `lab` a sub-command even when it is the only one."""

    return app


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli(), list(args))
    return result.exit_code, result.output


def lab_namespaces(out: Path) -> set[str]:
    prefix = f"fp-{build_plan(out).lab}-"
    return {ns for ns in existing_netns() if ns.startswith(prefix)}


@pytest.fixture
def hand6(tmp_path: Path) -> Iterator[Path]:
    out = compiled_lab_output(HAND6, tmp_path / "hand6")
    with torn_down_after(out):
        yield out


def test_up_test_fail_repair_down(hand6: Path) -> None:
    code, output = invoke("lab", "up", str(hand6))
    assert code == 0, output
    state = load_state(hand6 / "lab" / "state.json")
    assert state is not None and state.phase == "up"
    assert lab_namespaces(hand6) == set(state.namespaces)
    assert len(state.namespaces) == 6 + 12
    assert len(state.daemons) == 12
    for record in state.daemons:
        assert record.pid is not None and process_starttime(record.pid) == record.starttime
        ns_of_pid = subprocess.run(
            ["ip", "netns", "identify", str(record.pid)], capture_output=True, text=True
        ).stdout.strip()
        assert ns_of_pid == record.netns

    code, output = invoke("lab", "test", str(hand6))
    assert code == 0, output
    assert "traceroute mismatches: 0" in output
    assert "at least one working layer: 30/30" in output

    # Fail a link the compiled layers use, and predict which (pair, layer) must break.
    plan = build_plan(hand6)
    model = PathModel(plan)
    link = _link(plan, "leaf1", "leaf4")  # leaf1:Ethernet3 - leaf4:Ethernet3, a chord
    broken = {
        (p.src_switch, p.dst_switch, p.layer)
        for p in plan_probes(plan)
        if link
        in model.links_used(p.layer, p.src_switch, p.dst_switch)
        | model.links_used(p.layer, p.dst_switch, p.src_switch)
    }
    assert broken, "the chosen link carries no probe; the test would prove nothing"
    code, output = invoke("lab", "fail", str(hand6), "leaf1:Ethernet3")
    assert code == 0, output
    assert f"link {link} (leaf1:Ethernet3 - leaf4:Ethernet3) is down" in output
    code, output = invoke("lab", "test", str(hand6))
    assert code == 1, output
    assert f"failures: {len(broken)} (0 not explained by failed links)" in output
    pairs = {(s, t) for s, t, _ in broken}
    lost = {pair for pair in pairs if all((*pair, layer) in broken for layer in plan.layer_ids)}
    assert f"at least one working layer: {30 - len(lost)}/30" in output

    code, output = invoke("lab", "repair", str(hand6))
    assert code == 0, output
    # Said by name, the way `lab fail` took it: which link, which ports.
    assert output.splitlines() == [
        f"repaired link {link} (leaf1:Ethernet3 - leaf4:Ethernet3): up again, routes back"
    ]
    code, output = invoke("lab", "repair", str(hand6))
    assert code == 0 and "nothing to repair" in output, output
    code, output = invoke("lab", "test", str(hand6))
    assert code == 0, output

    pids = [r.pid for r in state.daemons if r.pid is not None]
    code, output = invoke("lab", "down", str(hand6))
    assert code == 0, output
    assert not lab_namespaces(hand6)
    assert not (hand6 / "lab" / "state.json").exists()
    assert all(process_starttime(pid) is None for pid in pids)


def test_down_after_crash_mid_up(hand6: Path) -> None:
    """SIGKILL `up` once its daemons are recorded; `down` must still remove everything."""
    script = (
        "import sys; from pathlib import Path; from fatpaths_cfg.lab.lifecycle import up; "
        "up(Path(sys.argv[1]))"
    )
    child = subprocess.Popen([sys.executable, "-c", script, str(hand6)])
    state_file = hand6 / "lab" / "state.json"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and child.poll() is None:
        if state_file.exists() and json.loads(state_file.read_text())["daemons"]:
            break
        time.sleep(0.005)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert lab_namespaces(hand6), "up was killed before creating anything"
    summary = down(hand6)
    assert summary is not None
    assert not lab_namespaces(hand6)
    assert subprocess.run(["pgrep", "-f", str(hand6)], capture_output=True).returncode != 0


def test_never_touches_foreign_namespaces(hand6: Path) -> None:
    lab = build_plan(hand6).lab
    stranger = "fp-stranger-keep"
    squatter = f"fp-{lab}-s0"  # a namespace with our name that our state does not record
    for ns in (stranger, squatter):
        subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        code, output = invoke("lab", "up", str(hand6))
        assert code == 2 and squatter in output, output
        assert {stranger, squatter} <= existing_netns()
        subprocess.run(["ip", "netns", "del", squatter], check=True)
        assert invoke("lab", "up", str(hand6))[0] == 0
        assert invoke("lab", "down", str(hand6))[0] == 0
        assert stranger in existing_netns()
    finally:
        for ns in (stranger, squatter):
            subprocess.run(["ip", "netns", "del", ns], check=False, capture_output=True)


def test_vlan_encoding_is_refused(tmp_path: Path) -> None:
    vlan = tmp_path / "hand6-vlan"
    api.compile_to_directory(REPO / "tests" / "golden" / "hand6-vlan.yaml", vlan)
    prefix = f"fp-{lab_id('hand6vlan', vlan)}-"
    code, output = invoke("lab", "up", str(vlan))
    assert code == 2
    assert "VLAN" in output and "802.1Q" in output
    assert not [ns for ns in existing_netns() if ns.startswith(prefix)]


def test_linux_platform_switches_forward_without_frr(tmp_path: Path) -> None:
    """`compile --platform linux` renders plain iproute2 switches; the lab runs those instead
    of the inventory's frr, with no routing daemon at all."""
    out = tmp_path / "hand6-linux"
    api.build_output(api.compile_fabric(HAND6), platforms=["linux"]).commit(out)
    assert not (out / "configs" / "frr").exists()
    try:
        code, output = invoke("lab", "up", str(out))
        assert code == 0, output
        state = load_state(out / "lab" / "state.json")
        assert state is not None and state.daemons == []
        assert {node.platform for node in build_plan(out).switches} == {"linux"}
        code, output = invoke("lab", "test", str(out))
        assert code == 0, output
        assert "traceroute mismatches: 0" in output
    finally:
        down(out)
    assert not lab_namespaces(out)


def _link(plan: LabPlan, a: str, b: str) -> int:
    """The index of the link between two switches (links are numbered by their ends' names)."""
    fabric = plan.compiled.fabric
    index = fabric.switch_index
    return fabric.link_between[(index[a], index[b])]


def test_dual_stack_lab_pings_and_traces_both_families(tmp_path: Path) -> None:
    out = compiled_lab_output(HAND6_DUAL, tmp_path / "hand6-dual")
    try:
        code, output = invoke("lab", "up", str(out))
        assert code == 0, output
        code, output = invoke("lab", "test", str(out))
        assert code == 0, output
        assert "180 pings, 48 traceroutes" in output
        assert "traceroute mismatches: 0" in output
        assert output.count("IPv6") == 3 and output.count("IPv4") == 3  # a row per layer

        # A failed link breaks the same (pair, layer) combinations in both families, each
        # predicted from the compiled tables.
        plan = build_plan(out)
        model = PathModel(plan)
        link = _link(plan, "leaf1", "leaf4")
        broken = [
            p
            for p in plan_probes(plan)
            if link
            in model.links_used(p.layer, p.src_switch, p.dst_switch)
            | model.links_used(p.layer, p.dst_switch, p.src_switch)
        ]
        assert {p.family for p in broken} == {4, 6}
        assert invoke("lab", "fail", str(out), "leaf1:Ethernet3")[0] == 0
        code, output = invoke("lab", "test", str(out))
        assert code == 1, output
        assert f"failures: {len(broken)} (0 not explained by failed links)" in output
        assert "IPv6 (h" in output and "IPv4 (h" in output
    finally:
        down(out)
    assert not lab_namespaces(out)
