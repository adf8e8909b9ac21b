"""What the config readers hand the checker: routes and addresses with the file and line they
came from, in columnar form (a Slim Fly q=19 has 4.7 M routes; one object per route would cost
more than the whole check)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np


@dataclass(frozen=True)
class Location:
    file: str  # relative to the compiled output directory
    line: int  # 1-based; 0 when the fault is something the file lacks

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass(frozen=True)
class RouteBlock:
    """Routes as arrays, their prefixes and next hops as ids into name tables: a fabric has a
    few thousand distinct of each, so a string per route would cost gigabytes."""

    switch: np.ndarray
    prefix: np.ndarray  # ids into prefix_names
    next_hop: np.ndarray  # ids into hop_names
    file: np.ndarray
    line: np.ndarray
    prefix_names: list[str]
    hop_names: list[str]

    def __len__(self) -> int:
        return len(self.switch)


@dataclass
class RouteColumns:
    """One row per route line (an ECMP route with k next hops gives k rows): rows appended one
    by one to the lists, then the rows of `blocks` (filled by the native reader)."""

    switch: list[int] = field(default_factory=list)
    prefix: list[str] = field(default_factory=list)
    next_hop: list[str] = field(default_factory=list)
    file: list[int] = field(default_factory=list)
    line: list[int] = field(default_factory=list)
    blocks: list[RouteBlock] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.switch) + sum(len(block) for block in self.blocks)

    def extend(self, other: RouteColumns, file_offset: int) -> None:
        self.switch.extend(other.switch)
        self.prefix.extend(other.prefix)
        self.next_hop.extend(other.next_hop)
        self.file.extend(f + file_offset for f in other.file)
        self.line.extend(other.line)
        self.blocks.extend(replace(b, file=b.file + file_offset) for b in other.blocks)

    def interned(self) -> RouteBlock:
        """Every row, list rows first, as one block with one pair of name tables."""
        if not self.switch and len(self.blocks) == 1:
            return self.blocks[0]
        prefix_ids: dict[str, int] = {}
        hop_ids: dict[str, int] = {}
        prefixes = [_intern(prefix_ids, p) for p in self.prefix]
        hops = [_intern(hop_ids, h) for h in self.next_hop]
        parts = [
            (
                np.asarray(self.switch, dtype=np.int64),
                np.asarray(prefixes, dtype=np.int64),
                np.asarray(hops, dtype=np.int64),
                np.asarray(self.file, dtype=np.int64),
                np.asarray(self.line, dtype=np.int64),
            )
        ]
        for block in self.blocks:
            prefix_map = np.array([_intern(prefix_ids, p) for p in block.prefix_names] + [0])
            hop_map = np.array([_intern(hop_ids, h) for h in block.hop_names] + [0])
            parts.append(
                (
                    block.switch.astype(np.int64),
                    prefix_map[block.prefix],
                    hop_map[block.next_hop],
                    block.file.astype(np.int64),
                    block.line.astype(np.int64),
                )
            )
        switch, prefix, hop, file, line = (np.concatenate(c) for c in zip(*parts, strict=True))
        return RouteBlock(switch, prefix, hop, file, line, list(prefix_ids), list(hop_ids))


def _intern(ids: dict[str, int], name: str) -> int:
    return ids.setdefault(name, len(ids))


class AddressLine(NamedTuple):
    """An address configured on a switch port (fabric port name, or "lo") or on a host."""

    owner: str  # switch or host name
    port: str
    address: str  # with prefix length, as written
    file: int
    line: int


@dataclass
class AddressColumns:
    """Address lines as columns: a q=19 Slim Fly configures 3 * 10^5 of them (a gateway on
    every host port, an address per host and layer), and a tuple per line cost a second."""

    owner: list[str] = field(default_factory=list)
    port: list[str] = field(default_factory=list)
    address: list[str] = field(default_factory=list)
    file: list[int] = field(default_factory=list)
    line: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.owner)

    def __getitem__(self, row: int) -> AddressLine:
        return AddressLine(
            self.owner[row], self.port[row], self.address[row], self.file[row], self.line[row]
        )

    def __iter__(self) -> Iterator[AddressLine]:
        return map(AddressLine, self.owner, self.port, self.address, self.file, self.line)

    def append(self, line: AddressLine) -> None:
        self.extend(line.owner, line.file, [line.port], [line.address], [line.line])

    def extend(
        self,
        owner: str,
        file: int,
        ports: Sequence[str],
        addresses: Sequence[str],
        lines: Sequence[int],
    ) -> None:
        """Lines of one owner's file."""
        self.owner += [owner] * len(ports)
        self.port += ports
        self.address += addresses
        self.file += [file] * len(ports)
        self.line += lines

    def pop(self, row: int) -> AddressLine:
        popped = self[row]
        for column in (self.owner, self.port, self.address, self.file, self.line):
            del column[row]
        return popped

    def joined(self, other: AddressColumns) -> AddressColumns:
        return AddressColumns(
            self.owner + other.owner,
            self.port + other.port,
            self.address + other.address,
            self.file + other.file,
            self.line + other.line,
        )


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


class PendingFile(NamedTuple):
    switch: int
    platform: str
    relative: str  # under the output directory
    reader: str  # "module:function" (SwitchFile.reader)
    holds: str  # SwitchFile.holds


@dataclass
class ParsedConfigs:
    """Everything read back from one platform's rendered files."""

    platform: str
    files: list[str] = field(default_factory=list)
    routes: RouteColumns = field(default_factory=RouteColumns)
    # Floating static routes (`routing.backup`): checked apart, as they forward only when the
    # primary route's cable is down.
    backups: RouteColumns = field(default_factory=RouteColumns)
    macs: MacColumns = field(default_factory=MacColumns)
    trunks: list[TrunkLine] = field(default_factory=list)
    switch_addresses: AddressColumns = field(default_factory=AddressColumns)
    host_addresses: AddressColumns = field(default_factory=AddressColumns)
    # Kernel platforms (frr, linux) share one subnet over several host ports with `noprefixroute`
    # gateways, so each host is reachable only through its /32 (/128) route on its port.
    host_routes: AddressColumns = field(default_factory=AddressColumns)
    host_route_switches: set[str] = field(default_factory=set)
    # The file holding a switch's routes (faults of omission point there), and a host's plan.
    switch_file: dict[str, int] = field(default_factory=dict)
    address_file: dict[str, int] = field(default_factory=dict)
    host_file: dict[str, int] = field(default_factory=dict)
    # Lines a reader could not understand: (file index, line, text); reported, never ignored.
    unparsed: list[tuple[int, int, str]] = field(default_factory=list)
    # Switches whose files are all there (and so read), and the files not read yet.
    configured_switches: set[str] = field(default_factory=set)
    pending: list[PendingFile] = field(default_factory=list)
    hosts_pending: bool = False

    def file_index(self, path: str) -> int:
        self.files.append(path)
        return len(self.files) - 1

    def location(self, file: int, line: int) -> Location:
        return Location(self.files[file], line)
