"""TCP fidelity options (initial ssthresh, timeout grid, drop policies, header size) and
`simulate` on fabrics that were never compiled to disk (an inventory, `--generate`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from fatpaths_cfg.cli.simulate import add_commands
from fatpaths_cfg.sim import SimConfig, make_workload, network_from_topology, simulate

REPO = Path(__file__).resolve().parent.parent


def cli() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """fatpaths (test shell)"""

    add_commands(app)
    return app


def test_options_reach_the_engine_and_the_summary() -> None:
    net = network_from_topology("fattree", {"k": 4}, seed=1)
    workload = make_workload(net, "permutation", 300_000, seed=1)
    runs = {
        drop: simulate(
            net,
            workload,
            SimConfig(transport="tcp", load_balancing="ecmp", queue_packets=4, drop_policy=drop,
                      red_min_packets=1, initial_ssthresh=8, rto_granularity_us=5.0),
        )
        for drop in ("tail", "front", "red")
    }  # fmt: skip
    for drop, result in runs.items():
        assert result.config["drop_policy"] == drop
        assert result.config["rto_granularity_us"] == 5.0
        assert result.config["initial_ssthresh"] == 8
        assert int(result.finished.sum()) == workload.n_flows
    # Each policy loses different packets, so the runs differ.
    drops = {drop: r.counters["data_drops"] for drop, r in runs.items()}
    assert len({tuple(r.fct_ps().tolist()) for r in runs.values()}) == 3, drops


def test_defaults_keep_the_timeout_grid_at_a_quarter_of_the_minimum_rto() -> None:
    resolved = SimConfig(transport="tcp", min_rto_us=200.0).resolved()
    assert resolved["rto_granularity_us"] == 50.0
    assert resolved["red_min_packets"] == 50  # half of TCP's 100-packet queue
    assert resolved["drop_policy"] == "tail"


def test_larger_headers_slow_a_flow_down() -> None:
    net = network_from_topology("fattree", {"k": 4}, seed=1)
    workload = make_workload(net, "permutation", 200_000, seed=1)

    def median(header: int) -> float:
        config = SimConfig(transport="tcp", load_balancing="ecmp", header=header)
        return float(simulate(net, workload, config).fct_ps().mean())

    assert median(1000) > median(64)


def test_ack_bytes_are_separate_from_the_header() -> None:
    # htsim's TCP: 1,500-byte packets with 40-byte ACKs. Only the ACKs shrink, so the data's
    # timing is kept and the senders learn of it sooner.
    net = network_from_topology("fattree", {"k": 4}, seed=1)
    workload = make_workload(net, "permutation", 200_000, seed=1)

    def run(**kwargs: int) -> tuple[dict[str, object], float]:
        config = SimConfig(transport="tcp", load_balancing="ecmp", mtu=1460, header=40, **kwargs)
        result = simulate(net, workload, config)
        return result.config, float(result.fct_ps().mean())

    same, fct_same = run()
    narrow, fct_narrow = run(ack_bytes=40)
    wide, fct_wide = run(ack_bytes=1500)
    assert (same["ack_bytes"], narrow["ack_bytes"], wide["ack_bytes"]) == (40, 40, 1500)
    assert fct_same == fct_narrow
    # ACKs as large as data packets compete with the data on every link back.
    assert fct_wide > fct_narrow
    with pytest.raises(ValueError, match="ack_bytes"):
        SimConfig(ack_bytes=0)


def test_simulate_refuses_a_bad_ack_size(tmp_path: Path) -> None:
    run = tmp_path / "run"
    args = ["simulate", "--generate", "slimfly", "-p", "q=5", "--ack-bytes", "0", "-o", str(run)]
    result = CliRunner().invoke(cli(), args)
    assert result.exit_code == 2
    assert "--ack-bytes 0" in result.output
    assert not run.exists()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"transport": "ndp", "drop_policy": "front"}, "needs tcp or dctcp"),
        ({"transport": "tcp", "drop_policy": "codel"}, "drop policy 'codel'"),
        ({"transport": "tcp", "initial_ssthresh": 0}, "ssthresh"),
        ({"transport": "tcp", "rto_granularity_us": 0.0}, "granularity"),
    ],
)
def test_bad_fidelity_options_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SimConfig(**kwargs)  # type: ignore[arg-type]


def test_simulate_a_generated_topology_writes_only_the_run(tmp_path: Path) -> None:
    run = tmp_path / "run"
    result = CliRunner().invoke(
        cli(),
        ["simulate", "--generate", "slimfly", "-p", "q=5", "--size", "100KB", "--transport",
         "tcp", "--lb", "ecmp", "--ssthresh", "16", "--drop", "front", "--header", "128",
         "--rto-granularity-us", "20", "-o", str(run)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]
    summary = json.loads((run / "summary.json").read_text())
    assert summary["flows_finished"] == 200  # Slim Fly q=5: 50 switches of 4 hosts
    config = summary["config"]
    assert (config["initial_ssthresh"], config["drop_policy"], config["header"]) == (
        16,
        "front",
        128,
    )
    assert config["rto_granularity_us"] == 20.0


def test_simulate_compiles_an_inventory_in_memory(tmp_path: Path) -> None:
    inventory = tmp_path / "sf5.yaml"
    inventory.write_text((REPO / "inventories" / "slimfly-q5.yaml").read_text())
    run = tmp_path / "run"
    result = CliRunner().invoke(
        cli(), ["simulate", str(inventory), "--size", "50KB", "--lb", "fatpaths", "-o", str(run)]
    )
    assert result.exit_code == 0, result.output
    # Nothing compiled was written next to the inventory: only the run's own directory.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run", "sf5.yaml"]
    summary = json.loads((run / "summary.json").read_text())
    assert summary["layers"] == 4 and summary["flows_finished"] == summary["flows"]


def test_simulate_refuses_bad_sources(tmp_path: Path) -> None:
    runner = CliRunner()
    neither = runner.invoke(cli(), ["simulate", "-o", str(tmp_path / "a")])
    assert neither.exit_code == 2 and "--generate" in neither.output
    bad = runner.invoke(cli(), ["simulate", "--generate", "slimfly", "-p", "q=6", "-o",
                                str(tmp_path / "b")])  # fmt: skip
    assert bad.exit_code == 2 and "slimfly" in bad.output
    assert not (tmp_path / "b").exists()
    drop = runner.invoke(cli(), ["simulate", "--generate", "slimfly", "-p", "q=5", "--drop",
                                 "front", "-o", str(tmp_path / "c")])  # fmt: skip
    assert drop.exit_code == 2 and "needs tcp or dctcp" in drop.output
    assert not (tmp_path / "c").exists()
