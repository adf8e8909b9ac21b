"""Backup routes under cable failure: with one cable of a layer down, every primary route over
it is withdrawn (zebra drops a static route whose interface goes down) and the switch's
floating route through its loop-free alternate takes over; walk every pair the change touches.

A walk may be dropped (no backup, or the backup is over the failed cable too): the host moves
the flow to another layer. It must never loop: a loop burns the cable until TTL expiry, and
the host sees no error that would move the flow.

Below verify and analysis, which both walk failures with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

NO_HOP = -1


@dataclass
class FailureWalks:
    """What the walks of one table found over all single-cable failures of its layer."""

    failures: int = 0  # cables failed, one at a time
    walks: int = 0  # (source, destination) walks over a failed cable, summed over failures
    dropped: int = 0  # of those, walks that end without a route
    # (failed link, source, destination) of every walk that loops.
    loops: list[tuple[int, int, int]] = field(default_factory=list)


def failed_table(
    hop: np.ndarray,
    backup: np.ndarray,
    backup_link: np.ndarray,
    link: int,
    sources: np.ndarray,
    targets: np.ndarray,
) -> np.ndarray:
    """hop[:, targets] as it forwards with `link` down: the routes (sources[i], targets[i])
    over it replaced by their backups, or by no hop when the backup is over it as well."""
    columns = np.unique(targets)
    table = hop[:, columns].copy()
    j = np.searchsorted(columns, targets)
    alternate = backup[sources, targets]
    usable = (alternate >= 0) & (backup_link[sources, targets] != link)
    table[sources, j] = np.where(usable, alternate, NO_HOP)
    return table


def walk_failures(
    hop: np.ndarray,
    hop_link: np.ndarray,
    backup: np.ndarray,
    backup_link: np.ndarray,
    links: np.ndarray,
    routed: np.ndarray,
) -> FailureWalks:
    """Fail each of `links` in turn and walk every routed pair towards the destinations whose
    routes cross it. `hop[s, t]` and `backup[s, t]` are next hops (-1: none), `*_link` the
    fabric link each goes over."""
    nr = hop.shape[0]
    found = FailureWalks()
    flat = hop_link.ravel()
    order = np.argsort(flat, kind="stable")
    bounds = np.searchsorted(flat[order], np.append(links, links + 1))
    for i, link in enumerate(links.tolist()):
        over = order[bounds[i] : bounds[len(links) + i]]
        found.failures += 1
        if not len(over):
            continue
        sources, targets = np.divmod(over, nr)
        table = failed_table(hop, backup, backup_link, link, sources, targets)
        columns = np.unique(targets)
        over_link = hop_link[:, columns] == link
        start = routed[:, columns]
        at = np.broadcast_to(np.arange(nr)[:, None], start.shape).copy()
        which = np.broadcast_to(np.arange(len(columns))[None, :], start.shape)
        active = start.copy()
        # Up to its first switch whose primary is over the cable, a walk is the one without
        # the failure: it is touched when it meets one.
        touched = np.zeros_like(start)
        # A walk longer than nr hops has repeated a switch.
        for _ in range(nr):
            if not active.any():
                break
            touched[active] |= over_link[at[active], which[active]]
            at[active] = table[at[active], which[active]]
            active &= (at != columns[None, :]) & (at >= 0)
        found.walks += int(touched.sum())
        found.dropped += int((touched & (at < 0)).sum())
        for s, j in zip(*np.nonzero(active), strict=True):
            found.loops.append((link, int(s), int(columns[j])))
    return found


def replay_failed(
    hop: np.ndarray,
    hop_link: np.ndarray,
    backup: np.ndarray,
    backup_link: np.ndarray,
    link: int,
    s: int,
    t: int,
) -> tuple[list[int], list[int]]:
    """The path from s towards t with `link` down (until it repeats a switch), and the
    switches on it that forwarded by their backup route."""
    path, used = [s], []
    seen = {s}
    while path[-1] != t:
        here = path[-1]
        nxt = int(hop[here, t])
        if int(hop_link[here, t]) == link:
            usable = backup[here, t] >= 0 and int(backup_link[here, t]) != link
            nxt = int(backup[here, t]) if usable else NO_HOP
            used.append(here)
        if nxt == NO_HOP:
            break
        path.append(nxt)
        if nxt in seen:
            break
        seen.add(nxt)
    return path, used
