"""MPTCP across layers on a real lab: subflows on several layers, surviving a one-layer link."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from lab_fixtures import compiled_lab_output

from fatpaths_cfg.lab.frr import frr_available
from fatpaths_cfg.lab.lifecycle import down, up
from fatpaths_cfg.lab.mptcp import run_demo
from fatpaths_cfg.lab.netns import existing_netns, run
from fatpaths_cfg.lab.plan import build_plan
from fatpaths_cfg.lab.state import load_state

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.lab


@pytest.fixture(autouse=True)
def lab_prerequisites() -> None:
    # A missing prerequisite fails the test instead of skipping it: `.ci/run` installs FRR and
    # runs as root, so a skip here would only hide a broken CI machine.
    assert os.geteuid() == 0, "the lab needs root (deselect with -m 'not lab')"
    assert frr_available(), "FRR is not installed (apt-get install frr)"
    assert Path("/proc/sys/net/mptcp/enabled").exists(), "this kernel has no MPTCP"


@pytest.fixture
def hand6_up(tmp_path: Path) -> Iterator[Path]:
    out = compiled_lab_output(REPO / "inventories" / "hand-6.yaml", tmp_path / "hand6")
    prefix = f"fp-{build_plan(out).lab}-"
    try:
        up(out)
        yield out
    finally:
        down(out)
        assert not [ns for ns in existing_netns() if ns.startswith(prefix)]


def test_one_connection_spans_layers_and_survives_a_link_failure(hand6_up: Path) -> None:
    demo = run_demo(hand6_up, seconds=4.0)
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
