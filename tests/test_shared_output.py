"""The compile output shared out over processes and written as it is rendered: the same bytes
for any number of jobs, every task done exactly once even when a worker dies, nothing left
behind on failure, and unchanged files of an earlier output carried over without a copy."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from fatpaths_cfg import api
from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.support.beside import share_out
from fatpaths_cfg.support.output import StagedOutput

INVENTORIES = Path(__file__).resolve().parent.parent / "inventories"


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def no_children_left() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def recording_tasks(
    folder: Path, count: int, child_dies_at: int | None = None
) -> list[Callable[[], int]]:
    """Tasks that each leave a file named after the task and the process that ran it; with
    `child_dies_at`, a child fails on that many-th task it takes."""
    parent = os.getpid()
    taken = [0]

    def task(index: int) -> int:
        if os.getpid() != parent:
            taken[0] += 1
            if taken[0] == child_dies_at:
                raise RuntimeError("a worker dies")
        time.sleep(0.002)  # long enough that every worker gets some of the tasks
        (folder / f"{index}.{os.getpid()}").write_text("done")
        return index % 3

    return [partial(task, i) for i in range(count)]


def runs_per_task(folder: Path, count: int) -> dict[int, list[int]]:
    runs: dict[int, list[int]] = {i: [] for i in range(count)}
    for path in folder.iterdir():
        index, pid = path.name.split(".")
        runs[int(index)].append(int(pid))
    return runs


@pytest.mark.parametrize("jobs", [1, 2, 4])
def test_every_task_runs_once_and_progress_adds_up(tmp_path: Path, jobs: int) -> None:
    count = 300
    products: list[str] = []
    ticks: list[int] = []
    share_out(
        recording_tasks(tmp_path, count), jobs, lambda: "child", products.append, ticks.append
    )
    runs = runs_per_task(tmp_path, count)
    assert all(len(pids) == 1 for pids in runs.values()), "a task ran twice or never"
    assert ticks == sorted(ticks)
    assert ticks[-1] == sum(i % 3 for i in range(count))
    # Every child that lived to the end sent what it made.
    assert products == ["child"] * (jobs - 1)
    if jobs > 1:
        assert len({pid for pids in runs.values() for pid in pids}) > 1, "nothing was shared"
    assert no_children_left()


def test_tasks_of_a_worker_that_dies_are_run_again_by_the_caller(tmp_path: Path) -> None:
    count = 300
    products: list[str] = []
    tasks = recording_tasks(tmp_path, count, child_dies_at=5)
    share_out(tasks, 2, lambda: "child", products.append)
    assert products == [], "the dead child sent a product"
    runs = runs_per_task(tmp_path, count)
    assert all(os.getpid() in pids for pids in runs.values()), "a task was lost with its worker"
    # The four tasks the child finished before it died are unknown to the caller: run again.
    assert sorted(len(pids) for pids in runs.values()) == [1] * (count - 4) + [2] * 4
    assert no_children_left()


def test_a_failing_task_raises_in_the_caller_and_stops_the_workers(tmp_path: Path) -> None:
    def fails() -> int:
        raise ValueError("bad task")

    tasks = recording_tasks(tmp_path, 40)
    tasks.insert(20, fails)
    with pytest.raises(ValueError, match="bad task"):
        share_out(tasks, 3, lambda: None, lambda _: None)
    assert no_children_left()


@pytest.mark.parametrize(
    "inventory,batfish",
    [("slimfly-q5.yaml", True), ("jellyfish-4planes.yaml", False), ("hand-6.yaml", False)],
)
def test_any_number_of_jobs_writes_the_same_bytes(
    tmp_path: Path, inventory: str, batfish: bool
) -> None:
    source = INVENTORIES / inventory
    compiled = api.compile_fabric(source)
    outputs = []
    for jobs in (1, 2, 5):
        out = tmp_path / f"j{jobs}"
        summary = api.write_output(compiled, source, out, batfish=batfish, jobs=jobs)
        outputs.append(tree_bytes(out))
        assert (summary.files_written, summary.files_unchanged) == (len(outputs[-1]), 0)
    assert outputs[0] == outputs[1] == outputs[2]
    in_memory = api.build_output(compiled, batfish=batfish).files
    assert {k: v for k, v in outputs[0].items() if k != ".fatpaths-output"} == in_memory
    assert sorted(p.name for p in tmp_path.iterdir()) == ["j1", "j2", "j5"]


def test_a_render_error_in_the_workers_leaves_the_earlier_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = INVENTORIES / "slimfly-q5.yaml"
    out = tmp_path / "out"
    api.compile_to_directory(source, out, jobs=2)
    before = tree_bytes(out)
    compiled = api.compile_fabric(source)

    def broken(_view: object) -> str:
        raise UserErrors.single(source, "", "a host plan cannot be rendered", "fix it")

    monkeypatch.setattr("fatpaths_cfg.render.stage.render_host", broken)
    with pytest.raises(UserErrors, match="cannot be rendered"):
        api.write_output(compiled, source, out, jobs=3)
    assert tree_bytes(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"], "a staging directory was left"
    assert no_children_left()


def test_unchanged_files_are_linked_not_copied_unless_linked_elsewhere(tmp_path: Path) -> None:
    source = INVENTORIES / "slimfly-q5.yaml"
    out = tmp_path / "out"
    api.compile_to_directory(source, out, jobs=2)
    config = out / "configs/frr/sf-0-0-0/frr.conf"
    plan = out / "hosts/sf-0-0-0-h0.sh"
    # The user keeps a hard link of one file: it must not become part of the new output.
    os.link(plan, tmp_path / "kept.sh")
    config_inode, plan_inode = config.stat().st_ino, plan.stat().st_ino
    summary = api.compile_to_directory(source, out, jobs=2)
    assert summary.files_written == 0
    assert config.stat().st_ino == config_inode
    assert config.stat().st_nlink == 1
    assert plan.stat().st_ino != plan_inode
    assert plan.read_bytes() == (tmp_path / "kept.sh").read_bytes()


def test_a_name_already_staged_is_replaced_not_written_through(tmp_path: Path) -> None:
    """A worker's task re-run by the caller finds its files staged, possibly as links to the
    earlier output: writing them again must not change the file behind the link."""
    earlier = tmp_path / "earlier.txt"
    earlier.write_text("the user's bytes")
    with StagedOutput(tmp_path / "out") as staged:
        staged.add_bytes("a.txt", b"first")
        os.unlink(next((tmp_path).glob(".out.*")) / "a.txt")
        os.link(earlier, next((tmp_path).glob(".out.*")) / "a.txt")
        staged.add_bytes("a.txt", b"second")
        staged.commit()
    assert earlier.read_text() == "the user's bytes"
    assert (tmp_path / "out/a.txt").read_bytes() == b"second"


FORKED_NATIVE = """
import os
import numpy as np
from fatpaths_cfg import _native
from fatpaths_cfg.support.beside import beside

