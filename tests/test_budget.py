"""Work caps derived from the memory available: estimates from the flags, checked before any
work, overridable by a flag, and the message gives the estimate."""

from __future__ import annotations

from pathlib import Path

import pytest

from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.sim import budget
from fatpaths_cfg.sim.budget import SimWork
from fatpaths_cfg.sweep import spec

GIB = 2**30


def test_flows_beyond_half_the_available_memory_are_refused_with_the_estimate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(budget, "available_memory", lambda: GIB)
    fits = SimWork(GIB / 2 / budget.BYTES_PER_FLOW - 1, 1.0, "test", "--lambda")
    fits.check(None, None)
    over = SimWork(2e6, 2e6, "--lambda 1e+06 x --duration 1s x 2 hosts", "--lambda")
    with pytest.raises(UserErrors) as caught:
        over.check(None, None)
    assert str(caught.value.errors[0]) == (
        "--lambda: about 2,000,000 flows (--lambda 1e+06 x --duration 1s x 2 hosts) need about "
        "1.1 GiB of memory, 1.0 GiB available (fewer flows, or --max-flows 2000000 to try anyway)"
    )
    over.check(2_000_000, None)  # the flag the message names lets it run


def test_packets_beyond_a_cpu_day_are_refused() -> None:
    day = budget.DEFAULT_MAX_CPU_SECONDS / budget.CPU_SECONDS_PER_PACKET
    SimWork(1, day, "x", "--size").check(None, None)
    with pytest.raises(UserErrors, match="take about 2 CPU-days to simulate"):
        SimWork(1, 2 * day, "x", "--size").check(None, None)


def test_switch_cap_follows_the_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(budget, "available_memory", lambda: 8 * GIB)
    # Half of 8 GiB at 2 bytes a switch pair: 46,340 switches.
    assert budget.switch_cap(None) == 46_340
    assert budget.switch_cap(100) == 100


def test_a_sweep_too_large_to_plan_is_refused_before_any_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(spec, "available_memory", lambda: GIB // 4)
    sweep = tmp_path / "huge.yaml"
    values = ", ".join(str(v) for v in range(1, 101))
    seeds = ", ".join(str(v) for v in range(1000))
    sweep.write_text(
        "sweep: huge\ntopologies:\n  - generate: {kind: slimfly, q: 3}\n"
        f"grid:\n  layers: [{values}]\n  rho: [0.5, 0.6]\nseeds: [{seeds}]\n"
        "tasks:\n  - analyze: {traffic: permutation}\n"
    )
    built: list[object] = []
    monkeypatch.setattr(spec, "_load_topologies", lambda *a: built.append(a) or [])
    with pytest.raises(UserErrors) as caught:
        spec.load_sweep(sweep)
    message = str(caught.value.errors[0])
    assert message.startswith(
        f"{sweep}:4: grid: 200,000 tasks (1 topology x 200 routing points x 1,000 seeds x "
        "1 task variant) need about 438.7 MiB to plan"
    )
    assert "--max-tasks 200000 to try anyway" in message
    assert built == [], "a topology was built before the size was checked"


def _generated(tmp_path: Path, body: str) -> Path:
    inventory = tmp_path / "inv.yaml"
    inventory.write_text(f"fabric: big\ngenerate:\n{body}")
    return inventory


def test_a_compile_beyond_half_the_memory_is_refused_before_the_fabric_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fatpaths_cfg import api, compile_budget, fabric

    monkeypatch.setattr(compile_budget, "available_memory", lambda: GIB // 4)
    built: list[object] = []
    checked = fabric._checked_fabric
    monkeypatch.setattr(fabric, "_checked_fabric", lambda *a: built.append(a) or checked(*a))
    # Few switches, many hosts: the switch count alone does not tell.
    inventory = _generated(tmp_path, "  kind: slimfly\n  q: 5\n  p: 200\n")
    with pytest.raises(UserErrors) as caught:
        api.compile_fabric(inventory)
    assert str(caught.value) == (
        f"{inventory}:2: generate: 50 switches, 175 links, 10,000 hosts and 4 layers: compiling "
        "needs about 139.8 MiB of memory and 2 CPU-s, 256.0 MiB available (fewer switches, hosts "
        "or layers, or --max-switches 50 to try anyway)"
    )
    assert built == [], "the fabric was built before its size was checked"
    compiled = api.compile_fabric(inventory, max_switches=50)  # what the message offers
    assert len(compiled.fabric.hosts) == 10_000


def test_a_generator_too_large_to_compile_stops_at_its_switch_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fatpaths_cfg import api, compile_budget

    monkeypatch.setattr(compile_budget, "available_memory", lambda: 8 * GIB)
    inventory = _generated(tmp_path, "  kind: slimfly\n  q: 199\n")
    with pytest.raises(UserErrors) as caught:
        api.compile_fabric(inventory)
    # Half of 8 GiB less the interpreter's share, at 10 bytes a switch pair of 4 layers.
    assert str(caught.value) == (
        f"{inventory}:4: generate.q: the topology would have 79202 switches: compiling 4 layers "
        "needs about 233.8 GiB of memory for the forwarding tables alone, 8.0 GiB available "
        "(a value giving at most 10234 switches, or --max-switches 10234 to try anyway)"
    )


def test_the_compile_estimate_grows_with_every_size() -> None:
    from fatpaths_cfg.compile_budget import CompileSize

    base = CompileSize(100, 1000, 1000, 4)
    for bigger in (
        CompileSize(200, 1000, 1000, 4),
        CompileSize(100, 2000, 1000, 4),
        CompileSize(100, 1000, 2000, 4),
        CompileSize(100, 1000, 1000, 8),
    ):
        assert bigger.memory_bytes() > base.memory_bytes(), bigger
