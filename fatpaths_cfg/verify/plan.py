"""The address plan of `fabric.json`, indexed for reading configs back: which (layer, switch)
a prefix belongs to, and which switch and link a next-hop address sits on."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple

from fatpaths_cfg.errors import UserErrors

FAMILIES = ("v4", "v6")
# Parsing IPv6 text costs microseconds, and a switch's gateway and link addresses come back
# once per host port and layer: the canonical forms are remembered, within a bound.
_CANONICAL_CACHE = 1 << 17


@lru_cache(maxsize=_CANONICAL_CACHE)
def canonical_prefix(text: str) -> str | None:
    try:
        return str(ipaddress.ip_network(text, strict=False))
    except ValueError:
        return None


@lru_cache(maxsize=_CANONICAL_CACHE)
def canonical_address(text: str) -> str | None:
    """An address without its prefix length, in canonical form (v6 compressed, lower case).

    IPv4 text is taken as written: fatpaths writes dotted quads canonically, and parsing 10^5
    of them with ipaddress costs seconds; a differently spelt IPv4 address shows up as a
    mismatch, which is what it is against the plan.
    """
    if ":" not in text:
        return text.split("/", 1)[0]
    try:
        return str(ipaddress.ip_interface(text).ip)
    except ValueError:
        return None


def canonical_addresses(texts: list[str]) -> list[str | None]:
    """`canonical_address` of each text; IPv4 text (nearly all of a fabric's 10^5) is handled
    here without a call, a cache that size would only thrash."""
    return [text.split("/", 1)[0] if ":" not in text else canonical_address(text) for text in texts]


def canonical_interfaces(texts: list[str]) -> list[str]:
    """`canonical_interface` of each text (see canonical_addresses)."""
    return [text if ":" not in text else canonical_interface(text) for text in texts]


class ExpectedAddress(NamedTuple):
    """One address the plan gives (a named tuple: a fabric's plan has 10^5 of them)."""

    owner: str  # switch or host name
    port: str | None  # None: any port of the owner (gateways: the renderer picks host ports)
    address: str  # canonical, with prefix length
    role: str  # "link", "gateway", "loopback", "host"
    layer: int | None
    link: int | None = None
    plane: int = 0  # hosts: the plane the address lives in


@dataclass
class AddressIndex:
    encoding: str
    families: tuple[str, ...]
    layers: int
    # canonical prefix -> (table, destination switch); table = family * layers + layer - 1
    subnet: dict[str, tuple[int, int]] = field(default_factory=dict)
    subnet_of: dict[tuple[int, int], str] = field(default_factory=dict)
    # canonical next-hop address -> (link index, switch that owns the address)
    link_address: dict[str, tuple[int, int]] = field(default_factory=dict)
    vlans: dict[int, int] = field(default_factory=dict)  # vlan id -> layer
    # fabric.json, whose addresses `expected` lists when first asked: the route checks never
    # need its 10^5 entries, and verify's address check runs in a process of its own.
    data: dict[str, Any] = field(default_factory=dict, repr=False)
    _expected: list[ExpectedAddress] | None = field(default=None, repr=False)

    @property
    def expected(self) -> list[ExpectedAddress]:
        """Every address the plan gives, switch by switch, then link by link, then hosts."""
        if self._expected is None:
            self._expected = _expected_addresses(self.data, self.families)
        return self._expected

    def table(self, family: int, layer: int) -> int:
        return family * self.layers + layer - 1

    def table_name(self, table: int) -> str:
        family, layer = divmod(table, self.layers)
        suffix = f" ({'IPv4' if FAMILIES[family] == 'v4' else 'IPv6'})" if self.dual else ""
        return f"layer {layer + 1}{suffix}"

    def layer_of_table(self, table: int) -> int:
        return table % self.layers + 1

    @property
    def dual(self) -> bool:
        return len(self.families) > 1

    @property
    def tables(self) -> int:
        return len(self.families) * self.layers


def _families(plan: dict[str, Any]) -> tuple[str, ...]:
    family = plan.get("family", "ipv4")
    return {"ipv4": ("v4",), "ipv6": ("v6",), "dual": ("v4", "v6")}.get(family, ("v4",))


def build_address_index(data: dict[str, Any], fabric_file: str) -> AddressIndex:
    """Index `fabric.json`'s `addressing`; its absence is a user error (recompile)."""
    plan = data.get("addressing")
    if not isinstance(plan, dict):
        raise UserErrors.single(
            fabric_file,
            "addressing",
            "fabric.json has no address plan, so rendered configs cannot be checked",
            "recompile with a fatpaths that renders configs",
        )
    switch_index = {s["name"]: s["index"] for s in data["switches"]}
    layers = len(data["layers"])
    families = _families(plan)
    index = AddressIndex(plan.get("encoding", "prefix"), families, layers, data=data)
    for entry in plan.get("switches", []):
        t = switch_index[entry["name"]]
        for subnet in entry.get("subnets", []):
            for fam_i, fam in enumerate(families):
                prefix = subnet.get(fam)
                if not prefix:
                    continue
                table = index.table(fam_i, subnet["layer"])
                key = canonical_prefix(prefix) or prefix
                index.subnet[key] = (table, t)
                index.subnet_of[(table, t)] = key
    links = data["links"]
    for entry in plan.get("links", []):
        link = links[entry["index"]]
        for side in ("a", "b"):
            owner = switch_index[link[side]["switch"]]
            for fam in families:
                address = entry.get(f"{side}_{fam}")
                bare = canonical_address(address) if address else None
                if bare is not None:
                    index.link_address[bare] = (entry["index"], owner)
    index.vlans = {v["vlan"]: v["layer"] for v in plan.get("vlans", [])}
    return index


def _expected_addresses(data: dict[str, Any], families: tuple[str, ...]) -> list[ExpectedAddress]:
    plan = data["addressing"]
    expected: list[ExpectedAddress] = []
    for entry in plan.get("switches", []):
        name = entry["name"]
        for fam in families:
            loopback = entry.get(f"loopback_{fam}")
            if loopback:
                expected.append(
                    ExpectedAddress(name, "lo", canonical_interface(loopback), "loopback", None)
                )
        for subnet in entry.get("subnets", []):
            for fam in families:
                prefix = subnet.get(fam)
                gateway = subnet.get(f"gateway_{fam}")
                if not prefix or not gateway:
                    continue
                length = (canonical_prefix(prefix) or prefix).split("/")[1]
                expected.append(
                    ExpectedAddress(
                        name,
                        None,
                        canonical_interface(f"{gateway.split('/')[0]}/{length}"),
                        "gateway",
                        subnet["layer"],
                    )
                )
    links = data["links"]
    for entry in plan.get("links", []):
        link = links[entry["index"]]
        for side in ("a", "b"):
            for fam in families:
                address = entry.get(f"{side}_{fam}")
                if not address:
                    continue
                expected.append(
                    ExpectedAddress(
                        link[side]["switch"],
                        link[side]["port"],
                        canonical_interface(address),
                        "link",
                        None,
                        entry["index"],
                    )
                )
    for host in plan.get("hosts", []):
        for address in host.get("addresses", []):
            for fam in families:
                value = address.get(fam)
                if value:
                    expected.append(
                        ExpectedAddress(
                            host["name"],
                            None,
                            canonical_interface(value),
                            "host",
                            address["layer"],
                            plane=address.get("plane", 0),
                        )
                    )
    return expected


@lru_cache(maxsize=_CANONICAL_CACHE)
def canonical_interface(text: str) -> str:
    if ":" not in text:
        return text  # see canonical_address
    try:
        return str(ipaddress.ip_interface(text))
    except ValueError:
        return text
