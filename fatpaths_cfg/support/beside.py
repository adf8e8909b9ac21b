"""Run independent work in forked children while the caller does its own part.

For checks that read large shared structures and are pure Python: a thread would hold the
same interpreter lock, and a worker pool would have to pickle the structures over. A forked
child sees the caller's memory as it was at the fork (copy-on-write) and sends back only its
result. Where `fork` is missing or there is a single CPU, the work runs in the caller when its
result is asked for; if the child fails in any way, the work is run again in the caller, so
the caller sees its real exception.
"""

from __future__ import annotations

import gc
import os
import pickle
import select
import signal
import struct
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Generic, NoReturn, TypeVar

T = TypeVar("T")


class Beside(Generic[T]):
    """Handle on work started beside the caller; `result()` waits for it."""

    def __init__(self, work: Callable[[], T]) -> None:
        self.work = work
        self.pid = 0
        self.pipe = -1
        if not hasattr(os, "fork") or (os.cpu_count() or 1) < 2:
            return
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            _child_sends(write_end, (read_end,), work)
        os.close(write_end)
        self.pid, self.pipe = pid, read_end

    def result(self) -> T:
        if not self.pid:
            return self.work()
        with os.fdopen(self.pipe, "rb") as pipe:
            payload = pipe.read()
        self.pipe = -1
        _, status = os.waitpid(self.pid, 0)
        self.pid = 0
        if os.waitstatus_to_exitcode(status) != 0 or not payload:
            return self.work()
        value: T = pickle.loads(payload)
        return value

    def close(self) -> None:
        """Stop and reap a child whose result was not asked for (the caller failed)."""
        if self.pipe >= 0:
            os.close(self.pipe)
            self.pipe = -1
        if self.pid:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            self.pid = 0


def _child_sends(write_end: int, closing: Iterable[int], work: Callable[[], object]) -> NoReturn:
    """A forked child's whole life: close the caller's pipe ends it does not use, run `work`,
    send its value pickled through `write_end`, and leave by _exit, with status 0 only when
    all of it was sent. It never returns into the caller's code."""
    status = 1
    # A collection would walk (and so copy, page by page) the caller's whole heap; the child
    # lives for one piece of work.
    gc.disable()
    try:
        for pipe in closing:
            os.close(pipe)
        payload = pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(write_end, "wb") as out:
            out.write(payload)
        status = 0
    finally:
        os._exit(status)


@contextmanager
def beside(work: Callable[[], T]) -> Iterator[Beside[T]]:
    """`with beside(work) as other: ...; value = other.result()`: no child outlives the block."""
    handle = Beside(work)
    try:
        yield handle
    finally:
        handle.close()


