"""Address checks: every address of the plan where it belongs, none twice, host routes on the
switches that keep them."""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from dataclasses import dataclass

from fatpaths_cfg.verify.context import Room
from fatpaths_cfg.verify.findings import (
    DUPLICATE_ADDRESS,
    HOST_ON_LINK,
    MISSING_ADDRESS,
    MISSING_HOST_ADDRESS,
    UNEXPECTED_ADDRESS,
    Finding,
    ForwardingCheck,
    HostRouteKey,
)
from fatpaths_cfg.verify.model import AddressColumns, AddressLine
from fatpaths_cfg.verify.plan import (
    ExpectedAddress,
    canonical_addresses,
    canonical_interface,
    canonical_interfaces,
)
from fatpaths_cfg.verify.readers import LOOPBACK, read_address_files


@dataclass(frozen=True)
class PlacedAddress:
    """An address as configured, with what it serves: "host", "link", "loopback", "gateway"
    or "port" (any other switch port)."""

    line: AddressLine
    role: str
    planned: bool  # the address plan gives this owner this address
    link: int | None = None


def _repeats_other_than_gateways(
    entries: AddressColumns,
    addresses: list[str | None],
    counts: Counter[str | None],
    gateways: set[tuple[str, str]],
) -> bool:
    """Whether an address is configured more than once other than as one owner's gateway
    (those are one interface, on however many host ports)."""
    owner_of: dict[str, str] = {}
    for owner, text, address in zip(entries.owner, entries.address, addresses, strict=True):
        if address is None or counts[address] < 2:
            continue
        if owner_of.setdefault(address, owner) != owner:
            return True
        if (owner, canonical_interface(text)) not in gateways:
            return True
    return False


