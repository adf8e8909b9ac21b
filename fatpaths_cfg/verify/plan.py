"""The address plan of `fabric.json`, indexed for reading configs back: which (layer, switch)
a prefix belongs to, and which switch and link a next-hop address sits on."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

from fatpaths_cfg.compiled import LoadedCompiled
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
    # The compiled fabric, whose addresses `expected` lists when first asked: the route checks
    # never need its 10^5 entries, and verify's address check runs in a process of its own.
    loaded: LoadedCompiled | None = field(default=None, repr=False)
    _expected: list[ExpectedAddress] | None = field(default=None, repr=False)

    @property
    def expected(self) -> list[ExpectedAddress]:
        """Every address the plan gives, switch by switch, then link by link, then hosts."""
        if self._expected is None:
            self._expected = [] if self.loaded is None else _expected_addresses(self.loaded)
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


def build_address_index(loaded: LoadedCompiled) -> AddressIndex:
    """Index the compiled address plan; its absence is a user error (recompile)."""
    plan = loaded.addresses
    if plan is None:
        raise UserErrors.single(
            str(loaded.fabric_file),
            "addressing",
            "fabric.json has no address plan, so rendered configs cannot be checked",
            "recompile with a fatpaths that renders configs",
        )
    layers = len(loaded.layers)
    families = plan.families
    index = AddressIndex(plan.encoding, families, layers, loaded=loaded)
    links = loaded.fabric.links
    family_tables = plan.tables()
    for t in range(loaded.fabric.nr):
        for layer in range(1, layers + 1):
            for fam_i, (_fam, tables) in enumerate(family_tables):
                prefix = tables.subnets[layer - 1][t]
                table = index.table(fam_i, layer)
                key = canonical_prefix(prefix) or prefix
                index.subnet[key] = (table, t)
                index.subnet_of[(table, t)] = key
    for i, link in enumerate(links):
        for side, owner in enumerate((link.a, link.b)):
            for _fam, tables in family_tables:
                bare = canonical_address(tables.links[i][side])
                if bare is not None:
                    index.link_address[bare] = (i, owner)
    index.vlans = {vlan: layer for layer, vlan in enumerate(plan.vlans, 1)}
    return index


def _expected_addresses(loaded: LoadedCompiled) -> list[ExpectedAddress]:
    plan = loaded.addresses
    if plan is None:
        return []
    fabric = loaded.fabric
    tables = plan.tables()
    expected: list[ExpectedAddress] = []
    for s, switch in enumerate(fabric.switches):
        name = switch.name
        for _fam, t in tables:
            expected.append(
                ExpectedAddress(name, "lo", canonical_interface(t.loopbacks[s]), "loopback", None)
            )
        for layer in range(len(loaded.layers)):
            for _fam, t in tables:
                if t.gateways is None:
                    continue
                prefix = t.subnets[layer][s]
                length = (canonical_prefix(prefix) or prefix).split("/")[1]
                gateway = t.gateways[layer][s].split("/")[0]
                expected.append(
                    ExpectedAddress(
                        name, None, canonical_interface(f"{gateway}/{length}"), "gateway", layer + 1
                    )
                )
    names = [switch.name for switch in fabric.switches]
    for i, link in enumerate(fabric.links):
        for side, (owner, port) in enumerate(((link.a, link.a_port), (link.b, link.b_port))):
            for _fam, t in tables:
                expected.append(
                    ExpectedAddress(
                        names[owner], port, canonical_interface(t.links[i][side]), "link", None, i
                    )
                )
    for h, host in enumerate(fabric.hosts):
        for k, (plane, layer) in enumerate(plan.host_places):
            for _fam, t in tables:
                expected.append(
                    ExpectedAddress(
                        host.name,
                        None,
                        canonical_interface(t.hosts[h][k]),
                        "host",
                        layer,
                        plane=plane,
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
