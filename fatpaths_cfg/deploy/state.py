"""What a switch holds, in one comparable form: kernel items (addresses, routes) and route tables.

The compiled scripts only ever `replace`, so running one never removes what an earlier version
added. Reading the device's kernel into the same items the scripts are parsed into lets a commit
delete exactly what the candidate no longer has, a diff show the device as it is, and a rollback
be checked item by item.
"""

from __future__ import annotations

import difflib
import ipaddress
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# prefix -> next-hop addresses (a set: ECMP lines of one prefix form one entry)
RouteTable = dict[str, frozenset[str]]
# One static route as a round of `deploy --from` moves it: (family, prefix, next-hop address).
RouteLine = tuple[str, str, str]

IP_LINE = re.compile(r"^ip(?P<six> -6)? (?P<kind>addr|route) replace (?P<dst>\S+)(?P<rest>.*)$")
DEV = re.compile(r"\bdev (\S+)")
VIA = re.compile(r"\bvia (\S+)")
LINK_LOCAL_V6 = ipaddress.ip_network("fe80::/10")


def prefix(text: str) -> str:
    """One spelling per prefix: the kernel writes host routes without /32 and v6 compressed."""
    return str(ipaddress.ip_network(text, strict=False))


def interface(text: str) -> str:
    """An interface address as `address/len`, keeping the host bits (10.0.0.1/29)."""
    return str(ipaddress.ip_interface(text))


@dataclass(frozen=True, order=True)
class KernelItem:
    """An address on a port, a link route out of a port, or a route via next hops."""

    kind: str  # addr | route
    dst: str
    dev: str = ""
    via: tuple[str, ...] = ()

    @property
    def family(self) -> str:
        return " -6" if ":" in self.dst else ""

    def replace(self) -> str:
        if self.kind == "addr":
            return f"ip{self.family} addr replace {self.dst} dev {self.dev}"
        if not self.via:
            return f"ip{self.family} route replace {self.dst} dev {self.dev}"
        if len(self.via) == 1:
            return f"ip{self.family} route replace {self.dst} via {self.via[0]}"
        hops = "".join(f" nexthop via {gateway}" for gateway in self.via)
        return f"ip{self.family} route replace {self.dst}{hops}"

    def delete(self) -> str:
        if self.kind == "addr":
            return f"ip{self.family} addr del {self.dst} dev {self.dev}"
        where = f" dev {self.dev}" if not self.via else ""
        return f"ip{self.family} route del {self.dst}{where}"


def script_items(text: str) -> set[KernelItem]:
    """The addresses and routes a compiled iproute2 script installs (flags such as noprefixroute
    do not change what is installed where, so they are not part of an item)."""
    items: set[KernelItem] = set()
    for raw in text.splitlines():
        match = IP_LINE.match(raw.strip())
        if not match:
            continue
        dev = DEV.search(match["rest"])
        gateways = tuple(sorted(VIA.findall(match["rest"])))
        if match["kind"] == "addr" and dev:
            items.add(KernelItem("addr", interface(match["dst"]), dev.group(1)))
        elif gateways:
            items.add(KernelItem("route", prefix(match["dst"]), via=gateways))
        elif dev:
            items.add(KernelItem("route", prefix(match["dst"]), dev.group(1)))
    return items


def script_ports(text: str) -> set[str]:
    return {item.dev for item in script_items(text) if item.dev}


def device_addresses(ip_addr_json: str, ports: Iterable[str]) -> set[KernelItem]:
    """Addresses on the fabric ports and loopback, except what the kernel puts there itself."""
    wanted = set(ports) | {"lo"}
    items: set[KernelItem] = set()
    for link in json.loads(ip_addr_json or "[]"):
        if link.get("ifname") not in wanted:
            continue
        for info in link.get("addr_info", []):
            address = ipaddress.ip_interface(f"{info['local']}/{info['prefixlen']}")
            if address.ip.is_loopback or address.ip in LINK_LOCAL_V6:
                continue
            items.add(KernelItem("addr", str(address), link["ifname"]))
    return items


