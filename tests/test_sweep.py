"""Sweeps on the real engine: a LocalCluster, and `dask scheduler` + `dask worker` processes;
a worker killed mid-sweep, an interrupted sweep resumed, and what a rerun leaves alone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dask_fixtures import DaskCluster, dask_cluster
from typer.testing import CliRunner

from fatpaths_cfg.cli import build_app
from fatpaths_cfg.support.output import OUTPUT_MARKER, output_manifest
from fatpaths_cfg.sweep.dataset import read_rows
from fatpaths_cfg.sweep.results import ResultsFolder, check_results_folder
from fatpaths_cfg.sweep.run import execute_sweep, write_report
from fatpaths_cfg.sweep.spec import SweepPlan, load_sweep
from fatpaths_cfg.sweep.tasks import TIMING_COLUMNS, run_task

REPO_ROOT = Path(__file__).resolve().parent.parent

# 2 layer counts x 2 seeds x (analyze + simulate) on an 18-switch Slim Fly: 8 small tasks.
TINY_SWEEP = """\
sweep: tiny
topologies:
  - generate: {kind: slimfly, q: 3}
grid:
  layers: [1, 3]
  rho: [0.7]
seeds: [1, 2]
tasks:
  - analyze: {traffic: permutation, pairs: 30}
  - simulate: {workload: permutation, size: 16KiB}
