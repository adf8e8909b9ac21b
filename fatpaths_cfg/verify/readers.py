"""Reading the rendered files back: routes and addresses, each with the file and line it came
from.

Each platform's descriptor names the reader of each of its files (`SwitchFile.reader`): the
readers of the formats several platforms share are here (FRR route lines, iproute2 scripts,
read natively and in batches), a platform's own format is read by its package's `reader`
module (`fatpaths_cfg.platforms.<name>.reader`) through the `SwitchReader` below.
The readers understand exactly the statements fatpaths renders (see each platform's
`templates/`); any other line is reported as unparsed rather than skipped, because a line the
checker does not read is a line it cannot vouch for. Faults of omission are the checker's
business, not the reader's.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from fatpaths_cfg import _native
from fatpaths_cfg.compiled import LoadedCompiled
from fatpaths_cfg.ifnames import kernel_ifname
from fatpaths_cfg.platforms import PLATFORMS, resolve
from fatpaths_cfg.render.base import BACKUP_DISTANCE
from fatpaths_cfg.verify.model import AddressLine, ParsedConfigs, PendingFile, RouteBlock

LOOPBACK = "lo"

# FRR statements rendered around the routes that carry nothing to check.
_FRR_INERT = (
    "frr version ",
    "frr defaults ",
    "hostname ",
    "service integrated-vtysh-config",
    "ip forwarding",
    "ipv6 forwarding",
    "line vty",
)
_FRR_ROUTE = ("ip route ", "ipv6 route ")
# The distance every backup route is rendered with (`ip route PREFIX HOP 250`).
BACKUP = str(BACKUP_DISTANCE)
_SHELL_INERT = ("#", "set -e", "sysctl ", "ip link set ", "ip -6 neigh replace proxy ")


def normalise_mac(text: str) -> str:
    """`02fa.0000.0001` or `02:FA:00:00:00:01` -> `02fa00000001`."""
    return "".join(c for c in text.lower() if c in "0123456789abcdef")


def lines_of(path: Path) -> Iterable[tuple[int, str]]:
    """(number from 1, stripped text) of each line of a rendered file."""
    # One read and one split per file: 10^4 host plans and 10^5 port lines per fabric.
    lines = path.read_text(encoding="utf-8").split("\n")
    if lines[-1] == "":
        lines.pop()  # what follows the last newline is no line
    return enumerate(map(str.strip, lines), start=1)


class _SwitchReader:
    """Reads the files of one switch into `parsed`, translating interface names to ports."""

    def __init__(
        self, parsed: ParsedConfigs, out: Path, name: str, switch: int, ifnames: dict[str, str]
    ) -> None:
        self.parsed = parsed
        self.out = out
        self.name = name
        self.switch = switch
        self.ifnames = ifnames  # interface name as configured -> fabric port name
        self.file = -1
        self.batch: FrrRouteBatch | None = None

    def open(self, relative: str) -> Path:
        self.file = self.parsed.file_index(relative)
        return self.out / relative

    def route(self, prefix: str, next_hop: str, line: int) -> None:
        self.routes([prefix], [next_hop], [line])

    def backup(self, prefix: str, next_hop: str, line: int) -> None:
        backups = self.parsed.backups
        backups.prefix.append(prefix)
        backups.next_hop.append(next_hop)
        backups.line.append(line)
        backups.switch.append(self.switch)
        backups.file.append(self.file)

    def address(self, interface: str, address: str, line: int) -> None:
        self.parsed.address_file[self.name] = self.file
        port = self.ifnames.get(interface, interface)
        self.parsed.switch_addresses.append(AddressLine(self.name, port, address, self.file, line))

    def host_route(self, interface: str, address: str, line: int) -> None:
        port = self.ifnames.get(interface, interface)
        self.parsed.host_routes.append(AddressLine(self.name, port, address, self.file, line))

    def mac_entry(self, vlan: int, mac: str, port: str, line: int) -> None:
        macs = self.parsed.macs
        macs.switch.append(self.switch)
        macs.vlan.append(vlan)
        macs.mac.append(normalise_mac(mac))
        macs.port.append(port)
        macs.file.append(self.file)
        macs.line.append(line)

    def unparsed(self, line: int, text: str) -> None:
        self.parsed.unparsed.append((self.file, line, text))

    # -- formats ---------------------------------------------------------------------------
    def frr_routes(self, relative: str) -> None:
        """`ip route PREFIX NEXTHOP` / `ipv6 route PREFIX NEXTHOP` (routes.j2): read with the
        other switches' files in one native pass when this reader belongs to a batch."""
        path = self.open(relative)
        self.parsed.switch_file[self.name] = self.file
        if self.batch is not None:
            self.batch.add(self, self.file, path)
            return
        self.frr_routes_of(path)

    def frr_routes_of(self, path: Path) -> None:
        prefixes: list[str] = []
        hops: list[str] = []
        lines: list[int] = []
        # A large switch has n * Nr route lines: the loop stays free of calls it can avoid.
        for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            text = raw.strip()
            if text.startswith(_FRR_ROUTE):
                parts = text.split()
                if len(parts) == 4:
                    prefixes.append(parts[2])
                    hops.append(parts[3])
                    lines.append(number)
                    continue
                if len(parts) == 5 and parts[4] == BACKUP:
                    self.backup(parts[2], parts[3], number)
                    continue
            elif not text or text[0] == "!" or text.startswith(_FRR_INERT):
                continue
            self.unparsed(number, text)
        self.routes(prefixes, hops, lines)

    def routes(self, prefixes: list[str], hops: list[str], lines: list[int]) -> None:
        routes = self.parsed.routes
        routes.prefix += prefixes
        routes.next_hop += hops
        routes.line += lines
        routes.switch += [self.switch] * len(prefixes)
        routes.file += [self.file] * len(prefixes)

    def shell(self, relative: str, routes: bool) -> None:
        """iproute2 scripts (interfaces_body.sh.j2, host_port.sh.j2, linux/switch.sh.j2)."""
        path = self.open(relative)
        self.parsed.address_file[self.name] = self.file
        if routes:
            self.parsed.switch_file[self.name] = self.file
        elif self.native_shell(path):
            return
        prefixes: list[str] = []
        hops: list[str] = []
        lines: list[int] = []
        for number, text in lines_of(path):
            if text.startswith("ip route replace ") and routes:
                parts = text.split()
                if len(parts) == 6 and parts[4] == "via":
                    prefixes.append(parts[3])
                    hops.append(parts[5])
                    lines.append(number)
                    continue
            if not text or text.startswith(_SHELL_INERT):
                continue
            parts = text.split()
            family = parts[1] == "-6" if len(parts) > 1 else False
            words = parts[2:] if family else parts[1:]
            if words[:2] == ["addr", "replace"] and len(words) >= 5 and words[3] == "dev":
                self.address(words[4], words[2], number)
                continue
            if words[:2] == ["route", "replace"] and len(words) >= 5:
                destination, rest = words[2], words[3:]
                if rest[0] == "dev" and len(rest) == 2:
                    self.host_route(rest[1], destination, number)
                    continue
                if routes and rest[0] == "via" and len(rest) == 2:
                    self.route(destination, rest[1], number)  # ip -6 route replace
                    continue
                ecmp_hops = rest[2::3]
                if (
                    routes
                    and rest[0::3] == ["nexthop"] * len(ecmp_hops)
                    and rest[1::3] == ["via"] * len(ecmp_hops)
                ):
                    for hop in ecmp_hops:
                        self.route(destination, hop, number)
                    continue
            self.unparsed(number, text)
        self.routes(prefixes, hops, lines)

    def native_shell(self, path: Path) -> bool:
        """A script without routes read by the native reader; False leaves it to Python."""
        read = _native.read_shell_addresses(str(path))
        if read is None:
            return False
        addresses, host_routes, unparsed = read
        port, name, file = self.ifnames.get, self.name, self.file
        # Built in bulk: a q=19 Slim Fly has 2 * 10^5 of these lines.
        for lines, columns in (
            (addresses, self.parsed.switch_addresses),
            (host_routes, self.parsed.host_routes),
        ):
            if lines:
                numbers, interfaces, texts = zip(*lines, strict=True)
                columns.extend(name, file, [port(i, i) for i in interfaces], texts, numbers)
        self.parsed.unparsed += [(file, n, text) for n, text in unparsed]
        return True


