"""`lab up --engine clab` for real: containerlab deploys the emitted topology, the same probes
as the namespace engine test it, a failed link breaks exactly what it explains, and `lab down`
leaves no container, network, veth or namespace name behind.

Marked `clab`: deselected (with the reason printed) where root, a Docker engine or containerlab
is missing. The images come from `fatpaths lab image` (a no-op when they are up to date).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from lab_fixtures import compiled_lab_output

from fatpaths_cfg.lab.clab_engine import CONTAINER_PREFIX
from fatpaths_cfg.lab.images import build_images
from fatpaths_cfg.lab.lifecycle import down, fail, fail_plane, repair, up
from fatpaths_cfg.lab.mptcp import run_demo
from fatpaths_cfg.lab.netns import existing_netns
from fatpaths_cfg.lab.plan import LabPlan, build_plan
from fatpaths_cfg.lab.probe import LabTestReport, run_lab_test
from fatpaths_cfg.lab.state import load_state

REPO = Path(__file__).resolve().parent.parent
HAND6 = REPO / "inventories" / "hand-6.yaml"
SLIMFLY_Q5 = REPO / "inventories" / "slimfly-q5.yaml"
HAND_2PLANES = REPO / "inventories" / "hand-2planes.yaml"

pytestmark = [pytest.mark.clab, pytest.mark.slow]


@pytest.fixture(scope="module", autouse=True)
def images() -> None:
    build_images()


def _lines(argv: list[str]) -> set[str]:
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    return {line.split()[0] for line in done.stdout.splitlines() if line.strip()}


def host_veths() -> set[str]:
    return {
        name.split("@")[0] for name in _lines(["ip", "-o", "-br", "link", "show", "type", "veth"])
    }


def docker_networks() -> set[str]:
    return _lines(["docker", "network", "ls", "-q"])


def lab_containers(topo: str) -> set[str]:
    return {
        n
        for n in _lines(["docker", "ps", "-a", "--format", "{{.Names}}"])
        if n.startswith(f"{CONTAINER_PREFIX}-{topo}-")
    }


def lab_namespaces(plan: LabPlan) -> set[str]:
    return {ns for ns in existing_netns() if ns.startswith(f"fp-{plan.lab}-")}


def expected_failures_only(report: LabTestReport) -> None:
    """Exactly the probes the failed link explains fail, and every one of them does."""
    failed = {id(r) for r in report.pings if not r.ok}
    explained = {id(r) for r in report.pings if not r.expected_ok}
    assert explained, "the failed link explains no failure: pick a link some layer crosses"
    assert failed == explained, (len(failed), len(explained), len(report.unexpected))


@pytest.fixture()
def clean_host() -> Iterator[tuple[set[str], set[str]]]:
    yield host_veths(), docker_networks()


def run_scenario(out: Path, before: tuple[set[str], set[str]], mptcp: bool) -> None:
    plan = build_plan(out)
    topo = f"fatpaths-{plan.name}"
    try:
        summary = up(out, engine="clab")
        assert summary.engine == "clab"
        state = load_state(plan.state_file)
        assert state is not None and state.engine == "clab" and state.phase == "up"
        assert len(lab_containers(topo)) == len(plan.switches) + len(plan.hosts)

        report = run_lab_test(plan, [])
        assert report.ok, [str(r.probe) for r in report.failures[:5]]

        link = fail(out, "0")
        assert link.index == 0
        expected_failures_only(run_lab_test(plan, [0]))

        assert [r.index for r in repair(out, None)] == [0]
        assert run_lab_test(plan, []).ok

        if mptcp:
            assert run_demo(out, 3.0).ok
    finally:
        down(out)
    assert load_state(plan.state_file) is None
    assert not lab_containers(topo)
    assert not lab_namespaces(plan)
    veths, networks = before
    assert host_veths() <= veths
    assert docker_networks() == networks
    assert not (out / "lab" / f"clab-{topo}").exists()


def test_hand6_on_containerlab(tmp_path: Path, clean_host: tuple[set[str], set[str]]) -> None:
    out = compiled_lab_output(HAND6, tmp_path / "hand6")
    run_scenario(out, clean_host, mptcp=True)


def test_slimfly_q5_on_containerlab(tmp_path: Path, clean_host: tuple[set[str], set[str]]) -> None:
    out = compiled_lab_output(SLIMFLY_Q5, tmp_path / "sfq5")
    run_scenario(out, clean_host, mptcp=False)


def test_two_planes_on_containerlab(tmp_path: Path, clean_host: tuple[set[str], set[str]]) -> None:
    """Every host container is cabled into both planes (`eth0`, `eth1`): every (pair, plane,
    layer) answers, a failed plane breaks exactly its own probes, and an MPTCP connection moves
    its transfer onto the other plane."""
    out = compiled_lab_output(HAND_2PLANES, tmp_path / "hand2")
    plan = build_plan(out)
    assert plan.planes == 2
    topo = f"fatpaths-{plan.name}"
    try:
        assert up(out, engine="clab").engine == "clab"
        assert len(lab_containers(topo)) == len(plan.switches) + len(plan.hosts)
        report = run_lab_test(plan, [])
        assert report.ok, [str(r.probe) for r in report.failures[:5]]
        assert {(r.probe.plane, r.probe.layer) for r in report.pings} == {
            (0, 1),
            (0, 2),
            (1, 1),
            (1, 2),
        }

        failed = [ends.index for ends in fail_plane(out, 1)]
        assert sorted(failed) == plan.plane_links(1)
        broken = run_lab_test(plan, failed)
        expected_failures_only(broken)
        assert {r.probe.plane for r in broken.pings if not r.ok} == {1}
        assert sorted(r.index for r in repair(out, None)) == sorted(failed)

        demo = run_demo(out, 4.0, plane=1)
        assert demo.planes_used == [0, 1]
        assert demo.plane_growth(failed=True) == 0
        assert demo.plane_growth(failed=False) > 0
        assert demo.ok
    finally:
        down(out)
    assert not lab_containers(topo)
    assert not lab_namespaces(plan)
    veths, networks = clean_host
    assert host_veths() <= veths
    assert docker_networks() == networks
