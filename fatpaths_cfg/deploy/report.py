"""How a deploy reads on the terminal: each switch's diff, the report table, the cabling
problems LLDP found and the addresses a dry run dials."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from fatpaths_cfg.support.console import make_console

if TYPE_CHECKING:
    from fatpaths_cfg.deploy.cabling import CablingProblem
    from fatpaths_cfg.deploy.push import DeployReport, DeployTarget, SwitchResult
    from fatpaths_cfg.deploy.rounds import RoundResult


console = make_console()


STATUS_STYLE = {
    "committed": "green",
    "confirmed": "green",
    "pending": "yellow",
    "cabled": "green",
    "unchanged": "dim",
    "diff": "cyan",
    "staged": "cyan",
    "failed": "red",
    "miscabled": "red",
    "rolled back": "red",
}


def print_diff(result: SwitchResult) -> None:
    console.rule(f"{result.name} ({result.platform}, {result.mgmt})")
    if not result.diff:
        console.print("no changes" if result.ok else result.detail, style="dim")
        return
    for line in result.diff.splitlines():
        style = "green" if line.startswith("+") else "red" if line.startswith("-") else ""
        console.print(Text(line, style=style))


def _fixed(table: Table, header: str, values: list[str], justify: str = "left") -> None:
    """A column as wide as its longest value: names and states are never cut or wrapped."""
    width = max([len(header), *map(len, values)])
    table.add_column(header, justify=justify, no_wrap=True, min_width=width)  # type: ignore[arg-type]


def print_report(report: DeployReport, title: str = "deploy") -> None:
    from fatpaths_cfg.deploy.state import changed_lines

    results = sorted(report.results, key=lambda r: r.name)
    table = Table(title=title)
    _fixed(table, "switch", [r.name for r in results])
    _fixed(table, "platform", [r.platform for r in results])
    _fixed(table, "mgmt", [r.mgmt for r in results])
    _fixed(table, "status", [r.status for r in results])
    _fixed(table, "diff lines", ["99999"], "right")
    _fixed(table, "routes", [r.routes for r in results], "right")
    _fixed(table, "s", [f"{r.seconds:.1f}" for r in results], "right")
    for r in results:
        changed = len(changed_lines(r.diff))
        table.add_row(
            r.name,
            r.platform,
            r.mgmt,
            Text(r.status, STATUS_STYLE.get(r.status, "")),
            str(changed),
            r.routes,
            f"{r.seconds:.1f}",
        )
    print_uncut(table)
    for r in results:
        if r.detail:
            # One unbroken line per switch: the detail is the evidence, quoted whole.
            console.print(
                Text(f"{r.name}: {r.detail}", STATUS_STYLE.get(r.status, "")), soft_wrap=True
            )
    if report.skipped:
        console.print(f"skipped (no mgmt address): {', '.join(report.skipped)}")
    if report.cabling:
        print_cabling(report.cabling)


def print_cabling(problems: list[CablingProblem]) -> None:
    table = Table(title="cabling (LLDP against the inventory)")
    _fixed(table, "switch", [p.switch for p in problems])
    _fixed(table, "port", [p.port for p in problems])
    _fixed(table, "problem", [p.kind for p in problems])
    _fixed(table, "expected", [p.expected for p in problems])
    _fixed(table, "LLDP sees", [p.seen for p in problems])
    for p in problems:
        table.add_row(p.switch, p.port, Text(p.kind, "red"), p.expected, p.seen)
    print_uncut(table)


def print_uncut(table: Table) -> None:
    """A terminal narrower than the fixed columns gets longer lines, never cut ones."""
    needed = Measurement.get(console, console.options, table).minimum
    console.print(table, width=max(console.width, needed), crop=False)


def show_addresses(targets: list[DeployTarget]) -> None:
    """Before a dry run dials anything: each switch's address and where it came from, so a
    devices file meant for a lab is seen not to reach the real fabric."""
    for target in targets:
        console.print(
            f"{target.name}: {target.access.address} from {target.access.origin}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


def print_round(result: RoundResult) -> None:
    """One line per round of an ordered deploy (and the switches that failed it)."""
    proof = result.proof
    walked = (
        f"{proof.loops} loops, {proof.blackholes} blackholes in {proof.walked} walks"
        if proof
        else "not walked"
    )
    label = "undo round" if result.undo else "round"
    number = "" if result.number < 0 else f" {result.number}"
    status = "ok" if result.ok else "FAILED"
    print(
        f"{label}{number} ({result.kind}): {len(result.switches)} switches; read back: "
        f"{walked}; {status} ({result.seconds:.1f} s)",
        flush=True,
    )
    for name, why in sorted(result.failed.items()):
        print(f"  {name}: {why}", flush=True)
    if proof and proof.witness:
        print(f"  {proof.witness}", flush=True)
