"""A lab probe's one retry: side by side first, then alone with a longer wait, and only for
the probes whose first result was rejected. No namespaces needed: the probes are functions."""

from __future__ import annotations

import threading

from fatpaths_cfg.lab.netns import FIRST_WAIT_SECONDS, RETRY_WAIT_SECONDS, parallel_retried


def test_only_rejected_results_run_again_with_the_longer_wait() -> None:
    calls: list[tuple[int, int]] = []
    lock = threading.Lock()

    def trace(item: int, wait: int) -> list[int | None]:
        with lock:
            calls.append((item, wait))
        # Item 2's first trace misses a hop's reply (None), as a loaded machine's can.
        if item == 2 and wait == FIRST_WAIT_SECONDS:
            return [item, None]
        return [item, item + 10]

    found = parallel_retried(trace, [1, 2, 3], lambda _, hops: None not in hops)
    assert found == [[1, 11], [2, 12], [3, 13]]
    assert sorted(calls) == [
        (1, FIRST_WAIT_SECONDS),
        (2, FIRST_WAIT_SECONDS),
        (2, RETRY_WAIT_SECONDS),
        (3, FIRST_WAIT_SECONDS),
    ]
    assert RETRY_WAIT_SECONDS > FIRST_WAIT_SECONDS


def test_a_fault_that_repeats_is_reported_from_the_second_try() -> None:
    tries: dict[str, int] = {}

    def probe(item: str, wait: int) -> tuple[str, int]:
        tries[item] = tries.get(item, 0) + 1
        return ("bad" if item == "broken" else "good", wait)

    found = parallel_retried(probe, ["fine", "broken"], lambda _, r: r[0] == "good")
    # The broken probe is tried exactly twice and its second (still bad) result stands.
    assert found == [("good", FIRST_WAIT_SECONDS), ("bad", RETRY_WAIT_SECONDS)]
    assert tries == {"fine": 1, "broken": 2}
