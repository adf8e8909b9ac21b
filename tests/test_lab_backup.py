"""Backup routes in the netns lab: after `lab fail`, the (pair, layer) probes whose switches
hold a loop-free alternate keep answering (zebra withdraws the static route whose interface
went down and installs the floating one), and the others fail exactly as predicted."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lab_fixtures import compiled_lab_output, require_lab, torn_down_after

from fatpaths_cfg.lab.lifecycle import fail, up
from fatpaths_cfg.lab.plan import build_plan
from fatpaths_cfg.lab.probe import run_lab_test

REPO = Path(__file__).resolve().parent.parent
HAND6_LFA = REPO / "tests" / "golden" / "hand6-lfa.yaml"

pytestmark = pytest.mark.lab


@pytest.fixture
def hand6_lfa(tmp_path: Path) -> Iterator[Path]:
    require_lab()
    out = compiled_lab_output(HAND6_LFA, tmp_path / "hand6-lfa")
    with torn_down_after(out):
        yield out


def test_probes_with_an_alternate_survive_a_failed_cable(hand6_lfa: Path) -> None:
    up(hand6_lfa)
    plan = build_plan(hand6_lfa)
    before = run_lab_test(plan, [])
    assert before.ok and not before.crossed
    # leaf1:Ethernet3 - leaf4:Ethernet3, a chord: some routes over it have an alternate.
    link = fail(hand6_lfa, "leaf1:Ethernet3").index
    report = run_lab_test(plan, [link])
    assert report.backups
    crossed = report.crossed
    carried = [r for r in crossed if r.ok]
    assert carried, "no probe over the failed cable was carried by a backup"
    assert len(carried) < len(crossed)  # not every route there has an alternate
    # Every probe fails or answers as the backups predict, in both families.
    assert all(r.ok == r.expected_ok for r in report.pings)
    assert {r.probe.family for r in carried} == {4, 6}
    assert not report.trace_failures