"""


def tiny_plan(directory: Path, text: str = TINY_SWEEP) -> SweepPlan:
    path = directory / "tiny.yaml"
    path.write_text(text, encoding="utf-8")
    return load_sweep(path)


def _one_layer_pool(directory: Path) -> str:
    """TINY_SWEEP on an inventory whose /24 host pool fits one layer (18 switches, 5 bits, and
    3 host bits) but not three (2 more bits): the points with 3 layers fail to compile."""
    (directory / "sf3.yaml").write_text(
        "fabric: sf3\ngenerate: {kind: slimfly, q: 3}\naddressing: {host_pool_v4: 10.0.0.0/24}\n",
        encoding="utf-8",
    )
    return TINY_SWEEP.replace("generate: {kind: slimfly, q: 3}", "inventory: sf3.yaml")


def comparable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.items() if k not in TIMING_COLUMNS} for row in rows]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaskCluster]:
    with dask_cluster(tmp_path_factory.mktemp("dask")) as running:
        yield running


def test_plan_expands_grid_seeds_and_tasks_with_stable_keys(tmp_path: Path) -> None:
    plan = tiny_plan(tmp_path)
    assert len(plan.tasks) == 8
    assert len({task.key for task in plan.tasks}) == 8
    again = tiny_plan(tmp_path)
    assert [t.key for t in again.tasks] == [t.key for t in plan.tasks]
    layers = sorted({t.payload["routing"]["layers"] for t in plan.tasks})
    assert layers == [1, 3]
    # The key follows what is computed: another seed set changes keys, a new name does not.
    renamed = tiny_plan(tmp_path, TINY_SWEEP.replace("sweep: tiny", "sweep: other"))
    assert {t.key for t in renamed.tasks} == {t.key for t in plan.tasks}


def test_task_is_a_pure_function_of_its_payload(tmp_path: Path) -> None:
    task = tiny_plan(tmp_path).tasks[-1]
    first, second = run_task(task.payload), run_task(task.payload)
    assert first["status"] == "ok", first["error"]
    assert comparable([first]) == comparable([second])
    assert first["flows_finished"] == first["flows"] > 0


def test_failed_task_is_recorded_and_the_others_run(tmp_path: Path) -> None:
    # The host pool holds one layer's addresses, not three: that point fails, the other runs.
    plan = tiny_plan(tmp_path, _one_layer_pool(tmp_path))
    rows = [run_task(task.payload) for task in plan.tasks]
    failed = [r for r in rows if r["status"] == "error"]
    assert failed and all(r["layers"] == 3 for r in failed)
    assert "host_pool_v4" in failed[0]["error"]
    assert all(r["status"] == "ok" for r in rows if r["layers"] == 1)


def test_retry_failed_runs_only_the_failed_tasks_and_keeps_one_row_each(
    tmp_path: Path, cluster: DaskCluster
) -> None:
    plan = tiny_plan(tmp_path, _one_layer_pool(tmp_path))
    folder = ResultsFolder(tmp_path / "results")
    first = execute_sweep(plan, folder, cluster.address, None)
    assert first.failed == 4
    retried: list[dict[str, Any]] = []
    again = execute_sweep(plan, folder, cluster.address, None, True, retried.append)
    assert again.computed == 4
    assert {row["layers"] for row in retried} == {3}
    rows = read_rows(folder.dataset)
    assert len(rows) == 8 and len({row["key"] for row in rows}) == 8


def test_local_cluster_and_separate_processes_give_identical_rows(
    tmp_path: Path, cluster: DaskCluster
) -> None:
    plan = tiny_plan(tmp_path)
    local = ResultsFolder(tmp_path / "local")
    remote = ResultsFolder(tmp_path / "remote")
    run = execute_sweep(plan, local, scheduler=None, workers=2)
    assert (run.computed, run.failed) == (8, 0)
    assert "local cluster" in run.where
    execute_sweep(plan, remote, scheduler=cluster.address, workers=None)
    local_rows, remote_rows = read_rows(local.dataset), read_rows(remote.dataset)
    assert len(local_rows) == 8
    assert all(row["status"] == "ok" for row in local_rows)
    assert comparable(local_rows) == comparable(remote_rows)


def test_interrupted_sweep_resumes_without_recomputing(
    tmp_path: Path, cluster: DaskCluster
) -> None:
    plan = tiny_plan(tmp_path)
    folder = ResultsFolder(tmp_path / "results")
    first: list[str] = []

    def interrupt_after_three(row: dict[str, Any]) -> None:
        first.append(row["key"])
        if len(first) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        execute_sweep(plan, folder, cluster.address, None, on_row=interrupt_after_three)
    kept = {row["key"] for row in read_rows(folder.dataset)}
    assert kept == set(first)
    second: list[str] = []
    run = execute_sweep(
        plan, folder, cluster.address, None, on_row=lambda r: second.append(r["key"])
    )
    assert run.already_done == 3
    assert not set(second) & kept
    assert set(second) | kept == {task.key for task in plan.tasks}
    third = execute_sweep(plan, folder, cluster.address, None)
    assert third.computed == 0
    assert len(read_rows(folder.dataset)) == 8


def test_sweep_completes_when_a_worker_is_killed(tmp_path: Path) -> None:
    plan = tiny_plan(tmp_path)
    folder = ResultsFolder(tmp_path / "results")
    with dask_cluster(tmp_path) as running:

        def kill_on_first(row: dict[str, Any]) -> None:
            if running.workers[1].poll() is None:
                running.kill_worker(1)

        run = execute_sweep(plan, folder, running.address, None, on_row=kill_on_first)
        assert running.workers[1].returncode is not None
        assert running.workers[0].poll() is None
    rows = read_rows(folder.dataset)
    assert run.computed == 8
    assert [row["status"] for row in rows] == ["ok"] * 8


def test_report_plots_and_summary_are_stable(tmp_path: Path, cluster: DaskCluster) -> None:
    plan = tiny_plan(tmp_path)
    folder = ResultsFolder(tmp_path / "results")
    execute_sweep(plan, folder, cluster.address, None)
    written = write_report(plan, folder)
    names = sorted(path.name for path in written)
    # One rho: no one-column heatmap; the comparison draws the metric against the layers.
    assert not any(name.startswith("heatmap-") for name in names)
    assert [n for n in names if n.startswith("compare-")] == [
        n for n in names if n.startswith("compare-slimfly-q3-") and n.endswith("-layers.png")
    ]
    assert sum(name.startswith("compare-") for name in names) == 2
    assert sum(name.startswith("pareto-") for name in names) == 2
    summary = (folder.directory / "summary.md").read_text(encoding="utf-8")
    assert "8 tasks: 8 succeeded, 0 failed." in summary
    assert "## slimfly-q3: analyze, permutation traffic, fatpaths scheme" in summary
    before = {path: path.read_bytes() for path in written}
    write_report(plan, folder)
    assert {path: path.read_bytes() for path in written} == before
    assert all(
        content.startswith(b"\x89PNG") for p, content in before.items() if p.suffix == ".png"
    )


def test_cli_runs_resumes_and_names_the_cluster(tmp_path: Path, cluster: DaskCluster) -> None:
    sweep = tmp_path / "tiny.yaml"
    sweep.write_text(TINY_SWEEP, encoding="utf-8")
    out = tmp_path / "results"
    args = ["sweep", str(sweep), "-o", str(out), "--scheduler", cluster.address]
    first = CliRunner().invoke(build_app(), args)
    assert first.exit_code == 0, first.output
    assert f"running 8 on cluster {cluster.address} (2 workers)" in first.output
    assert first.output.count("] ok slimfly-q3") == 8
    second = CliRunner().invoke(build_app(), args)
    assert second.exit_code == 0, second.output
    assert "all 8 tasks already in" in second.output
    assert "best routing point per fabric and task" in second.output
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "Best: **n=3 rho=0.7 random**" in summary
    # The output marker lists every file the sweep wrote, and only those.
    written = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert output_manifest(out) == written - {OUTPUT_MARKER}
    assert any(name.startswith("results.parquet/part-") for name in written)
    # A file of the user's in it: refused, unless --force, which writes beside it.
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    refused = CliRunner().invoke(build_app(), args)
    assert refused.exit_code == 2
    assert "holds files fatpaths did not write: notes.txt" in refused.stderr
    forced = CliRunner().invoke(build_app(), [*args, "--force"])
    assert forced.exit_code == 0, forced.output
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert "notes.txt" not in (output_manifest(out) or set())


def test_results_folder_is_never_someone_elses(tmp_path: Path) -> None:
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine", encoding="utf-8")
    sweep = tmp_path / "tiny.yaml"
    sweep.write_text(TINY_SWEEP, encoding="utf-8")
    result = CliRunner().invoke(build_app(), ["sweep", str(sweep), "-o", str(foreign)])
    assert result.exit_code == 2
    assert "is not a fatpaths sweep output" in result.stderr
    assert sorted(p.name for p in foreign.iterdir()) == ["notes.txt"]
    other = tmp_path / "other"
    other.mkdir()
    # A folder of a version before output markers: its sweep.json names it.
    (other / "sweep.json").write_text(
        '{"kind": "fatpaths sweep results", "sweep": "other"}', encoding="utf-8"
    )
    with pytest.raises(Exception, match="holds the results of sweep 'other'"):
        check_results_folder(other, "tiny")


def test_unreachable_scheduler_is_a_user_error(tmp_path: Path) -> None:
    sweep = tmp_path / "tiny.yaml"
    sweep.write_text(TINY_SWEEP, encoding="utf-8")
    out = tmp_path / "results"
    result = CliRunner().invoke(
        build_app(), ["sweep", str(sweep), "-o", str(out), "--scheduler", "tcp://127.0.0.1:9"]
    )
    assert result.exit_code == 2
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in result.stderr
    assert not out.exists()


def _shown_row(status: str) -> dict[str, Any]:
    return {
        "topology": "sf",
        "layers": 4,
        "rho": 0.6,
        "algorithm": "random",
        "seed": 1,
        "task": "analyze",
        "traffic": "permutation",
        "scheme": "fatpaths",
        "status": status,
        "error": "layer 2 never connected\nmore" if status == "error" else None,
        "mat": 0.5 if status == "ok" else None,
        "seconds": 0.25,
    }


def test_progress_bar_on_a_terminal_and_one_line_per_result_otherwise(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io

    from rich.console import Console

    from fatpaths_cfg.sweep import run

    screen = io.StringIO()
    monkeypatch.setattr(run, "console", Console(file=screen, force_terminal=True, width=120))
    with run.result_display(2) as show:
        show(_shown_row("ok"))
        show(_shown_row("error"))
    text = screen.getvalue()
    assert "2/2" in text and "1 failed" in text
    assert "error sf n=4 rho=0.6 random seed=1 analyze permutation/fatpaths: layer 2" in text
    monkeypatch.setattr(run, "console", Console(file=io.StringIO(), force_terminal=False))
    with run.result_display(2) as show:
        show(_shown_row("ok"))
    assert capsys.readouterr().out == (
        "[1/2] ok sf n=4 rho=0.6 random seed=1 analyze permutation/fatpaths: mat=0.5 (0.25 s)\n"
    )


@pytest.mark.parametrize("example", sorted((REPO_ROOT / "examples" / "sweeps").glob("*.yaml")))
def test_every_example_sweep_loads(example: Path) -> None:
    """The example sweeps the docs point at stay valid as the settings evolve: the equal-cost
    one names five generated networks and a simulate task of the paper's profile."""
    plan = load_sweep(example)
    assert plan.tasks and plan.topologies
    if example.stem == "equal-cost-10k":
        assert len(plan.topologies) == 5
        assert len(plan.tasks) == 5 * 3 * 3  # networks x seeds x schemes


def test_a_simulate_task_takes_its_profile_s_sizes_unless_it_names_one() -> None:
    """`profile: fatpaths-sc20` without a size ran 64 KiB flows (the sweep's own default won);
    `simulate --profile` takes the profile's web-search sizes, and so does a sweep now."""
    from fatpaths_cfg.sweep.spec import SimulateTask

    base = {"workload": "uniform", "arrival_rate": 300, "duration": "5ms"}
    assert SimulateTask(**base, profile="fatpaths-sc20").settings()["size"] == "websearch-sc20"
    assert SimulateTask(**base, profile="fatpaths-sc20", size="1MB").settings()["size"] == "1MB"
    assert SimulateTask(**base).settings()["size"] == "64KiB"
    assert SimulateTask(**base, size="websearch-sc20").settings()["size"] == "websearch-sc20"
