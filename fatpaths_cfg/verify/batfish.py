"""A second opinion from Batfish: load `OUT/batfish/` into a Batfish server with pybatfish and
compare what Batfish makes of the configs with `fabric.json`.

Checked: every file parsed (no FAILED / PARTIALLY_UNRECOGNIZED, no parse warnings, no parse or
conversion issues at initialisation), no undefined references, the static routes Batfish
computes on each switch equal the compiled ones, and traceroutes between sampled host pairs in
every layer follow the compiled paths.

Known limits, stated in the report: Batfish needs layer1_topology.json to see L2 links, and it
has historically ignored VLANs in reachability, so with the VLAN encoding its traceroutes do not
prove layer separation. Batfish host files carry one address per interface, so destination
hosts own only their layer-1 address there: traceroutes of other layers end at the destination
switch's host subnet, which is where they are judged.

Batfish (0.36) parses IPv6 statements but builds no IPv6 routes, so routes and traceroutes are
compared for IPv4 only; the IPv6 half of a dual-stack fabric is proved by the internal checker
alone, and the report says so instead of failing on what Batfish cannot model.
"""

from __future__ import annotations

import re
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fatpaths_cfg.compiled import AddressRecords, LoadedCompiled, load_compiled
from fatpaths_cfg.compiled.paths import walk
from fatpaths_cfg.errors import UserErrors

SNAPSHOT_DIR = "batfish"
PAIRS_PER_LAYER = 12
# Dispositions of a flow that reached the destination: the host itself (layer 1) or the
# destination switch's host subnet (other layers; see the module docstring).
DELIVERED = {"ACCEPTED", "DELIVERED_TO_SUBNET", "EXITS_NETWORK"}
BAD_PARSE = {"FAILED", "PARTIALLY_UNRECOGNIZED"}
# Address families by their key in fabric.json's address plan.
FAMILY_NAMES = {"v4": "IPv4", "v6": "IPv6"}
PLAN_FAMILIES = {"ipv4": ("v4",), "ipv6": ("v6",), "dual": ("v4", "v6")}
# The families whose routes Batfish builds: it drops every IPv6 route it parses.
BATFISH_FAMILIES = ("v4",)


def fabric_families(addressing: AddressRecords | None) -> tuple[str, ...]:
    return PLAN_FAMILIES["ipv4" if addressing is None else addressing.family]


def batfish_families(families: tuple[str, ...]) -> tuple[str, ...]:
    """The fabric's families whose routes and traceroutes Batfish checks."""
    return tuple(f for f in families if f in BATFISH_FAMILIES)


def internal_only_families(families: tuple[str, ...]) -> tuple[str, ...]:
    """The fabric's families that only the internal checker proves."""
    return tuple(f for f in families if f not in BATFISH_FAMILIES)


def family_of(prefix: str) -> str:
    return "v6" if ":" in prefix else "v4"


@dataclass
class BatfishCheck:
    name: str
    ok: bool
    detail: str
    failures: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"check": self.name, "ok": self.ok, "detail": self.detail, "failures": self.failures}


@dataclass
class BatfishResult:
    host: str
    snapshot: str
    encoding: str
    checks: list[BatfishCheck] = field(default_factory=list)
    caveats: list[str] = field(default_factory=list)
    seconds: float = 0.0
    # Families whose routes and traceroutes Batfish compared, and those it cannot model.
    families: tuple[str, ...] = ("v4",)
    internal_only: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "snapshot": self.snapshot,
            "encoding": self.encoding,
            "ok": self.ok,
            "checks": [c.to_json() for c in self.checks],
            "families_checked": [FAMILY_NAMES[f] for f in self.families],
            "families_checked_internally_only": [FAMILY_NAMES[f] for f in self.internal_only],
            "caveats": self.caveats,
            "seconds": round(self.seconds, 2),
        }

    def families_note(self) -> str:
        """Which families Batfish proved and which only the internal checker did, plainly."""
        checked = " and ".join(FAMILY_NAMES[f] for f in self.families)
        note = f"{checked} routes and traceroutes checked" if checked else "no routes checked"
        if self.internal_only:
            others = " and ".join(FAMILY_NAMES[f] for f in self.internal_only)
            note += f"; {others} routes checked by the internal checker only"
            note += " (Batfish builds no IPv6 routes)"
        return note

    def summary(self) -> str:
        failed = [c.name for c in self.checks if not c.ok]
        return (
            f"batfish ({self.host}): {len(self.checks)} checks, "
            + (f"failed: {', '.join(failed)}" if failed else "all passed")
            + f"; {self.families_note()}"
        )

    def markdown(self) -> list[str]:
        lines = [f"## Batfish ({self.host}, snapshot {self.snapshot})", ""]
        lines += [f"Families: {self.families_note()}.", ""]
        lines += ["| check | result | detail |", "|---|---|---|"]
        for check in self.checks:
            lines.append(f"| {check.name} | {'pass' if check.ok else 'FAIL'} | {check.detail} |")
        lines.append("")
        for check in self.checks:
            for failure in check.failures[:20]:
                lines.append(f"- {check.name}: {failure}")
        if self.caveats:
            lines += ["", "Caveats:", *[f"- {c}" for c in self.caveats]]
        lines.append("")
        return lines