class FrrRouteBatch:
    """FRR route files of many switches, read together by the native reader (in parallel, the
    routes as arrays) once every switch's files are known; `frr_routes_of` reads any file whose
    text the native reader leaves to Python."""

    def __init__(self) -> None:
        self.files: list[tuple[_SwitchReader, int, Path]] = []

    def add(self, reader: _SwitchReader, file: int, path: Path) -> None:
        self.files.append((reader, file, path))

    def read(self, parsed: ParsedConfigs) -> None:
        if not self.files:
            return
        prefix_names, hop_names, position, line, prefix, hop, other, unread = (
            _native.read_route_lines([str(path) for _, _, path in self.files])
        )
        switch_of = np.array([reader.switch for reader, _, _ in self.files], dtype=np.int64)
        file_of = np.array([file for _, file, _ in self.files], dtype=np.int64)
        parsed.routes.blocks.append(
            RouteBlock(
                switch_of[position],
                prefix,
                hop,
                file_of[position],
                line.astype(np.int64),
                prefix_names,
                hop_names,
            )
        )
        backups = parsed.backups
        for at, number, text in other:
            parts = text.split() if text.startswith(_FRR_ROUTE) else []
            if len(parts) == 5 and parts[4] == BACKUP:
                # Few (a backup per route at most): Python rows beside the native block.
                backups.switch.append(int(switch_of[at]))
                backups.prefix.append(parts[2])
                backups.next_hop.append(parts[3])
                backups.file.append(int(file_of[at]))
                backups.line.append(number)
            elif text.startswith(_FRR_ROUTE) or not text.startswith(_FRR_INERT):
                parsed.unparsed.append((int(file_of[at]), number, text))
        for at in unread:
            reader, file, path = self.files[at]
            reader.file = file
            reader.frr_routes_of(path)


