"""Work run in a forked child beside the caller: the same result as in the caller, the real
exception where it fails, and no child left behind when the caller gives up."""

from __future__ import annotations

import os
import time

import pytest

from fatpaths_cfg.support import beside as beside_module
from fatpaths_cfg.support.beside import Beside, beside


def test_the_child_computes_what_the_caller_would_and_runs_elsewhere() -> None:
    caller = os.getpid()
    with beside(lambda: (os.getpid(), [n * n for n in range(1000)])) as other:
        pid, squares = other.result()
    assert pid != caller  # it did run in another process
    assert squares == [n * n for n in range(1000)]


def test_a_large_result_comes_back_whole() -> None:
    data = bytes(range(256)) * 40_000  # 10 MB: many times a pipe's buffer
    with beside(lambda: data) as other:
        assert other.result() == data


def test_a_failing_child_reruns_in_the_caller_with_the_real_exception() -> None:
    calls: list[int] = []

    def work() -> int:
        calls.append(os.getpid())
        raise KeyError("missing switch")

    with pytest.raises(KeyError, match="missing switch"), beside(work) as other:
        other.result()
    assert calls == [os.getpid()]  # the child's own call is not seen here; the rerun is


def test_a_result_that_cannot_be_sent_is_computed_in_the_caller() -> None:
    with beside(lambda: lambda: 1) as other:  # a lambda does not pickle
        value = other.result()
    assert value() == 1


def test_leaving_the_block_early_stops_the_child() -> None:
    handle: Beside[None] | None = None
    with pytest.raises(RuntimeError), beside(lambda: time.sleep(60)) as other:
        handle = other
        pid = other.pid
        assert pid > 0
        raise RuntimeError("the caller failed")
    assert handle is not None and handle.pid == 0
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # already reaped: nothing is left behind


def test_one_cpu_runs_the_work_in_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(beside_module.os, "cpu_count", lambda: 1)
    with beside(os.getpid) as other:
        assert other.pid == 0
        assert other.result() == os.getpid()
