"""What a compile will cost, estimated from the inventory's size before any heavy work, and
refused when it cannot fit.

A generator block is a few bytes for any size (`generate: {kind: slimfly, q: 199}` is 79,202
switches); compiling one too large for the machine used to run until memory ran out. The
estimate is checked twice: on the switch count alone as the generator sizes the topology
(before it builds an edge), and on switches, links, hosts and layers before the fabric is
built from them (for a written-out wiring, as soon as it is loaded).

The constants fit the peak RSS and CPU time of `compile -j 1` measured on generated fabrics
(4 layers unless said; MB, CPU-s): Slim Fly q=5 96, 1.3; q=13 127, 1.8; q=23 288, 7.3;
q=29 455, 15.3; q=37 821, 32.3 (2,738 switches, 75,295 links, 76,664 hosts); q=13 with 32
layers 221, 5.3; q=23 with 16 layers 512, 12.9; a Jellyfish of 3,000 switches of 2 links and
1 host each 469, 13.3. The memory estimate is 1% to 19% above each of these peaks, never
under: 100 MB for the interpreter and libraries, 2.5 KB for each link or host and 0.4 KB more
per layer (its addresses, routes and config lines), and 10 bytes for each switch pair of each
layer (the dense tables, in memory and as written).
"""

from __future__ import annotations

from dataclasses import dataclass

from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.support.memory import available_memory, cpu_time, gib

BASE_BYTES = 100 * 2**20
BYTES_PER_ITEM = 2560  # a link or a host
BYTES_PER_ITEM_LAYER = 384  # a link or host, for each layer
BYTES_PER_PAIR_LAYER = 10  # a switch pair, for each layer
BASE_CPU_SECONDS = 1.1
CPU_SECONDS_PER_ITEM = 9e-5
CPU_SECONDS_PER_ITEM_LAYER = 8e-6
CPU_SECONDS_PER_PAIR_LAYER = 3.1e-7
# Share of the memory available now that one compile may plan to use (as a simulation).
MEMORY_SHARE = 0.5
OVERRIDE_FLAG = "--max-switches"


@dataclass(frozen=True)
class CompileSize:
    """What a compile is sized by: the fabric's switches, links and hosts, and its layers."""

    switches: int
    links: int
    hosts: int
    layers: int

    def memory_bytes(self) -> float:
        items = self.links + self.hosts
        return (
            BASE_BYTES
            + items * (BYTES_PER_ITEM + BYTES_PER_ITEM_LAYER * self.layers)
            + BYTES_PER_PAIR_LAYER * self.layers * self.switches**2
        )

    def cpu_seconds(self) -> float:
        items = self.links + self.hosts
        return (
            BASE_CPU_SECONDS
            + items * (CPU_SECONDS_PER_ITEM + CPU_SECONDS_PER_ITEM_LAYER * self.layers)
            + CPU_SECONDS_PER_PAIR_LAYER * self.layers * self.switches**2
        )

    def described(self) -> str:
        return (
            f"{self.switches:,} switches, {self.links:,} links, {self.hosts:,} hosts and "
            f"{self.layers} layer{'s' if self.layers != 1 else ''}"
        )


@dataclass(frozen=True)
class CompileBudget:
    """The memory a compile of `layers` layers may plan to use; `max_switches` (the flag)
    replaces the estimate with a plain cap on switches. `file` and `line_of` locate a refusal
    at the inventory's generator block or wiring."""

    layers: int
    max_switches: int | None
    file: str
    line: int
    field: str

    def memory_cap(self) -> float:
        return available_memory() * MEMORY_SHARE

    def switch_cap(self) -> int:
        """Switches whose tables alone fit the memory share (or the --max-switches given)."""
        if self.max_switches is not None:
            return self.max_switches
        room = max(self.memory_cap() - BASE_BYTES, 0.0)
        return int((room / (BYTES_PER_PAIR_LAYER * self.layers)) ** 0.5)

    def tables_alone(self, switches: int) -> str:
        """Why a generator's switch count is too many (see `SwitchBudget.why`)."""
        need = CompileSize(switches, 0, 0, self.layers).memory_bytes()
        why = (
            f"compiling {self.layers} layers needs about {gib(need)} of memory for the "
            "forwarding tables alone"
        )
        return (
            why if self.max_switches is not None else f"{why}, {gib(available_memory())} available"
        )

    def override(self, switches: int) -> str:
        return f"{OVERRIDE_FLAG} {switches} to try anyway"

    def check(self, switches: int, links: int, hosts: int) -> None:
        """Refuse, before the fabric is built, a compile beyond the cap."""
        size = CompileSize(switches, links, hosts, self.layers)
        if self.max_switches is not None:
            if switches <= self.max_switches:
                return
            detail = f"{size.described()}: more switches than {OVERRIDE_FLAG} {self.max_switches}"
        elif size.memory_bytes() <= self.memory_cap():
            return
        else:
            detail = (
                f"{size.described()}: compiling needs about {gib(size.memory_bytes())} of "
                f"memory and {cpu_time(size.cpu_seconds())}, {gib(available_memory())} "
                "available"
            )
        raise UserErrors.single(
            self.file,
            self.field,
            detail,
            f"fewer switches, hosts or layers, or {self.override(switches)}",
            line=self.line,
        )