def _ifname_map(loaded: LoadedCompiled, switch: int) -> dict[str, str]:
    return {kernel_ifname(p): p for p in loaded.fabric.switches[switch].ports}


# The readers platform descriptors name (`SwitchFile.reader`): each reads one rendered file,
# `reader(switch_reader, relative_path)`; the shared formats' follow, a platform's own format is
# read in its package (`platforms.<name>.reader`).
SwitchReader = _SwitchReader


def read_frr_routes(reader: SwitchReader, relative: str) -> None:
    reader.frr_routes(relative)


def read_iproute2_addresses(reader: SwitchReader, relative: str) -> None:
    reader.shell(relative, routes=False)


def read_iproute2(reader: SwitchReader, relative: str) -> None:
    reader.shell(relative, routes=True)


def _switch_reader(
    parsed: ParsedConfigs, out: Path, loaded: LoadedCompiled, switch: int, platform: str
) -> _SwitchReader:
    name = loaded.fabric.switches[switch].name
    descriptor = PLATFORMS[platform]
    ifnames = _ifname_map(loaded, switch) if descriptor.kernel else {}
    naming = descriptor.port_names
    if naming is not None:
        ifnames = naming.names(loaded.fabric.switches[switch].ports)
    return _SwitchReader(parsed, out, name, switch, ifnames)


def _plan_switch(
    parsed: ParsedConfigs, out: Path, loaded: LoadedCompiled, switch: int, platform: str
) -> None:
    """Queue the switch's files in `parsed.pending`; none when one is missing (the switch is
    reported as unconfigured, not half read)."""
    name = loaded.fabric.switches[switch].name
    descriptor = PLATFORMS[platform]
    files = [(f"configs/{platform}/{file.at(name)}", file) for file in descriptor.files]
    if not all((out / relative).is_file() for relative, _ in files):
        return
    parsed.configured_switches.add(name)
    if descriptor.kernel:
        parsed.host_route_switches.add(name)
    for relative, file in files:
        parsed.pending.append(PendingFile(switch, platform, relative, file.reader, file.holds))


def _host_plans(directory: Path) -> set[str]:
    """The regular files in `directory`, listed once: a stat per host costs 10^4 system calls."""
    try:
        with os.scandir(directory) as entries:
            return {entry.name for entry in entries if entry.is_file()}
    except (FileNotFoundError, NotADirectoryError):
        return set()


