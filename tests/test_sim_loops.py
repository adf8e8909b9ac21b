"""Application loops (`simulate --iterations`): the FatPaths paper's stencil with compute and
barrier phases. Iteration k + 1's flows start only after all of iteration k's finished plus the
compute time; the loop's completion time is what the paper's Figure 17 reports."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from fatpaths_cfg.cli import build_app
from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.sim import SimConfig, SimNetwork, network_from_topology, simulate
from fatpaths_cfg.sim.loops import application_loop, iteration_times_ps
from fatpaths_cfg.sim.options import SimOptions, resolved
from fatpaths_cfg.sim.results import SimResult
from fatpaths_cfg.sim.workloads import Workload, WorkloadError, make_workload

US = 1_000_000  # picoseconds
COMPUTE_PS = 20 * US
SIZE = 60_000


@pytest.fixture(scope="module")
def network() -> SimNetwork:
    return network_from_topology("slimfly", {"q": 5}, 1).with_options(
        link_gbps=10.0, host_gbps=10.0
    )


def loop(network: SimNetwork, iterations: int, seed: int = 1) -> Workload:
    wave = make_workload(network, "stencil", SIZE, seed=seed, randomize_mapping=True)
    return application_loop(wave, iterations, COMPUTE_PS)


def run(network: SimNetwork, work: Workload, lb: str = "ecmp") -> SimResult:
    config = SimConfig(transport="tcp", load_balancing=lb, min_rto_us=200.0, seed=1)
    result = simulate(network, work, config)
    assert all(i.holds for i in result.invariants), result.invariants
    return result


def test_no_iteration_starts_before_the_last_flow_of_the_previous_one_plus_compute(
    network: SimNetwork,
) -> None:
    work = loop(network, 4)
    result = run(network, work)
    assert work.phase is not None
    start = result.workload.start_ps
    finish = np.asarray(result.flows["finish_ps"])
    assert np.all(finish > 0)
    barrier = 0
    for k in range(4):
        mine = work.phase == k
        # Released at the barrier, then the compute time: exactly, and for every flow.
        assert np.all(start[mine] == barrier + COMPUTE_PS), k
        barrier = int(finish[mine].max())
    times = iteration_times_ps(work.phase, finish)
    assert len(times) == 4
    assert float(np.sum(times)) == float(finish.max())


def test_completion_is_at_least_iterations_times_compute_plus_serialisation(
    network: SimNetwork,
) -> None:
    work = loop(network, 3)
    summary = run(network, work).summary()
    # Every host sends four halo messages per iteration through one 10 Gb/s NIC.
    serialisation_us = 4 * SIZE * 8 / 10e9 * 1e6
    completion = summary["completion_us"]
    assert isinstance(completion, float)
    assert completion >= 3 * (COMPUTE_PS / US + serialisation_us)
    assert summary["iterations"] == summary["iterations_finished"] == 3
    times = summary["iteration_time"]
    assert isinstance(times, dict) and times["count"] == 3
    assert times["max_us"] * 3 >= completion >= times["median_us"]


def test_a_loop_run_is_deterministic_and_its_seed_matters(network: SimNetwork) -> None:
    a = run(network, loop(network, 2), "fatpaths")
    b = run(network, loop(network, 2), "fatpaths")
    assert np.array_equal(a.flows["finish_ps"], b.flows["finish_ps"])
    other = loop(network, 2, seed=2)
    assert not np.array_equal(other.dst, loop(network, 2).dst)


def test_an_unfinished_iteration_leaves_every_later_one_unknown() -> None:
    phase = np.array([0, 0, 1, 1, 2], dtype=np.int32)
    finish = np.array([5, 9, -1, 20, 30], dtype=np.int64)
    times = iteration_times_ps(phase, finish)
    assert times[0] == 9.0 and np.isnan(times[1]) and np.isnan(times[2])


def test_a_loop_repeats_only_a_wave_that_starts_together(network: SimNetwork) -> None:
    poisson = make_workload(
        network, "stencil", SIZE, seed=1, arrival_rate=100.0, duration_ps=100 * US
    )
    with pytest.raises(WorkloadError, match="one wave"):
        application_loop(poisson, 2, 0)
    with pytest.raises(WorkloadError, match="at least 1"):
        application_loop(loop(network, 1), 0, 0)


def test_simulate_iterations_prints_and_records_the_completion_time(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(
        build_app(),
        ["simulate", "--generate", "slimfly", "-p", "q=3", "-w", "stencil", "--size", "20KB",
         "--transport", "tcp", "--iterations", "3", "--compute", "10us", "-o", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "3/3 iterations, completion time" in result.output
    record = json.loads((out / "run.json").read_text())
    assert record["iterations"] == 3 and record["compute"] == "10us"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["completion_us"] >= 3 * 10.0
    assert summary["workload"]["compute_ps"] == 10 * US


def test_a_profile_lends_a_loop_its_link_and_sizes_but_not_its_arrivals() -> None:
    run, _ = resolved(SimOptions(workload="stencil", profile="fatpaths-sc20", transport="tcp",
                                 iterations=2, compute="5us"))  # fmt: skip
    assert run.arrival_rate is None and run.duration is None and run.warmup is None
    assert run.link_gbps == 10.0 and run.size == "websearch-sc20" and run.min_rto_us == 200.0
    with pytest.raises(UserErrors, match="drop --lambda"):
        resolved(replace(run, arrival_rate=100.0, duration="1ms"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--compute", "10us"], "needs --iterations"),
        (["--iterations", "2", "--lambda", "100", "--duration", "1ms"], "drop --lambda"),
        (["--iterations", "2", "-w", "rpc"], "not rpc rounds"),
        (["--iterations", "2", "--compute", "soon"], "expected a duration"),
        (["--iterations", "0"], "greater than or equal to 1"),
    ],
)
def test_loop_settings_that_cannot_run_are_refused(args: list[str], message: str) -> None:
    result = CliRunner().invoke(
        build_app(), ["simulate", "--generate", "slimfly", "-p", "q=3", *args]
    )
    assert result.exit_code == 2, result.output
    assert message in result.output