class AddressChecks(Room):
    """The addresses of switches and hosts, against the address plan."""

    def host_route_keys(self, host_wants: list[ExpectedAddress]) -> list[HostRouteKey | None]:
        """Per host address of the plan: the (switch, port, address) of the host route its
        switch needs, None when the switch keeps no host routes (or the host is unknown)."""
        hosts = {h.name: h for h in self.fabric.hosts}
        routing = self.parsed.host_route_switches
        bare = canonical_addresses([want.address for want in host_wants])
        keys: list[HostRouteKey | None] = []
        for want, address in zip(host_wants, bare, strict=True):
            host = hosts.get(want.owner)
            if host is None:
                keys.append(None)
                continue
            uplink = host.uplinks[want.plane]
            switch = self.names[uplink.switch]
            keys.append((switch, uplink.port, address) if switch in routing else None)
        return keys

    def missing_host_route(self, want: ExpectedAddress, key: HostRouteKey) -> None:
        switch, port, _ = key
        self.ctx.add(
            Finding(
                MISSING_HOST_ADDRESS,
                f"{switch} has no host route to {want.owner}'s layer {want.layer} address "
                f"{want.address.split('/')[0]} on {port}: the host is unreachable in "
                "that layer",
                self.ctx.switch_location(self.fabric.switch_index[switch], "interfaces"),
                want.layer,
                switch,
                want.owner,
            )
        )

    def placed_addresses(self) -> dict[str, list[PlacedAddress]]:
        """Every configured address by canonical address (no prefix length), one entry per
        interface, planned ones first, each group in reading order."""
        on_switches = len(self.parsed.switch_addresses)
        entries = self.parsed.switch_addresses.joined(self.parsed.host_addresses)
        addresses = canonical_addresses(entries.address)
        # Only an address configured more than once can clash: the rest (nearly all of a
        # sound fabric's) need no place built, and a fabric without any needs no plan indexed.
        counts = Counter(addresses)
        if len(counts) == len(addresses):
            return {}
        # Kernel platforms put a switch's layer gateway on every host port: one interface.
        gateways = {(w.owner, w.address) for w in self.index.expected if w.role == "gateway"}
        if not _repeats_other_than_gateways(entries, addresses, counts, gateways):
            return {}  # a sound kernel fabric's 10^5 repeats: no place needs building
        planned = {(want.owner, want.address) for want in self.index.expected}
        link_of_port = {
            (self.names[switch], port): link.index
            for link in self.fabric.links
            for switch, port in ((link.a, link.a_port), (link.b, link.b_port))
        }
        groups: dict[str, dict[tuple[str, str], PlacedAddress]] = defaultdict(dict)
        rows = zip(entries.owner, entries.port, entries.address, addresses, strict=True)
        for i, (owner, port, text, address) in enumerate(rows):
            if address is None or counts[address] < 2:
                continue
            on_host = i >= on_switches
            key = (owner, canonical_interface(text))
            gateway = key in gateways
            interface = (owner, "gateway" if gateway else port)
            group = groups[address]
            if interface in group:
                continue  # the first line of an interface stands for it (a gateway: 10^5)
            link = link_of_port.get((owner, port))
            if on_host:
                role = "host"
            elif port == LOOPBACK:
                role = "loopback"
            elif gateway:
                role = "gateway"
            else:
                role = "port" if link is None else "link"
            group[interface] = PlacedAddress(entries[i], role, key in planned, link)
        return {
            address: sorted(places.values(), key=lambda p: not p.planned)
            for address, places in groups.items()
            if len(places) > 1
        }

    def describe_place(self, place: PlacedAddress) -> str:
        entry = place.line
        if place.role == "host":
            return f"host {entry.owner}"
        if place.role == "link":
            return f"link {place.link}'s end at {entry.owner} port {entry.port}"
        if place.role == "gateway":
            return f"{entry.owner}'s host gateway on port {entry.port}"
        return f"{entry.owner} port {entry.port}"

    def check_address_clashes(self) -> set[tuple[int, int]]:
        """An address on two interfaces reaches only one of them, whatever the routes say; a
        plan whose pools overlap passes every other check. Returns the (file, line) reported."""
        reported: set[tuple[int, int]] = set()
        for address, places in sorted(self.placed_addresses().items()):
            first = places[0]
            where = self.parsed.location(first.line.file, first.line.line)
            for place in places[1:]:
                entry = place.line
                roles = {first.role, place.role}
                kind = HOST_ON_LINK if roles == {"host", "link"} else DUPLICATE_ADDRESS
                unplanned = "" if place.planned else "; the address plan does not give it here"
                self.ctx.add(
                    Finding(
                        kind,
                        f"{self.describe_place(place)}: address {address} is also on "
                        f"{self.describe_place(first)} ({where}): packets for it reach only "
                        f"one of them{unplanned}",
                        self.parsed.location(entry.file, entry.line),
                        source=entry.owner,
                    )
                )
                reported.add((entry.file, entry.line))
        return reported

    def address_part(self) -> tuple[list[Finding], int, float]:
        """The files that hold only addresses and the host plans read, and `check_addresses`,
        on a result of its own: (findings, host addresses, seconds)."""
        own = self.ctx.result
        self.ctx.result = ForwardingCheck(own.platform)
        started = time.perf_counter()
        try:
            read_before = len(self.parsed.unparsed)
            read_address_files(self.parsed, self.loaded)
            self.ctx.report_unparsed(self.parsed.unparsed[read_before:])
            self.check_addresses()
            return (
                self.ctx.result.findings,
                self.ctx.result.host_addresses,
                time.perf_counter() - started,
            )
        finally:
            self.ctx.result = own

    def check_addresses(self) -> None:
        parsed = self.parsed
        clashed = self.check_address_clashes()
        configured: dict[tuple[str, str], list[tuple[str, int, int]]] = {}
        entries = parsed.switch_addresses.joined(parsed.host_addresses)
        interfaces = canonical_interfaces(entries.address)
        rows = zip(entries.owner, entries.port, entries.file, entries.line, interfaces, strict=True)
        for owner, port, file, line, interface in rows:
            place = (port, file, line)
            key = (owner, interface)
            # Nearly every key is configured once: a fresh list beats defaultdict's lookup twice.
            known = configured.get(key)
            if known is None:
                configured[key] = [place]
            else:
                known.append(place)
        expected_keys: set[tuple[str, str]] = set()
        routes = parsed.host_routes
        host_routes = set(
            zip(routes.owner, routes.port, canonical_addresses(routes.address), strict=True)
        )
        switches_with_hosts = {self.names[u.switch] for h in self.fabric.hosts for u in h.uplinks}
        expected = self.index.expected
        route_keys = iter(self.host_route_keys([want for want in expected if want.role == "host"]))
        for want in expected:
            key = (want.owner, want.address)
            expected_keys.add(key)
            if want.role == "host":
                self.ctx.result.host_addresses += 1
                route_key = next(route_keys)
                if route_key is not None and route_key not in host_routes:
                    self.missing_host_route(want, route_key)
                if want.owner not in parsed.host_file:
                    continue  # host plans not read for this platform: nothing to compare
                found = configured.get(key)
                if not found:
                    file = parsed.host_file[want.owner]
                    self.ctx.add(
                        Finding(
                            MISSING_HOST_ADDRESS,
                            f"host {want.owner} lacks its layer {want.layer} address "
                            f"{want.address}: it is unreachable in that layer",
                            parsed.location(file, 0),
                            want.layer,
                            destination=want.owner,
                        )
                    )
                continue
            if want.owner not in parsed.configured_switches:
                continue  # reported as a missing config
            if want.role == "link" and self.index.encoding == "vlan":
                continue  # VLAN encoding: links are L2 trunks, the plan's addresses go unused
            if want.role == "gateway" and want.owner not in switches_with_hosts:
                continue  # no host port to carry it: switches without hosts need no gateway
            found = configured.get(key)
            if found and (want.port is None or any(port == want.port for port, _, _ in found)):
                continue
            ports = {port for port, _, _ in found or []}
            what = {
                "link": f"link {want.link} address {want.address} on port {want.port}",
                "gateway": f"layer {want.layer} gateway {want.address}",
                "loopback": f"loopback {want.address}",
            }[want.role]
            consequence = {
                "link": ": routes via it cannot resolve their next hop",
                "gateway": ": its hosts are unreachable in that layer",
                "loopback": "",
            }[want.role]
            where = f" (found on {', '.join(sorted(ports))})" if found else ""
            self.ctx.add(
                Finding(
                    MISSING_ADDRESS,
                    f"{want.owner} lacks {what}{where}{consequence}",
                    self.ctx.switch_location(self.fabric.switch_index[want.owner], "interfaces"),
                    want.layer,
                    want.owner,
                )
            )
        # Nearly every configured key is expected: only the rest need sorting.
        unexpected = [item for item in configured.items() if item[0] not in expected_keys]
        for (owner, address), places in sorted(unexpected):
            for port, file, line in places:
                if (file, line) in clashed:
                    continue  # a line is reported once, under its most telling fault
                self.ctx.add(
                    Finding(
                        UNEXPECTED_ADDRESS,
                        f"{owner} port {port}: address {address} is not in the address plan",
                        parsed.location(file, line),
                        source=owner,
                    )
                )