def _frame(bf: Any, question: str, **kwargs: Any) -> Any:
    return getattr(bf.q, question)(**kwargs).answer().frame()


def _short_nodes(nodes: Any) -> str:
    names = list(nodes)
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


# An IPv6 statement: `ipv6 ...` (e.g. `ipv6 unicast-routing`, which Batfish releases before
# mid-2026 do not parse on Arista) or any line carrying an IPv6 address or prefix.
IPV6_STATEMENT = re.compile(r"^\s*(no\s+)?ipv6\b|[0-9a-fA-F]*:[0-9a-fA-F]*:[0-9a-fA-F:./]*")


def is_ipv6_statement(text: str) -> bool:
    return bool(IPV6_STATEMENT.search(text))


def split_ipv6_warnings(warnings: Any) -> tuple[list[str], list[str], set[str]]:
    """(warnings that fail the check, IPv6 statements Batfish cannot parse, files whose only
    warnings are such IPv6 statements). IPv6 is checked by the internal checker; an IPv6 line
    this Batfish cannot read is a limit of Batfish, not a fault of the config."""
    failing: list[str] = []
    ipv6_only: list[str] = []
    by_file: dict[str, list[bool]] = defaultdict(list)
    for _, row in warnings.iterrows():
        line = f"{row['Filename']}:{row['Line']}: {row['Text']} ({row['Comment']})"
        ipv6 = is_ipv6_statement(str(row["Text"]))
        (ipv6_only if ipv6 else failing).append(line)
        by_file[str(row["Filename"])].append(ipv6)
    files = {name for name, flags in by_file.items() if all(flags)}
    return failing, ipv6_only, files


def check_parsing(bf: Any, caveats: list[str] | None = None) -> list[BatfishCheck]:
    status = _frame(bf, "fileParseStatus")
    warned, ipv6_only, ipv6_files = split_ipv6_warnings(_frame(bf, "parseWarning"))
    bad = [
        f"{row['File_Name']}: {row['Status']}"
        for _, row in status.iterrows()
        if str(row["Status"]) in BAD_PARSE
        and not (row["Status"] == "PARTIALLY_UNRECOGNIZED" and row["File_Name"] in ipv6_files)
    ]
    if ipv6_only and caveats is not None:
        caveats.append(
            f"this Batfish does not parse {len(ipv6_only)} IPv6 lines (e.g. {ipv6_only[0]}); "
            "they are checked by the internal checker only"
        )
    references = _frame(bf, "undefinedReferences")
    undefined = [
        f"{row['File_Name']}: {row['Ref_Name']} ({row['Struct_Type']}, {row['Context']})"
        for _, row in references.iterrows()
    ]
    # Parse and conversion warnings that are not tied to a line (e.g. a JSON field the vendor
    # model does not know, which silently drops a whole table) only show up here.
    issues = _frame(bf, "initIssues")
    raised = [
        f"{row['Type']}: {row['Details']}".replace("\n", " ")
        + (f" ({_short_nodes(row['Nodes'])})" if row["Nodes"] else "")
        for _, row in issues.iterrows()
        # The summary of the unparsed lines above, when every one of them is IPv6.
        if not (ipv6_only and not warned and str(row["Type"]) == "Parse warning")
    ]
    return [
        BatfishCheck("files parsed", not bad, f"{len(status)} files", bad),
        BatfishCheck("no parse warnings", not warned, f"{len(warned)} warnings", warned),
        BatfishCheck("no init issues", not raised, f"{len(raised)} issues", raised),
        BatfishCheck("no undefined references", not undefined, f"{len(undefined)}", undefined),
    ]