u = np.array([0, 1, 2, 3, 4], dtype=np.int32)
v = np.array([1, 2, 3, 4, 0], dtype=np.int32)
parent = _native.layer_forwarding(5, u, v, 1)[0].tolist()  # the global pool starts here


def in_child():
    return os.getpid(), _native.layer_forwarding(5, u, v, 1)[0].tolist()


with beside(in_child) as child:
    pid, tables = child.result()
print(pid != os.getpid(), tables == parent)
"""


def test_native_parallel_work_runs_in_a_child_forked_after_the_parent_used_it() -> None:
    """The native crate's thread pool has its threads in the process that started it: a child
    forked after that gets a pool of its own instead of waiting for threads it does not have."""
    done = subprocess.run(
        [sys.executable, "-c", FORKED_NATIVE], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True"]


def test_the_jobs_option_of_compile(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from fatpaths_cfg.cli import build_app

    source = str(INVENTORIES / "hand-6.yaml")
    runner = CliRunner()
    refused = runner.invoke(build_app(), ["compile", source, "-o", str(tmp_path / "z"), "-j", "0"])
    assert refused.exit_code == 2
    assert not (tmp_path / "z").exists()
    for jobs in ("1", "3"):
        done = runner.invoke(
            build_app(), ["compile", source, "-o", str(tmp_path / jobs), "-j", jobs]
        )
        assert done.exit_code == 0, done.output
    assert tree_bytes(tmp_path / "1") == tree_bytes(tmp_path / "3")


def test_a_compile_from_another_thread_does_not_fork(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker thread's process may have other threads holding locks a fork would copy."""

    def no_fork() -> int:
        raise AssertionError("forked from a worker thread")

    monkeypatch.setattr(os, "fork", no_fork)
    errors: list[BaseException] = []

    def compile_in_thread() -> None:
        try:
            api.compile_to_directory(INVENTORIES / "slimfly-q5.yaml", tmp_path / "out")
        except BaseException as exc:  # handed to the test's thread
            errors.append(exc)

    worker = threading.Thread(target=compile_in_thread)
    worker.start()
    worker.join()
    assert errors == []
    assert (tmp_path / "out" / "fabric.json").is_file()
