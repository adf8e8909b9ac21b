"""Host shaping in the lab: the host plans shape every uplink, and `lab test` reads the
qdisc back and fails a host whose uplink is not shaped as compiled."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lab_fixtures import compiled_lab_output

from fatpaths_cfg.lab.lifecycle import down, up
from fatpaths_cfg.lab.netns import in_netns, run
from fatpaths_cfg.lab.plan import build_plan
from fatpaths_cfg.lab.probe import run_lab_test

pytestmark = pytest.mark.lab


@pytest.fixture
def shaped_clos(tmp_path: Path) -> Iterator[Path]:
    inventory = tmp_path / "clos.yaml"
    inventory.write_text(
        "fabric: closshaped\ndefaults: {host_flow_rate: 10G}\n"
        "generate: {kind: clos, n: 2, r: 3, m: 2}\nrouting: {layers: 2, rho: 0.9}\n"
    )
    out = compiled_lab_output(inventory, tmp_path / "out")
    try:
        up(out)
        yield out
    finally:
        down(out)


def test_lab_test_checks_the_shaping_of_every_host(shaped_clos: Path) -> None:
    plan = build_plan(shaped_clos)
    report = run_lab_test(plan, [])
    assert report.ok
    assert len(report.pacing) == 6
    assert all(r.ok and r.wanted_mbit == 10_000 and "10000 Mb/s" in r.found for r in report.pacing)
    victim = plan.hosts[0]
    run(in_netns(victim.netns, ["tc", "qdisc", "del", "dev", "eth0", "root"]))
    report = run_lab_test(plan, [])
    assert not report.ok
    assert [r.host for r in report.pacing if not r.ok] == [victim.name]
