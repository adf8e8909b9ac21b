"""MPTCP across layers on a real lab: subflows on several layers, surviving a one-layer link."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from fatpaths_cfg.lab.mptcp import print_demo, run_demo
from fatpaths_cfg.lab.netns import run
from fatpaths_cfg.lab.plan import build_plan
from fatpaths_cfg.lab.state import load_state

REPO = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.lab, pytest.mark.usefixtures("mptcp_lab")]


def mptcp_settings(out: Path) -> dict[str, tuple[str, str]]:
    return {
        host.name: (
            run(["ip", "-n", host.netns, "mptcp", "limits", "show"]),
            run(["ip", "-n", host.netns, "mptcp", "endpoint", "show"]),
        )
        for host in build_plan(out).hosts
    }


def test_one_connection_spans_layers_and_survives_a_link_failure(hand6_up: Path) -> None:
    before = mptcp_settings(hand6_up)
    assert any(endpoints for _, endpoints in before.values()), "host plans set no endpoints"
    demo = run_demo(hand6_up, seconds=4.0)
    # The demo's two hosts are back on their host plans' endpoints and limits.
    assert mptcp_settings(hand6_up) == before
    assert sorted(demo.restored_hosts) == sorted([demo.client, demo.server])
    # The raw ss views are kept in the lab directory, not printed.
    assert demo.ss_file == hand6_up / "lab" / "mptcp-ss.txt"
    assert "bytes_acked" in demo.ss_file.read_text()
    printed = io.StringIO()
    print_demo(Console(file=printed, width=200), demo)
    assert "bytes_acked" not in printed.getvalue()
    assert str(demo.failed_ends) in printed.getvalue() and "ok:" in printed.getvalue()
    # Subflows to at least two layers' addresses carried data (ss -ti bytes_acked).
    assert len(demo.layers_used) >= 2, demo.ss_output
    assert demo.failed_layer in demo.layers_used
    # The failed layer's subflow stalls; another layer's keeps moving data.
    assert demo.growth_after_failure(demo.failed_layer) == 0, demo.ss_output
    assert any(
        demo.growth_after_failure(layer) > 0
        for layer in demo.layers_used
        if layer != demo.failed_layer
    )
    assert demo.bytes_at_end > demo.bytes_at_failure > 0
    assert demo.ok
    # The demo repaired its link and the lab still routes every layer.
    state = load_state(hand6_up / "lab" / "state.json")
    assert state is not None and state.failed_links == []
    plan = build_plan(hand6_up)
    pair = plan.link_pair(demo.failed_link)
    assert "state UP" in run(["ip", "-n", pair.a_ns, "link", "show", pair.a_if])


def test_mptcp_settings_read_back_as_arguments_that_set_them() -> None:
    from fatpaths_cfg.lab.mptcp import parse_settings

    settings = parse_settings(
        "add_addr_accepted 2 subflows 2 \n",
        "10.0.0.2 id 1 signal dev eth0 \n10.0.1.2 id 2 signal dev eth0 \n",
    )
    assert settings.limits == ["add_addr_accepted", "2", "subflow", "2"]
    assert settings.endpoints == [
        ["10.0.0.2", "id", "1", "signal", "dev", "eth0"],
        ["10.0.1.2", "id", "2", "signal", "dev", "eth0"],
    ]