def device_routes(ip_route_json: str, ports: Iterable[str], with_gateways: bool) -> set[KernelItem]:
    """Routes out of the fabric ports that someone added (the kernel's own connected routes are
    left out). Routes via next hops are included only where no routing daemon owns them."""
    wanted = set(ports)
    items: set[KernelItem] = set()
    for route in json.loads(ip_route_json or "[]"):
        if route.get("protocol") == "kernel" or route.get("dst") == "default":
            continue
        hops = _hops(route)
        if not hops or not all(dev in wanted for dev, _ in hops):
            continue
        gateways = tuple(sorted(g for _, g in hops if g))
        dst = prefix(route["dst"])
        if gateways and with_gateways:
            items.add(KernelItem("route", dst, via=gateways))
        elif not gateways:
            items.add(KernelItem("route", dst, hops[0][0]))
    return items


def _hops(route: Mapping[str, Any]) -> list[tuple[str, str]]:
    if "nexthops" in route:
        return [(hop.get("dev", ""), hop.get("gateway", "")) for hop in route["nexthops"]]
    return [(route.get("dev", ""), route.get("gateway", ""))]


def fib_table(ip_route_json: str, ports: Iterable[str]) -> RouteTable:
    """Kernel routes via next hops out of the fabric ports (a default route out of the
    management port is the operator's, not the fabric's)."""
    wanted = set(ports)
    table: RouteTable = {}
    for route in json.loads(ip_route_json or "[]"):
        hops = [(dev, gateway) for dev, gateway in _hops(route) if gateway]
        if not hops or not any(dev in wanted for dev, _ in hops):
            continue
        dst = "0.0.0.0/0" if route.get("dst") == "default" else prefix(route["dst"])
        if route.get("dst") == "default" and ":" in hops[0][1]:
            dst = "::/0"
        table[dst] = frozenset(gateway for _, gateway in hops)
    return table


@dataclass(frozen=True)
class RouteCheck:
    """A route table read from the device against the compiled one."""

    source: str  # rib | fib
    expected: RouteTable
    found: RouteTable

    @property
    def missing(self) -> list[str]:
        return sorted(p for p in self.expected if p not in self.found)

    @property
    def wrong(self) -> list[str]:
        return sorted(
            p for p in self.expected if p in self.found and self.found[p] != self.expected[p]
        )

    @property
    def stray(self) -> list[str]:
        return sorted(p for p in self.found if p not in self.expected)

    @property
    def matching(self) -> int:
        return sum(1 for p, hops in self.expected.items() if self.found.get(p) == hops)

    @property
    def ok(self) -> bool:
        return not (self.missing or self.wrong or self.stray)

    def describe(self) -> str:
        parts = []
        if self.missing:
            parts.append(
                f"{len(self.missing)} compiled routes missing ("
                + _routes(self.missing, self.expected)
                + ")"
            )
        if self.wrong:
            shown = ", ".join(
                f"{p} via {_hops_text(self.found[p])} not {_hops_text(self.expected[p])}"
                for p in self.wrong[:3]
            )
            parts.append(f"{len(self.wrong)} with other next hops ({shown})")
        if self.stray:
            parts.append(
                f"{len(self.stray)} static routes not compiled ("
                + _routes(self.stray, self.found)
                + ")"
            )
        return f"{self.source}: " + "; ".join(parts) if parts else f"{self.source}: ok"


def _hops_text(hops: frozenset[str]) -> str:
    return "+".join(sorted(hops)) or "nothing"


def _routes(prefixes: list[str], table: RouteTable) -> str:
    more = f", +{len(prefixes) - 3} more" if len(prefixes) > 3 else ""
    return ", ".join(f"{p} via {_hops_text(table[p])}" for p in prefixes[:3]) + more


def unified(running: list[str], candidate: list[str], name: str, candidate_name: str) -> str:
    return "".join(
        difflib.unified_diff(
            [line + "\n" for line in running],
            [line + "\n" for line in candidate],
            f"running/{name}",
            f"candidate/{candidate_name}",
        )
    )


def changed_lines(diff: str) -> list[str]:
    """The added and removed lines of a unified diff, without its two file headers."""
    return [
        line
        for line in diff.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def drift_problem(drift: str) -> str:
    """How a device whose running state differs from its installed files is reported."""
    return f"running differs from installed: {', '.join(changed_lines(drift)[:3])}"
