"""What the config readers hand the checker: routes and addresses with the file and line they
came from, in columnar form (a Slim Fly q=19 has 4.7 M routes; one object per route would cost
more than the whole check)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Location:
    file: str  # relative to the compiled output directory
    line: int  # 1-based; 0 when the fault is something the file lacks

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass
class RouteColumns:
    """One row per route line (an ECMP route with k next hops gives k rows)."""

    switch: list[int] = field(default_factory=list)
    prefix: list[str] = field(default_factory=list)
    next_hop: list[str] = field(default_factory=list)
    file: list[int] = field(default_factory=list)
    line: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.switch)

    def extend(self, other: RouteColumns, file_offset: int) -> None:
        self.switch.extend(other.switch)
        self.prefix.extend(other.prefix)
        self.next_hop.extend(other.next_hop)
        self.file.extend(f + file_offset for f in other.file)
        self.line.extend(other.line)


@dataclass(frozen=True)
class AddressLine:
    """An address configured on a switch port (fabric port name, or "lo") or on a host."""

    owner: str  # switch or host name
    port: str
    address: str  # with prefix length, as written
    file: int
    line: int


@dataclass
class MacColumns:
    """VLAN encoding: one row per static MAC entry (switch, VLAN, host MAC, port)."""

    switch: list[int] = field(default_factory=list)
    vlan: list[int] = field(default_factory=list)
    mac: list[str] = field(default_factory=list)  # normalised to 12 lower-case hex digits
    port: list[str] = field(default_factory=list)
    file: list[int] = field(default_factory=list)
    line: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.switch)


@dataclass(frozen=True)
class TrunkLine:
    switch: str
    port: str
    vlans: frozenset[int]
    file: int
    line: int


@dataclass
class ParsedConfigs:
    """Everything read back from one platform's rendered files."""

    platform: str
    files: list[str] = field(default_factory=list)
    routes: RouteColumns = field(default_factory=RouteColumns)
    macs: MacColumns = field(default_factory=MacColumns)
    trunks: list[TrunkLine] = field(default_factory=list)
    switch_addresses: list[AddressLine] = field(default_factory=list)
    host_addresses: list[AddressLine] = field(default_factory=list)
    # Kernel platforms (frr, linux) share one subnet over several host ports with `noprefixroute`
    # gateways, so each host is reachable only through its /32 (/128) route on its port.
    host_routes: list[AddressLine] = field(default_factory=list)
    host_route_switches: set[str] = field(default_factory=set)
    # The file holding a switch's routes (faults of omission point there), and a host's plan.
    switch_file: dict[str, int] = field(default_factory=dict)
    address_file: dict[str, int] = field(default_factory=dict)
    host_file: dict[str, int] = field(default_factory=dict)
    # Lines a reader could not understand: (file index, line, text); reported, never ignored.
    unparsed: list[tuple[int, int, str]] = field(default_factory=list)

    def file_index(self, path: str) -> int:
        self.files.append(path)
        return len(self.files) - 1

    def location(self, file: int, line: int) -> Location:
        return Location(self.files[file], line)
