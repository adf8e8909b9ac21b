"""One model of a simulation's settings (sim/options.py): the simulate command's options, the
run record, the engine's configuration and what a sweep may set all come from it."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import click
import pytest
from typer.testing import CliRunner

from fatpaths_cfg.cli import build_app
from fatpaths_cfg.cli.common import FEATURE_COMMANDS, feature_command
from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.sim.network import network_from_topology
from fatpaths_cfg.sim.options import SWEEP_SETTINGS, SimOptions, check_run, setting_fields
from fatpaths_cfg.sim.prepare import prepare_run
from fatpaths_cfg.sim.run import SimConfig
from fatpaths_cfg.sweep.spec import SimulateTask, load_sweep
from fatpaths_cfg.sweep.tasks import run_task


def test_every_setting_is_an_option_of_simulate_with_its_flags_and_group() -> None:
    command = feature_command("simulate")
    params = {param.name: param for param in command.params}
    for item in setting_fields():
        param = params.pop(item.name)
        flags = {flag for given in item.metadata["flags"] for flag in given.split("/")}
        if flags:  # an option; OUT is the argument
            assert flags == {*param.opts, *param.secondary_opts}
            assert param.rich_help_panel == item.metadata["group"]
    assert params == {}


def test_help_lists_simulate_options_by_concern() -> None:
    result = CliRunner().invoke(build_app(), ["simulate", "--help"])
    assert result.exit_code == 0
    headings = [line for line in result.output.splitlines() if line.endswith("options:")]
    assert headings == [
        "Fabric options:",
        "Workload options:",
        "Transport options:",
        "Load balancing options:",
        "Queue options:",
        "Link options:",
        "Output options:",
    ]
    queue_section = result.output.split("Queue options:")[1].split("Link options:")[0]
    assert "--red-min" in queue_section and "--size" not in queue_section


def _options_of(command: click.Command, ctx: click.Context) -> list[tuple[str, click.Parameter]]:
    found = []
    for param in command.get_params(ctx):
        found.append((command.name or "", param))
    for sub in getattr(command, "commands", {}).values():
        found += _options_of(sub, ctx)
    return found


@pytest.mark.parametrize("name", sorted(FEATURE_COMMANDS))
def test_every_option_of_every_command_is_described(name: str) -> None:
    command = feature_command(name)
    ctx = click.Context(command)
    bare = [
        f"{where} {'/'.join(param.opts)}"
        for where, param in _options_of(command, ctx)
        if param.param_type_name == "option" and not (getattr(param, "help", "") or "").strip()
    ]
    assert bare == []


def test_the_record_keeps_its_keys_in_order(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(
        build_app(),
        ["simulate", "--generate", "slimfly", "-p", "q=3", "--size", "8KiB", "-o", str(out)],
    )
    assert result.exit_code == 0, result.output
    record = json.loads((out / "run.json").read_text())
    assert list(record)[:8] == [
        "fabric",
        "compiled",
        "schemes",
        "transport",
        "layer_policy",
        "profile",
        "workload",
        "size",
    ]
    assert list(record)[-5:] == [
        "rounds",
        "plane_choice",
        "subflows_per_plane",
        "path_choice",
        "subflow_transport",
    ]
    assert record["min_rto_us"] == 1000.0 and record["warmup_us"] == 0.0
    assert record["rounds"] is None and record["subflows_per_plane"] is None


def test_settings_reach_the_engine_configuration() -> None:
    network = network_from_topology("slimfly", {"q": 3}, 1)
    options = SimOptions(
        transport="tcp", queue=12, min_rto_us=300.0, ugal_threshold=25.0, drop="red", red_min=3
    )
    run = prepare_run(options, lambda _: (network, "generated"))
    assert run.config == SimConfig(
        transport="tcp",
        queue_packets=12,
        min_rto_us=300.0,
        ugal_threshold=0.25,
        drop_policy="red",
        red_min_packets=3,
        seed=1,
    )
    assert run.parameters["queue"] == 12 and run.parameters["red_min"] == 3


def test_engine_refusals_are_user_errors() -> None:
    with pytest.raises(UserErrors, match="needs tcp or dctcp"):
        check_run(SimOptions(transport="ndp", drop="red"))
    with pytest.raises(UserErrors, match="--routing 'nope'"):
        check_run(SimOptions(routing="nope"))


def test_a_sweep_may_set_every_run_setting() -> None:
    run_settings = {item.name for item in fields(SimOptions) if item.metadata["sweep"]}
    assert set(SWEEP_SETTINGS) == run_settings
    assert run_settings <= set(SimulateTask.model_fields)
    # What only the command line decides (where to write, the fabric, the seed) is not.
    assert not {"results_dir", "force", "generate", "seed", "compare"} & set(
        SimulateTask.model_fields
    )


SETTINGS_SWEEP = """\
sweep: settings
topologies:
  - generate: {kind: slimfly, q: 3}
seeds: [1]
tasks:
  - simulate: {workload: permutation, size: 64KiB, transport: tcp, lb: ecmp, queue: [2, 64]}
"""


def test_a_sweep_setting_changes_the_run_as_the_option_does(tmp_path: Path) -> None:
    path = tmp_path / "settings.yaml"
    path.write_text(SETTINGS_SWEEP, encoding="utf-8")
    plan = load_sweep(path)
    assert sorted(task.payload["params"]["queue"] for task in plan.tasks) == [2, 64]
    rows = {task.payload["params"]["queue"]: run_task(task.payload) for task in plan.tasks}
    assert all(row["status"] == "ok" for row in rows.values()), rows
    # Two-packet queues drop and retransmit; 64-packet ones do not: a slower tail.
    assert rows[2]["fct_p99_us"] > rows[64]["fct_p99_us"]


def test_a_setting_is_named_as_its_flag() -> None:
    """A sweep key reads as the flag it sets: `--red-min` is `red_min`."""
    renamed = {"arrival_rate": "--lambda", "results_dir": "--output"}
    for item in setting_fields():
        flags = [f.split("/")[0] for f in item.metadata["flags"] if f.startswith("--")]
        if not flags:
            continue
        expected = renamed.get(item.name, "--" + item.name.replace("_", "-"))
        assert flags[0] == expected, item.name
