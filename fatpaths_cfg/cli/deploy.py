"""`fatpaths deploy OUT`: push the compiled configs to the switches through NAPALM;
in loop-free rounds with --from (the push itself: deploy.push and deploy.rounds)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from fatpaths_cfg.cli import access
from fatpaths_cfg.cli.common import name_list, run_or_exit
from fatpaths_cfg.deploy.report import (
    console,
    print_diff,
    print_report,
    print_round,
    show_addresses,
)

if TYPE_CHECKING:
    from fatpaths_cfg.deploy.devices import DeviceBook
    from fatpaths_cfg.deploy.push import DeployOptions, SwitchResult


OPT_OUT = typer.Argument(..., help="Compiled output directory (from `fatpaths compile`).")
OPT_LIMIT = typer.Option(None, "--limit", help="Only these switches, e.g. sw1,sw2.")
OPT_DEVICES = typer.Option(
    None, "--devices", help="Devices file: address, port, user and secret per switch."
)
OPT_DRY_RUN = typer.Option(
    False, "--dry-run", help="Show the running config against the candidate, change nothing."
)
OPT_COMMIT = typer.Option(
    True, "--commit/--no-commit", help="--no-commit leaves the candidate staged on the device."
)
OPT_CONFIRM_IN = typer.Option(
    None,
    "--confirm",
    min=1,
    metavar="SECONDS",
    help="Switches roll themselves back after SECONDS unless --confirm-commit follows.",
)
OPT_CONFIRM_COMMIT = typer.Option(
    False, "--confirm-commit", help="Confirm the pending --confirm commit, push nothing."
)
OPT_CHECK_CABLING = typer.Option(
    False,
    "--check-cabling",
    help="Compare LLDP neighbours to the inventory first; push "
    "nothing if any link is missing, swapped or extra.",
)
OPT_PARALLEL = typer.Option(4, "--parallel", min=1, help="Switches deployed at once.")
OPT_VERIFY_TIMEOUT = typer.Option(
    15.0, "--verify-timeout", help="Seconds to wait for the compiled routes to be installed."
)
OPT_FRR_DIR = typer.Option(None, "--frr-dir", help="FRR config dir on the device.")
OPT_STATE_DIR = typer.Option(
    None, "--state-dir", help="Where the device keeps its script, candidate and rollback."
)
OPT_VTY_SOCKET = typer.Option(
    None, "--vty-socket", help="vtysh --vty_socket on the device (FRR in its own paths)."
)
OPT_FROM_OLD = typer.Option(
    None,
    "--from",
    metavar="OLD_OUT",
    help="The compiled output the fabric runs now: change it to OUT in the plan's "
    "loop-free rounds, each read back and walked before the next (frr, linux).",
)
OPT_ON_FAILURE = typer.Option(
    "rollback",
    "--on-failure",
    help="With --from, when a round fails: rollback (undo every round, exit 1) or hold "
    "(undo the failed round only, keep the last verified one, exit 1).",
)


def deploy_command(
    out: Path = OPT_OUT,
    limit: str | None = OPT_LIMIT,
    devices: Path | None = OPT_DEVICES,
    dry_run: bool = OPT_DRY_RUN,
    username: str | None = access.USERNAME,
    password_env: str | None = access.PASSWORD_ENV,
    password_file: Path | None = access.PASSWORD_FILE,
    key_file: Path | None = access.KEY_FILE,
    known_hosts: Path | None = access.KNOWN_HOSTS,
    port: int | None = access.PORT,
    commit: bool = OPT_COMMIT,
    confirm_in: int | None = OPT_CONFIRM_IN,
    confirm_commit: bool = OPT_CONFIRM_COMMIT,
    check_cabling: bool = OPT_CHECK_CABLING,
    parallel: int = OPT_PARALLEL,
    timeout: int = access.TIMEOUT,
    verify_timeout: float = OPT_VERIFY_TIMEOUT,
    frr_dir: str | None = OPT_FRR_DIR,
    state_dir: str | None = OPT_STATE_DIR,
    vty_socket: str | None = OPT_VTY_SOCKET,
    lldp_socket: str | None = access.LLDP_SOCKET,
    from_old: Path | None = OPT_FROM_OLD,
    on_failure: str = OPT_ON_FAILURE,
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

    names = name_list(limit)
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
    from fatpaths_cfg.deploy.rounds import ordered_deploy
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

    report = run_or_exit(
        lambda: ordered_deploy(old, new, book, options, parallel, on_failure, print_round)
    )
    if report.outcome == "refused" and not report.rounds:
        print(f"plan refused: {report.plan.verdict.findings[:1] or 'a state loops'}")
    if report.final is not None:
        print_report(report.final, "deploy (files)")
    print(f"{report.outcome}; the fabric reads back as {report.state}")
    raise typer.Exit(report.exit_code)


def add_commands(app: typer.Typer) -> None:
    app.command("deploy", short_help="Push compiled configs to the switches.")(deploy_command)
