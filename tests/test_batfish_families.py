"""The Batfish checks' logic that needs no server: which address families Batfish is asked
to prove, and how a dual-stack fabric is judged when Batfish (0.36) builds IPv4 routes only.

The Batfish answers here are recorded rows in the shape pybatfish returns, fed to the same
comparison the server-backed tests in test_batfish.py run.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fatpaths_cfg import api
from fatpaths_cfg.compiled import LoadedCompiled, load_compiled
from fatpaths_cfg.verify.batfish import (
    BatfishCheck,
    BatfishResult,
    batfish_families,
    check_routes,
    expected_static_routes,
    fabric_families,
    internal_only_families,
    is_ipv6_statement,
    split_ipv6_warnings,
    trace_addresses,
)

DUAL = Path(__file__).resolve().parent / "golden" / "hand6-dual.yaml"


class Rows:
    """A question's answer frame: just the rows, as pandas would iterate them."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def iterrows(self) -> Iterator[tuple[int, dict[str, Any]]]:
        return iter(enumerate(self.rows))


class RecordedRoutes:
    """Stands in for a pybatfish session answering only `routes`."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.q = self
        self._rows = rows

    def routes(self, **_: Any) -> RecordedRoutes:
        return self

    def answer(self) -> RecordedRoutes:
        return self

    def frame(self) -> Rows:
        return Rows(self._rows)


@pytest.fixture(scope="module")
def dual(tmp_path_factory: pytest.TempPathFactory) -> LoadedCompiled:
    out = tmp_path_factory.mktemp("dual")
    api.build_output(api.compile_fabric(DUAL), platforms=["eos"], batfish=True).commit(out)
    return load_compiled(out)


def _batfish_rows(loaded: LoadedCompiled, families: tuple[str, ...]) -> list[dict[str, Any]]:
    """What a Batfish that models `families` answers for a correct fabric."""
    return [
        {"Node": node, "Network": prefix, "Next_Hop_IP": hop}
        for node, table in expected_static_routes(loaded, families).items()
        for prefix, hops in table.items()
        for hop in hops
    ]


def test_batfish_checks_ipv4_and_leaves_ipv6_to_the_internal_checker(
    dual: LoadedCompiled,
) -> None:
    assert fabric_families(dual.addresses) == ("v4", "v6")
    assert fabric_families(None) == ("v4",)
    assert batfish_families(("v4", "v6")) == ("v4",)
    assert internal_only_families(("v4", "v6")) == ("v6",)
    assert batfish_families(("v6",)) == ()
    assert internal_only_families(("v6",)) == ("v6",)
    assert internal_only_families(("v4",)) == ()


def test_expected_routes_per_family(dual: LoadedCompiled) -> None:
    v4 = expected_static_routes(dual, ("v4",))
    both = expected_static_routes(dual)
    per_switch = 3 * 5  # layers x other switches
    assert {len(table) for table in v4.values()} == {per_switch}
    assert {len(table) for table in both.values()} == {2 * per_switch}
    assert all(":" not in prefix for table in v4.values() for prefix in table)


def test_dual_stack_passes_on_the_ipv4_routes_batfish_builds(dual: LoadedCompiled) -> None:
    answer = RecordedRoutes(_batfish_rows(dual, ("v4",)))
    check = check_routes(answer, dual, batfish_families(("v4", "v6")))
    assert check.ok, check.failures
    assert check.detail == "90 IPv4 routes"
    # Asking Batfish for IPv6 as well fails every IPv6 prefix: what verify did before.
    asked_for_both = check_routes(answer, dual, ("v4", "v6"))
    assert not asked_for_both.ok
    assert all(":" in failure for failure in asked_for_both.failures)


def test_ipv6_rows_are_not_judged_when_ipv6_is_not_checked(dual: LoadedCompiled) -> None:
    rows = _batfish_rows(dual, ("v4",))
    rows.append({"Node": "leaf1", "Network": "fd00:dead::/64", "Next_Hop_IP": "fd00::1"})
    assert check_routes(RecordedRoutes(rows), dual, ("v4",)).ok
    rows.append({"Node": "leaf1", "Network": "10.99.0.0/29", "Next_Hop_IP": "172.16.0.1"})
    wrong = check_routes(RecordedRoutes(rows), dual, ("v4",))
    assert wrong.failures == ["leaf1: unexpected static route 10.99.0.0/29"]


def test_traceroutes_use_the_checked_family(dual: LoadedCompiled) -> None:
    assert trace_addresses(dual, 0, 11, 1, "v4") == ("10.0.0.66", "10.0.0.107")
    assert trace_addresses(dual, 0, 11, 1, "v6")[0] == "fd00:fa7:0:8::2"


def test_the_report_says_plainly_which_families_batfish_checked() -> None:
    result = BatfishResult("bf", "snap", "prefix", families=("v4",), internal_only=("v6",))
    result.checks.append(BatfishCheck("static routes match fabric.json", True, "90 IPv4 routes"))
    assert result.ok
    assert result.summary() == (
        "batfish (bf): 1 checks, all passed; IPv4 routes and traceroutes checked; "
        "IPv6 routes checked by the internal checker only (Batfish builds no IPv6 routes)"
    )
    assert "Families: IPv4 routes and traceroutes checked; IPv6 routes checked by the " in (
        "\n".join(result.markdown())
    )
    assert result.to_json()["families_checked_internally_only"] == ["IPv6"]
    ipv4_only = BatfishResult("bf", "snap", "prefix")
    assert ipv4_only.summary().endswith("all passed; IPv4 routes and traceroutes checked")


class _Rows:
    """The part of a pandas frame `split_ipv6_warnings` reads (iterrows)."""

    def __init__(self, rows: list[dict[str, object]]) -> None:
        self.rows = rows

    def iterrows(self) -> Iterator[tuple[int, dict[str, object]]]:
        return iter(enumerate(self.rows))


def test_ipv6_lines_batfish_cannot_parse_are_caveats_not_failures() -> None:
    rows = _Rows(
        [
            {
                "Filename": "configs/leaf1.cfg",
                "Line": 59,
                "Text": "ipv6 unicast-routing",
                "Comment": "This syntax is unrecognized",
            },
            {
                "Filename": "configs/leaf2.cfg",
                "Line": 12,
                "Text": "ipv6 address fd00:fa7:1::1/127",
                "Comment": "This syntax is unrecognized",
            },
            {
                "Filename": "configs/leaf2.cfg",
                "Line": 30,
                "Text": "ip routing vrf blue",
                "Comment": "This syntax is unrecognized",
            },
        ]
    )
    failing, ipv6_only, files = split_ipv6_warnings(rows)
    assert failing == ["configs/leaf2.cfg:30: ip routing vrf blue (This syntax is unrecognized)"]
    assert len(ipv6_only) == 2
    assert files == {"configs/leaf1.cfg"}  # leaf2 also has a non-IPv6 line: it still fails
    assert not is_ipv6_statement("ip route 10.0.0.0/24 172.16.0.1")
    assert is_ipv6_statement("ipv6 route fd00:fa7::/64 fd00:fa7:1::1")
