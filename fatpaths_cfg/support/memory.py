"""Keeping Python's cycle collector off the large, long-lived structures fatpaths builds, and
what memory a run may plan to use.

Loading a Slim Fly q=19 creates about a million objects that all stay alive, and compiling it
about as many again. The collector starts a full pass each time the live set grows by a quarter,
so it walks the whole growing heap several times and never finds garbage: a sixth of
`topo show`'s CPU time and 0.5 CPU-s of a compile.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run a stage that only builds what outlives it (reference counting still frees every
    temporary); the collector runs again afterwards, as it was."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def settle_long_lived() -> None:
    """Exempt everything alive now from later collections: called once the fabric or the
    compiled model is built, so that later collections walk only what later stages create."""
    gc.freeze()


def available_memory() -> int:
    """Bytes the kernel says new allocations can get without swapping (MemAvailable)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")


def gib(count: float) -> str:
    """Bytes as an estimate is read: 67.1 GiB, 512 MiB, 20 KiB."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20)):
        if count >= scale:
            return f"{count / scale:,.1f} {unit}"
    return f"{count / 1024:,.0f} KiB"


def cpu_time(seconds: float) -> str:
    """CPU time as an estimate is read: 3 CPU-s, 20 CPU-minutes, 3 CPU-days."""
    if seconds < 120:
        return f"{seconds:,.0f} CPU-s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:,.0f} CPU-minutes"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:,.0f} CPU-hours"
    return f"{seconds / 86400:,.0f} CPU-days"
