"""Named parameter presets for `fatpaths simulate --profile`.

`fatpaths-sc20` is the FatPaths paper's simulation set-up (Section VII-A and the appendix on
the simulation set-up) as far as the paper states it; docs/simulator.md lists each value with
its source and what the paper leaves open. Options given on the command line win over a
profile; per-transport queue, window and ECN defaults already are the paper's.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Profile:
    link_gbps: float | None = None
    mtu: int | None = None
    min_rto_us: float | None = None
    size: str | None = None
    arrival_rate: float | None = None
    duration: str | None = None
    until_done: bool = False
    warmup: str | None = None


NO_PROFILE = Profile()

# λ = 300 flows per endpoint per second for NDP and 200 for TCP-based transports, chosen for
# 10 Gb/s endpoints; 9 KB jumbo frames; a 200 µs RTO lower bound; web-search sizes discretised
# to 20 with a mean of about 1 MB; a fixed arrival window whose first half is warm-up, every flow
# run to completion. The 5 ms window is this simulator's choice (the paper does not state it).
FATPATHS_SC20 = {
    "ndp": Profile(10.0, 9000, 200.0, "websearch-sc20", 300.0, "5ms", True, "half"),
    "tcp": Profile(10.0, 9000, 200.0, "websearch-sc20", 200.0, "5ms", True, "half"),
    "dctcp": Profile(10.0, 9000, 200.0, "websearch-sc20", 200.0, "5ms", True, "half"),
}

PROFILES = ("fatpaths-sc20",)


def resolve_profile(name: str | None, transport: str) -> Profile:
    """The preset `name` for `transport`; no name gives an empty preset."""
    if name is None:
        return NO_PROFILE
    if name not in PROFILES:
        raise ValueError(f"--profile {name!r}: expected one of {', '.join(PROFILES)}")
    if transport not in FATPATHS_SC20:
        # The paper simulates no MPTCP: a preset borrowed from TCP would claim a set-up it has not.
        raise ValueError(
            f"--profile {name} has no preset for --transport {transport}; "
            f"it has one for {', '.join(FATPATHS_SC20)}"
        )
    return FATPATHS_SC20[transport]