def available_cpus() -> int:
    """CPUs this process may run on: a container or taskset may allow fewer than there are."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


# Task numbers go to the workers through one pipe, written in full before any is read: its
# buffer (64 KiB on Linux) holds this many.
MAX_SHARED_TASKS = 8192
_INDEX = struct.Struct("<I")


def _no_tick(_items: int) -> None:
    return None


def share_out(
    tasks: Sequence[Callable[[], int]],
    jobs: int,
    product: Callable[[], T],
    adopt: Callable[[T], None],
    tick: Callable[[int], None] = _no_tick,
) -> None:
    """Run every task once over `jobs` processes: the caller and `jobs - 1` forked children,
    each taking the next task whenever it is free, so that a few long tasks and many short
    ones balance. Tasks leave their results outside the process (files); a task returns how
    many items it did, and `tick` gets the running total in the caller.

    In a child, `product()` describes what the child made; the caller passes it to `adopt`.
    Tasks a failed child took are run again in the caller (so the caller sees the real
    exception); if the caller fails, its children are stopped before the error leaves.
    """
    if len(tasks) > MAX_SHARED_TASKS:
        raise ValueError(f"{len(tasks)} tasks; share_out takes at most {MAX_SHARED_TASKS}")
    if jobs < 2 or len(tasks) < 2 or not hasattr(os, "fork"):
        items = 0
        for task in tasks:
            items += task()
            tick(items)
        return
    pool = _Pool(tasks)
    try:
        pool.start(min(jobs, len(tasks)) - 1, product)
        finished = pool.run_and_collect(adopt, tick)
    finally:
        pool.close()
    items = pool.items
    for index, task in enumerate(tasks):
        if index not in finished:
            items += task()
            tick(items)


class _Pool:
    def __init__(self, tasks: Sequence[Callable[[], int]]) -> None:
        self.tasks = tasks
        self.items = 0
        self.token_read, self.token_write = os.pipe()
        self.progress_read, self.progress_write = os.pipe()
        # Every index up front: a read of one 4-byte index from a pipe is never split, so
        # the workers need no lock to share them.
        os.write(self.token_write, b"".join(_INDEX.pack(i) for i in range(len(tasks))))
        self.children: dict[int, tuple[int, bytearray]] = {}  # result pipe -> (pid, payload)

    def start(self, count: int, product: Callable[[], object]) -> None:
        for _ in range(count):
            result_read, result_write = os.pipe()
            pid = os.fork()
            if pid == 0:
                closing = (self.token_write, self.progress_read, *self.children)
                _child_sends(result_write, closing, partial(self._work_as_child, product))
            os.close(result_write)
            self.children[result_read] = (pid, bytearray())
        # Once the children hold their copies, the pipes end when the children do.
        os.close(self.token_write)
        os.close(self.progress_write)
        self.token_write = self.progress_write = -1

    def _work_as_child(self, product: Callable[[], object]) -> tuple[list[int], object]:
        """Tasks until none is left, then (the tasks done, what `product` says was made)."""
        done = []
        while (index := self._take()) is not None:
            count = self.tasks[index]()
            done.append(index)
            os.write(self.progress_write, _INDEX.pack(count))
        return done, product()

    def _take(self) -> int | None:
        data = os.read(self.token_read, _INDEX.size)
        return _INDEX.unpack(data)[0] if data else None

    def _drain_progress(self) -> bool:
        """Add up the children's progress; False once every child has closed the pipe."""
        while True:
            try:
                data = os.read(self.progress_read, 1 << 16)
            except BlockingIOError:
                return True
            if not data:
                return False
            self.items += sum(count for (count,) in _INDEX.iter_unpack(data))

    def run_and_collect(self, adopt: Callable[[T], None], tick: Callable[[int], None]) -> set[int]:
        """The caller's share of the tasks, then the children's results: the tasks known done."""
        os.set_blocking(self.progress_read, False)
        finished: set[int] = set()
        while (index := self._take()) is not None:
            self.items += self.tasks[index]()
            finished.add(index)
            self._drain_progress()
            tick(self.items)
        progress_open = True
        while self.children:
            watched = [*self.children, self.progress_read] if progress_open else [*self.children]
            ready, _, _ = select.select(watched, [], [])
            for pipe in ready:
                if pipe == self.progress_read:
                    progress_open = self._drain_progress()
                    tick(self.items)
                    continue
                chunk = os.read(pipe, 1 << 20)
                if chunk:
                    self.children[pipe][1].extend(chunk)
                    continue
                pid, payload = self.children.pop(pipe)
                os.close(pipe)
                _, status = os.waitpid(pid, 0)
                if os.waitstatus_to_exitcode(status) == 0 and payload:
                    done, made = pickle.loads(payload)
                    adopt(made)
                    finished.update(done)
        if progress_open:
            self._drain_progress()
        return finished

    def close(self) -> None:
        for pipe, (pid, _) in self.children.items():
            os.close(pipe)
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        self.children = {}
        for pipe in (self.token_read, self.token_write, self.progress_read, self.progress_write):
            if pipe >= 0:
                os.close(pipe)
        self.token_read = self.token_write = self.progress_read = self.progress_write = -1
