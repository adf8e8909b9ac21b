"""Running commands in the lab's namespaces, in as few processes as possible."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


class LabCommandError(RuntimeError):
    """A command the lab relies on failed: a bug in the configs or a broken host setup."""


class LabWaitError(LabCommandError):
    """A wait of the lab ended without what it waited for (out of time, or the awaited
    process gave up): what did not happen, and in `hint` what to do about it."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.hint = hint


# No lab command runs this long (a 250-switch `ip -batch` takes seconds); one that does is
# stuck, and the lab says so instead of waiting for ever.
COMMAND_TIMEOUT_SECONDS = 600.0


def run(
    argv: Sequence[str],
    stdin: str | None = None,
    check: bool = True,
    timeout: float = COMMAND_TIMEOUT_SECONDS,
) -> str:
    try:
        done = subprocess.run(
            list(argv), input=stdin, capture_output=True, text=True, check=False, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        raise LabWaitError(
            f"{' '.join(argv[:8])} did not finish in {timeout:g} s",
            "the lab's namespaces may be wedged: `fatpaths lab down OUT` removes them",
        ) from None
    if check and done.returncode != 0:
        raise LabCommandError(
            f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip() or done.stdout}"
        )
    return done.stdout


def ip_batch(lines: Iterable[str], netns: str | None = None) -> None:
    """Many iproute2 commands in one `ip` process (one per command is too slow at 250 nodes)."""
    text = "\n".join(lines)
    if not text:
        return
    prefix = ["ip"] if netns is None else ["ip", "-n", netns]
    run([*prefix, "-batch", "-"], stdin=text + "\n")


def in_netns(netns: str, argv: Sequence[str]) -> list[str]:
    return ["ip", "netns", "exec", netns, *argv]


def existing_netns() -> set[str]:
    out = run(["ip", "netns", "list"])
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def netns_pids(netns: str) -> list[int]:
    out = run(["ip", "netns", "pids", netns], check=False)
    return [int(p) for p in out.split()]


def parallel(action: Callable[[T], R], items: Iterable[T], workers: int = 8) -> list[R]:
    """Threads only wait on child processes here, so a few more than cores keep both busy."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(action, items))


# A probe's reply wait on its first try, and on its one retry.
FIRST_WAIT_SECONDS = 1
RETRY_WAIT_SECONDS = 2


def parallel_retried(
    action: Callable[[T, int], R],
    items: Sequence[T],
    ok: Callable[[T, R], bool],
    workers: int = 8,
) -> list[R]:
    """`action(item, wait)` for every item side by side, with a `FIRST_WAIT_SECONDS` reply
    wait; an item whose result `ok` rejects runs once more, alone, with `RETRY_WAIT_SECONDS`.
    On a loaded machine a reply can miss its first wait (a traceroute hop printed as `*` while
    eight traces run at once); the unhurried second try tells that from a real fault, which it
    repeats. The second result stands, good or bad."""
    results = parallel(lambda item: action(item, FIRST_WAIT_SECONDS), items, workers)
    for i, (item, result) in enumerate(zip(items, results, strict=True)):
        if not ok(item, result):
            results[i] = action(item, RETRY_WAIT_SECONDS)
    return results