def _read_hosts(parsed: ParsedConfigs, out: Path, loaded: LoadedCompiled) -> None:
    directory = out / "hosts"
    present = _host_plans(directory)
    prefix = f"{directory}{os.sep}"
    plans: list[tuple[str, int, str]] = []
    for host in loaded.fabric.hosts:
        name = f"{host.name}.sh"
        if name in present:
            file = parsed.file_index(f"hosts/{name}")
            parsed.host_file[host.name] = file
            plans.append((host.name, file, prefix + name))
    # 10^4 plans: read and split natively, in parallel; a plan it leaves is read here.
    read = _native.read_host_plans([path for _, _, path in plans])
    addresses = parsed.host_addresses
    for (owner, file, path), lines in zip(plans, read, strict=True):
        if lines is None:
            lines = _host_plan_addresses(path)
        if lines:
            numbers, devices, texts = zip(*lines, strict=True)
            addresses.extend(owner, file, devices, texts, numbers)


def _host_plan_addresses(path: str) -> list[tuple[int, str, str]]:
    """(line, device, address) of each `ip [-6] addr replace` line of a host plan."""
    with open(path, encoding="utf-8") as plan:
        lines = plan.read().split("\n")
    found = []
    for number, text in enumerate(lines, start=1):
        # Most lines of a plan are routes and MPTCP endpoints: test before splitting.
        if "replace" not in text or "addr" not in text:
            continue
        parts = text.split()
        words = parts[2:] if parts[1:2] == ["-6"] else parts[1:]
        if words[:2] == ["addr", "replace"] and len(words) >= 3:
            # The device names the plane's uplink (eth0 with one plane).
            device = words[4] if words[3:4] == ["dev"] and len(words) >= 5 else "eth0"
            found.append((number, device, words[2]))
    return found


def rendered_platforms(out: Path) -> list[str]:
    return [p for p in PLATFORMS if (out / "configs" / p).is_dir()]


def switch_platforms(loaded: LoadedCompiled, platform: str | None) -> dict[int, str]:
    """Which platform's files to read for each switch: the given platform for all, else each
    switch's inventory platform (a mixed fabric forwards across platforms)."""
    if platform is not None:
        return {s.index: platform for s in loaded.fabric.switches}
    return {s.index: s.platform for s in loaded.fabric.switches}


def read_configs(
    loaded: LoadedCompiled, platform: str | None = None, label: str | None = None
) -> ParsedConfigs:
    """Read every switch's files (of `platform`, or each switch's own) and the host plans."""
    parsed = plan_reading(loaded, platform, label)
    read_route_files(parsed, loaded)
    read_address_files(parsed, loaded)
    return parsed


def plan_reading(
    loaded: LoadedCompiled, platform: str | None = None, label: str | None = None
) -> ParsedConfigs:
    """Configs to read, nothing read yet: each switch's files (of `platform`, or each switch's
    own) wait in `pending` for `read_route_files` and `read_address_files`, the host plans for
    the latter."""
    out = loaded.directory
    parsed = ParsedConfigs(label or platform or "inventory platforms")
    for switch, name in sorted(switch_platforms(loaded, platform).items()):
        _plan_switch(parsed, out, loaded, switch, name)
    parsed.hosts_pending = True
    return parsed


def read_route_files(parsed: ParsedConfigs, loaded: LoadedCompiled) -> None:
    """The pending files that hold routes (and whatever else they hold)."""
    _read_pending(parsed, loaded, ("routes", "both"))


def read_address_files(parsed: ParsedConfigs, loaded: LoadedCompiled) -> None:
    """The pending files that hold only addresses, and the host plans."""
    _read_pending(parsed, loaded, ("addresses",))
    if parsed.hosts_pending:
        _read_hosts(parsed, loaded.directory, loaded)
        parsed.hosts_pending = False


def _read_pending(parsed: ParsedConfigs, loaded: LoadedCompiled, holds: tuple[str, ...]) -> None:
    out = loaded.directory
    batch = FrrRouteBatch()
    reader: _SwitchReader | None = None
    left = []
    for pending in parsed.pending:
        if pending.holds not in holds:
            left.append(pending)
            continue
        if reader is None or reader.switch != pending.switch:
            reader = _switch_reader(parsed, out, loaded, pending.switch, pending.platform)
            reader.batch = batch
        resolve(pending.reader)(reader, pending.relative)
    parsed.pending = left
    batch.read(parsed)
