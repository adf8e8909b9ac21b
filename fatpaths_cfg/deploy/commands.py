"""`fatpaths deploy OUT`: push the compiled configs to the switches through NAPALM;
`fatpaths discover`: write the wiring LLDP sees as an inventory."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from fatpaths_cfg.commands import _name_list, run_or_exit
from fatpaths_cfg.console import make_console

if TYPE_CHECKING:
    from fatpaths_cfg.deploy.cabling import CablingProblem
    from fatpaths_cfg.deploy.devices import DeviceBook
    from fatpaths_cfg.deploy.push import DeployOptions, DeployReport, DeployTarget, SwitchResult

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


def deploy_command(
    out: Path = typer.Argument(..., help="Compiled output directory (from `fatpaths compile`)."),
    limit: str | None = typer.Option(None, "--limit", help="Only these switches, e.g. sw1,sw2."),
    devices: Path | None = typer.Option(
        None, "--devices", help="Devices file: address, port, user and secret per switch."
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Show the running config against the candidate, change nothing."
    ),
    username: str | None = typer.Option(None, "--username", "-u", help="Login (default root)."),
    password_env: str | None = typer.Option(
        None, "--password-env", help="Environment variable holding the password."
    ),
    password_file: Path | None = typer.Option(
        None, "--password-file", help="File holding the password."
    ),
    key_file: Path | None = typer.Option(None, "--key-file", help="SSH private key file."),
    known_hosts: Path | None = typer.Option(
        None, "--known-hosts", help="Extra known_hosts file (unknown host keys are refused)."
    ),
    port: int | None = typer.Option(
        None, "--port", min=1, max=65535, help="SSH (or eAPI) port (default 22)."
    ),
    commit: bool = typer.Option(
        True, "--commit/--no-commit", help="--no-commit leaves the candidate staged on the device."
    ),
    confirm_in: int | None = typer.Option(
        None,
        "--confirm",
        min=1,
        metavar="SECONDS",
        help="Switches roll themselves back after SECONDS unless --confirm-commit follows.",
    ),
    confirm_commit: bool = typer.Option(
        False, "--confirm-commit", help="Confirm the pending --confirm commit, push nothing."
    ),
    check_cabling: bool = typer.Option(
        False,
        "--check-cabling",
        help="Compare LLDP neighbours to the inventory first; push "
        "nothing if any link is missing, swapped or extra.",
    ),
    parallel: int = typer.Option(4, "--parallel", min=1, help="Switches deployed at once."),
    timeout: int = typer.Option(30, "--timeout", help="Connect and command timeout, seconds."),
    verify_timeout: float = typer.Option(
        15.0, "--verify-timeout", help="Seconds to wait for the compiled routes to be installed."
    ),
    frr_dir: str | None = typer.Option(None, "--frr-dir", help="FRR config dir on the device."),
    state_dir: str | None = typer.Option(
        None, "--state-dir", help="Where the device keeps its script, candidate and rollback."
    ),
    vty_socket: str | None = typer.Option(
        None, "--vty-socket", help="vtysh --vty_socket on the device (FRR in its own paths)."
    ),
    lldp_socket: str | None = typer.Option(
        None, "--lldp-socket", help="lldpcli -u on the device (lldpd with its own socket)."
    ),
    from_old: Path | None = typer.Option(
        None,
        "--from",
        metavar="OLD_OUT",
        help="The compiled output the fabric runs now: change it to OUT in the plan's "
        "loop-free rounds, each read back and walked before the next (frr, linux).",
    ),
    on_failure: str = typer.Option(
        "rollback",
        "--on-failure",
        help="With --from, when a round fails: rollback (undo every round, exit 1) or hold "
        "(undo the failed round only, keep the last verified one, exit 1).",
    ),
) -> None:
    """Push compiled configs: diff against the running config, commit, read the routing tables
    back (prefixes and next hops), roll a switch back on any difference."""
    from fatpaths_cfg.deploy.devices import access_from_flags, load_device_book
    from fatpaths_cfg.deploy.push import DeployOptions, confirm, deploy

    cli = run_or_exit(
        lambda: access_from_flags(
            username,
            port,
            password_env,
            password_file,
            key_file,
            frr_dir=frr_dir,
            state_dir=state_dir,
            vty_socket=vty_socket,
            lldp_socket=lldp_socket,
        )
    )
    book = run_or_exit(lambda: load_device_book(devices, cli))
    options = DeployOptions(
        dry_run=dry_run,
        commit=commit,
        revert_in=confirm_in,
        timeout=timeout,
        verify_timeout=verify_timeout,
        known_hosts=known_hosts,
    )
    lock = threading.Lock()

    def show(result: SwitchResult) -> None:
        with lock:  # one switch's diff stays in one piece when switches finish together
            print_diff(result)

    names = _name_list(limit)
    if from_old is not None:
        _ordered(from_old, out, book, options, parallel, on_failure, names, dry_run)
        return
    with console.status("deploying"):
        if confirm_commit:
            report = run_or_exit(lambda: confirm(out, names, book, options, parallel))
        else:
            report = run_or_exit(
                lambda: deploy(
                    out,
                    names,
                    book,
                    options,
                    parallel,
                    show,
                    check_cabling,
                    show_addresses if dry_run else None,
                )
            )
    print_report(report, "confirm" if confirm_commit else "deploy")
    if not report.ok:
        raise typer.Exit(1)


def _ordered(
    old: Path,
    new: Path,
    book: DeviceBook,
    options: DeployOptions,
    parallel: int,
    on_failure: str,
    names: list[str] | None,
    dry_run: bool,
) -> None:
    from fatpaths_cfg.deploy.rounds import RoundResult, ordered_deploy
    from fatpaths_cfg.errors import UserErrors

    def refuse(problem: str, hint: str) -> None:
        def raise_it() -> None:
            raise UserErrors.single("--from", "", problem, hint)

        run_or_exit(raise_it)

    if on_failure not in ("rollback", "hold"):
        refuse(f"--on-failure {on_failure!r}", "rollback or hold")
    if names or dry_run or not options.commit or options.revert_in:
        refuse(
            "--from deploys every switch in rounds",
            "leave out --limit, --dry-run, --no-commit and --confirm (see the rounds with "
            "`fatpaths plan OLD OUT`)",
        )

    def show(result: RoundResult) -> None:
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

    report = run_or_exit(
        lambda: ordered_deploy(old, new, book, options, parallel, on_failure, show)
    )
    if report.outcome == "refused" and not report.rounds:
        print(f"plan refused: {report.plan.verdict.findings[:1] or 'a state loops'}")
    if report.final is not None:
        print_report(report.final, "deploy (files)")
    print(f"{report.outcome}; the fabric reads back as {report.state}")
    raise typer.Exit(report.exit_code)


def add_commands(app: typer.Typer) -> None:
    from fatpaths_cfg.deploy.discover import discover_command

    app.command("deploy", short_help="Push compiled configs to the switches.")(deploy_command)
    app.command("discover", short_help="Write the wiring LLDP reports.")(discover_command)
