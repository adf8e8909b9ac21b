"""Run one independent piece of work in a forked child while the caller does another.

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
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

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
        if pid == 0:  # the child: never returns into the caller's code
            status = 1
            # A collection would walk (and so copy, page by page) the caller's whole heap;
            # the child lives for one piece of work and leaves by _exit.
            gc.disable()
            try:
                os.close(read_end)
                payload = pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(write_end, "wb") as out:
                    out.write(payload)
                status = 0
            finally:
                os._exit(status)
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


@contextmanager
def beside(work: Callable[[], T]) -> Iterator[Beside[T]]:
    """`with beside(work) as other: ...; value = other.result()`: no child outlives the block."""
    handle = Beside(work)
    try:
        yield handle
    finally:
        handle.close()