def expected_static_routes(
    loaded: LoadedCompiled, families: tuple[str, ...] = ("v4", "v6")
) -> dict[str, dict[str, set[str]]]:
    """switch name (lower case, as Batfish names nodes) -> prefix -> next-hop addresses, for
    the given families."""
    plan = loaded.addresses
    tables = [plan.of(f) for f in families] if plan is not None else []
    present = [family for family in tables if family is not None]
    fabric = loaded.fabric
    routes: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    layers = loaded.next_hop.shape[0]
    for s in fabric.switches:
        for layer in range(layers):
            for t in range(fabric.nr):
                n = int(loaded.next_hop[layer, s.index, t])
                if n < 0:
                    continue
                link_index = fabric.link_between[(s.index, n)]
                side = 0 if fabric.links[link_index].a == n else 1
                for family in present:
                    prefix = family.subnets[layer][t]
                    hop = family.links[link_index][side]
                    routes[s.name.lower()][prefix].add(hop.split("/")[0])
    return routes


def check_routes(bf: Any, loaded: LoadedCompiled, families: tuple[str, ...]) -> BatfishCheck:
    expected = expected_static_routes(loaded, families)
    if loaded.layers[0].ecmp:
        # With ECMP every equal-cost neighbour is a next hop; routing.npz keeps one, so only
        # prefixes are compared then.
        expected = {n: {p: set() for p in table} for n, table in expected.items()}
    frame = _frame(bf, "routes", protocols="static")
    found: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for _, row in frame.iterrows():
        network = str(row["Network"])
        if family_of(network) not in families:
            continue
        found[str(row["Node"]).lower()][network].add(str(row.get("Next_Hop_IP", "")))
    failures = []
    for node, table in sorted(expected.items()):
        have = found.get(node, {})
        for prefix, hops in sorted(table.items()):
            if prefix not in have:
                failures.append(f"{node}: no route to {prefix}")
            elif hops and hops != have[prefix]:
                failures.append(f"{node}: {prefix} via {sorted(have[prefix])}, want {sorted(hops)}")
        for prefix in sorted(set(have) - set(table)):
            failures.append(f"{node}: unexpected static route {prefix}")
    total = sum(len(t) for t in expected.values())
    checked = "/".join(FAMILY_NAMES[f] for f in families)
    return BatfishCheck(
        "static routes match fabric.json", not failures, f"{total} {checked} routes", failures
    )


def sample_pairs(loaded: LoadedCompiled, per_layer: int, seed: int) -> list[tuple[int, int]]:
    hosts = loaded.fabric.hosts
    rng = np.random.default_rng([seed, 0xBA7F15])
    pairs: list[tuple[int, int]] = []
    while len(pairs) < per_layer and len(hosts) > 1:
        a, b = (int(x) for x in rng.choice(len(hosts), size=2, replace=False))
        if hosts[a].switch != hosts[b].switch:
            pairs.append((a, b))
    return pairs


def compiled_path(loaded: LoadedCompiled, layer: int, s: int, t: int) -> list[str] | None:
    """The switches (as Batfish names nodes) of the layer's compiled s-t path; None where the
    layer has none (a pair across planes, say): never a path through an entry of -1."""
    path = walk(loaded.next_hop[layer], s, t)
    return None if path is None else [loaded.fabric.switches[p].name.lower() for p in path]


def trace_addresses(
    loaded: LoadedCompiled, a: int, b: int, layer: int, family: str
) -> tuple[str, str]:
    """(source, destination) address of a host pair in a layer, without prefix length."""
    plan = loaded.addresses
    tables = plan.of(family) if plan is not None else None
    if plan is None or tables is None:
        raise ValueError(f"the address plan has no {family} addresses")
    # Plane 0's addresses come first, one per layer.
    source = tables.hosts[a][layer]
    destination = tables.hosts[b][layer]
    return source.split("/")[0], destination.split("/")[0]


