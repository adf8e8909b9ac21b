"""A scripted failure drill on the hand-6 lab: `lab test --expect-failed-links` answers with
its exit code, `lab repair` of one link while another is down returns, and `lab mptcp` never
waits for ever (it refuses while links are down; a peer that gives up ends the demo)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from fatpaths_cfg.cli.lab import add_commands
from fatpaths_cfg.lab.mptcp import pick_demo, run_demo
from fatpaths_cfg.lab.netns import LabWaitError, run
from fatpaths_cfg.lab.plan import LabPlan, build_plan
from fatpaths_cfg.lab.state import load_state

REPO = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.lab, pytest.mark.usefixtures("mptcp_lab")]


def invoke(*args: str) -> tuple[int, str]:
    app = typer.Typer()
    add_commands(app)

    @app.callback()
    def _root() -> None:
        """Keep `lab` a sub-command."""

    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def link_between(plan: LabPlan, a: str, b: str) -> int:
    fabric = plan.compiled.fabric
    return fabric.link_between[(fabric.switch_index[a], fabric.switch_index[b])]


def test_expect_failed_links_exits_0_only_when_the_failed_links_explain_every_failure(
    hand6_up: Path,
) -> None:
    out = str(hand6_up)
    plan = build_plan(hand6_up)
    code, output = invoke("lab", "fail", out, "leaf1:Ethernet3")
    assert code == 0, output
    code, output = invoke("lab", "test", out)
    assert code == 1 and "(0 not explained by failed links)" in output, output
    code, output = invoke("lab", "test", out, "--expect-failed-links")
    assert code == 0, output
    failed = link_between(plan, "leaf1", "leaf4")
    assert f"is explained by the failed links ({failed})" in output
    # A link down behind the lab's back (no `lab fail`): its failures are not explained.
    other = link_between(plan, "leaf2", "leaf5")
    pair = plan.link_pair(other)
    run(["ip", "-n", pair.a_ns, "link", "set", pair.a_if, "down"])
    run(["ip", "-n", pair.b_ns, "link", "set", pair.b_if, "down"])
    code, output = invoke("lab", "test", out, "--expect-failed-links")
    assert code == 1, output
    assert "not explained by the failed links" in output and "FAILED" in output
    run(["ip", "-n", pair.a_ns, "link", "set", pair.a_if, "up"])
    run(["ip", "-n", pair.b_ns, "link", "set", pair.b_if, "up"])


def test_repairing_one_link_while_another_is_down_does_not_wait_for_the_other(
    hand6_up: Path,
) -> None:
    out = str(hand6_up)
    plan = build_plan(hand6_up)
    # Two failed links on leaf1: the routes over the one still down never come back, so
    # repair must not wait for them (it used to time out after 30 s with a traceback).
    first, second = link_between(plan, "leaf1", "leaf2"), link_between(plan, "leaf1", "leaf4")
    assert invoke("lab", "fail", out, str(first))[0] == 0
    assert invoke("lab", "fail", out, str(second))[0] == 0
    started = time.monotonic()
    code, output = invoke("lab", "repair", out, str(second))
    assert code == 0, output
    assert time.monotonic() - started < 15, "repair waited for routes over a link still down"
    state = load_state(hand6_up / "lab" / "state.json")
    assert state is not None and state.failed_links == [first]
    code, output = invoke("lab", "test", out, "--expect-failed-links")
    assert code == 0, output
    assert invoke("lab", "repair", out)[0] == 0
    code, output = invoke("lab", "test", out)
    assert code == 0, output


def test_mptcp_refuses_while_links_are_down_and_names_them(hand6_up: Path) -> None:
    out = str(hand6_up)
    assert invoke("lab", "fail", out, "leaf1:Ethernet1")[0] == 0
    started = time.monotonic()
    code, output = invoke("lab", "mptcp", out, "--seconds", "3")
    assert code == 2, output
    assert "links are down (link" in output and "leaf1:Ethernet1" in output, output
    assert f"fatpaths lab repair {out}" in output
    assert time.monotonic() - started < 10
    # Nothing was changed: the link is still recorded as failed, no demo file was written.
    state = load_state(hand6_up / "lab" / "state.json")
    assert state is not None and len(state.failed_links) == 1
    assert not (hand6_up / "lab" / "mptcp-ss.txt").exists()


def test_mptcp_ends_with_the_peer_s_reason_when_the_sender_cannot_connect(
    hand6_up: Path,
) -> None:
    plan = build_plan(hand6_up)
    client, server, _, _ = pick_demo(plan)
    before = run(["ip", "-n", client.netns, "mptcp", "endpoint", "show"])
    # The client's uplink down behind the lab's back: connect() fails at once.
    run(["ip", "-n", client.netns, "link", "set", "eth0", "down"])
    started = time.monotonic()
    with pytest.raises(LabWaitError) as caught:
        run_demo(hand6_up, seconds=3.0)
    assert time.monotonic() - started < 20, "the demo waited for a sender that had died"
    assert "sender" in str(caught.value) and "cannot connect" in str(caught.value)
    assert "lab test" in caught.value.hint
    # No link was failed (so none left to repair) and the hosts' settings are back.
    state = load_state(hand6_up / "lab" / "state.json")
    assert state is not None and state.failed_links == []
    assert run(["ip", "-n", client.netns, "mptcp", "endpoint", "show"]) == before
    leftover = subprocess.run(
        ["ip", "netns", "pids", server.netns], capture_output=True, text=True
    ).stdout.split()
    assert leftover == [], "the receiver was left running"
