"""What a simulation will cost, estimated before it starts, and refused when it cannot fit.

A Poisson rate or a duration off by a few powers of ten (`--lambda 1e9`, `--duration 1e9s`)
used to run until memory ran out, and a generated topology too large for the simulator's
switch-pair tables aborted in the native allocator. Each estimate below is checked before
the work it bounds, names the flags it comes from, and can be overridden by a flag.

The constants are measured on this simulator (hand-6, 8 KiB flows, one core): 24,000
Poisson flows peaked at 56 MB and 240,000 at 161 MB (about 500 bytes a flow, 600 with
flows.csv); those 240,000 flows took 21 CPU-s (about 90 us a flow, most of it per-flow
setup and results), and 50 MB flows ran 8 M events a CPU-second at 14 events a packet.
"""

from __future__ import annotations

from dataclasses import dataclass

from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.support.memory import available_memory, cpu_time, gib

BYTES_PER_FLOW = 600
CPU_SECONDS_PER_FLOW = 90e-6
CPU_SECONDS_PER_PACKET = 2e-6
# The simulator's per-switch-pair tables of layer 1, bytes a pair: Slim Fly q=199 failed to
# allocate 6.3 GB, one byte for each of its 79,202^2 pairs, and distances come with next hops.
BYTES_PER_SWITCH_PAIR = 2
# Share of the memory available now that one run may plan to use.
MEMORY_SHARE = 0.5
# The work one run may plan without being asked for more: a day of CPU time.
DEFAULT_MAX_CPU_SECONDS = 24 * 3600


def default_max_flows() -> int:
    return int(available_memory() * MEMORY_SHARE // BYTES_PER_FLOW)


def default_max_packets() -> int:
    return int(DEFAULT_MAX_CPU_SECONDS / CPU_SECONDS_PER_PACKET)


@dataclass(frozen=True)
class SimWork:
    """The flows and data packets a run is expected to simulate, and what they come from."""

    flows: float
    packets: float
    source: str  # the flags that make it, e.g. "--lambda 1e+09 x --duration 10ms x 12 hosts"
    flag: str  # the flag to name in the error

    def memory_bytes(self) -> float:
        return self.flows * BYTES_PER_FLOW

    def cpu_seconds(self) -> float:
        return self.flows * CPU_SECONDS_PER_FLOW + self.packets * CPU_SECONDS_PER_PACKET

    def check(self, max_flows: int | None, max_packets: int | None) -> None:
        """Refuse, before anything is built, a run beyond the caps (defaults: half the memory
        available now, a day of CPU time)."""
        flow_cap = default_max_flows() if max_flows is None else max_flows
        packet_cap = default_max_packets() if max_packets is None else max_packets
        if self.flows > flow_cap:
            detail = (
                f"about {self.flows:,.0f} flows ({self.source}) need about "
                f"{gib(self.memory_bytes())} of memory"
            )
            if max_flows is None:
                detail += f", {gib(available_memory())} available"
            raise UserErrors.single(
                self.flag,
                "",
                detail,
                f"fewer flows, or --max-flows {_ceil(self.flows)} to try anyway",
            )
        if self.packets > packet_cap:
            raise UserErrors.single(
                self.flag,
                "",
                f"about {self.packets:,.0f} data packets ({self.source}) take about "
                f"{cpu_time(self.cpu_seconds())} to simulate",
                f"fewer or smaller flows, or --max-packets {_ceil(self.packets)} to try anyway",
            )


def _ceil(value: float) -> int:
    return int(value) + (int(value) != value)


def switch_cap(max_switches: int | None) -> int:
    """Switches whose pair tables fit the memory share (or the --max-switches given)."""
    if max_switches is not None:
        return max_switches
    return int((available_memory() * MEMORY_SHARE / BYTES_PER_SWITCH_PAIR) ** 0.5)


def switch_memory(switches: int) -> str:
    need = switches * switches * BYTES_PER_SWITCH_PAIR
    return f"the simulator's switch-pair tables need about {gib(need)}"