def check_traceroutes(bf: Any, loaded: LoadedCompiled, family: str) -> BatfishCheck:
    from pybatfish.datamodel.flow import HeaderConstraints

    fabric = loaded.fabric
    switch_names = {s.name.lower() for s in fabric.switches}
    failures = []
    checked = 0
    ecmp = loaded.layers[0].ecmp
    for layer in range(loaded.next_hop.shape[0]):
        for a, b in sample_pairs(loaded, PAIRS_PER_LAYER, loaded.seed + layer):
            src, dst = trace_addresses(loaded, a, b, layer, family)
            headers = HeaderConstraints(srcIps=src, dstIps=dst)
            frame = _frame(bf, "traceroute", startLocation=fabric.hosts[a].name, headers=headers)
            checked += 1
            want = compiled_path(loaded, layer, fabric.hosts[a].switch, fabric.hosts[b].switch)
            label = f"layer {layer + 1} {fabric.hosts[a].name} -> {fabric.hosts[b].name}"
            if len(frame) == 0:
                failures.append(f"{label}: no trace")
                continue
            for trace in frame.iloc[0]["Traces"]:
                hops = [h.node.lower() for h in trace.hops if h.node.lower() in switch_names]
                if want is None:
                    if trace.disposition in DELIVERED:
                        failures.append(f"{label}: delivered, but the layer has no path")
                elif trace.disposition not in DELIVERED:
                    failures.append(f"{label}: {trace.disposition} after {' '.join(hops)}")
                elif (hops != want and not ecmp) or (ecmp and len(hops) != len(want)):
                    failures.append(f"{label}: took {' '.join(hops)}, compiled {' '.join(want)}")
    return BatfishCheck(
        "traceroutes follow compiled paths",
        not failures,
        f"{checked} host pairs, {FAMILY_NAMES[family]}",
        failures,
    )


def check_with_batfish(out: Path, host: str) -> BatfishResult:
    """Run the Batfish checks against the server at `host`. Raises UserErrors when the
    snapshot is missing or the server cannot be reached (bad input, exit 2)."""
    started = time.perf_counter()
    loaded = load_compiled(out)
    snapshot = out / SNAPSHOT_DIR
    if not (snapshot / "batfish" / "layer1_topology.json").is_file():
        raise UserErrors.single(
            str(snapshot),
            "",
            "no Batfish snapshot (batfish/layer1_topology.json missing)",
            f"compile with --batfish to write it: fatpaths compile INVENTORY -o {out} --batfish",
        )
    try:
        from pybatfish.client.session import Session
    except ImportError:
        raise UserErrors.single(
            "--batfish", "", "pybatfish is not installed", "pip install 'fatpaths-cfg[batfish]'"
        ) from None
    try:
        bf = Session(host=host)
        bf.set_network(f"fatpaths-{loaded.fabric.name}")
        name = bf.init_snapshot(str(snapshot), name=loaded.fabric.name, overwrite=True)
    except Exception as exc:  # pybatfish raises bare requests/Batfish errors
        raise UserErrors.single(
            "--batfish", "", f"cannot load the snapshot into Batfish at {host}: {exc}"
        ) from None
    addressing = loaded.addresses
    encoding = "prefix" if addressing is None else addressing.encoding
    families = fabric_families(addressing)
    result = BatfishResult(
        host,
        str(name),
        encoding,
        families=batfish_families(families),
        internal_only=internal_only_families(families),
    )
    result.caveats.append(
        "Batfish sees L2 links only through batfish/layer1_topology.json, which fatpaths writes."
    )
    if encoding == "vlan":
        result.caveats.append(
            "VLAN encoding: Batfish has historically ignored VLANs in reachability, so these "
            "traceroutes do not prove that layers stay apart; rely on the forwarding checker."
        )
    result.caveats.append(
        "Batfish host files hold one address per interface: traceroutes of layers 2+ are "
        "judged at the destination switch's host subnet."
    )
    if result.internal_only:
        result.caveats.append(
            "Batfish builds no IPv6 routes: the IPv6 routes of this fabric are checked by the "
            "internal checker only (`fatpaths verify` without --batfish), not here."
        )
    result.checks += check_parsing(bf, result.caveats)
    if result.families:
        result.checks.append(check_routes(bf, loaded, result.families))
        result.checks.append(check_traceroutes(bf, loaded, result.families[0]))
    result.seconds = time.perf_counter() - started
    return result
