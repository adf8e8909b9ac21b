"""Which probes `lab test` plans per address family (no namespaces needed)."""

from __future__ import annotations

import ipaddress
from pathlib import Path

from lab_fixtures import compiled_lab_output

from fatpaths_cfg.lab.plan import build_plan
from fatpaths_cfg.lab.probe import plan_probes, sample_traces

GOLDEN = Path(__file__).resolve().parent / "golden"
HAND6 = Path(__file__).resolve().parent.parent / "inventories" / "hand-6.yaml"


def test_a_dual_stack_fabric_is_probed_in_both_families(tmp_path: Path) -> None:
    plan = build_plan(compiled_lab_output(GOLDEN / "hand6-dual.yaml", tmp_path / "dual"))
    probes = plan_probes(plan)
    assert len(probes) == 2 * 3 * 30  # families x layers x ordered switch pairs
    for probe in probes:
        for address in (probe.src_address, probe.dst_address):
            assert ipaddress.ip_address(address).version == probe.family
    v4 = [(p.layer, p.src.name, p.dst.name) for p in probes if p.family == 4]
    v6 = [(p.layer, p.src.name, p.dst.name) for p in probes if p.family == 6]
    assert v4 == v6  # the same host pairs, so the two families compare like for like
    traced = sample_traces(probes, 8, 7)
    assert {(p.family, p.layer) for p in traced} == {(f, k) for f in (4, 6) for k in (1, 2, 3)}
    assert len(traced) == 48


def test_an_ipv4_fabric_keeps_its_ipv4_probes(tmp_path: Path) -> None:
    plan = build_plan(compiled_lab_output(HAND6, tmp_path / "hand6"))
    probes = plan_probes(plan)
    assert len(probes) == 3 * 30 and {p.family for p in probes} == {4}
    first = probes[0]
    assert first.src_address == first.src.addresses[first.layer]
