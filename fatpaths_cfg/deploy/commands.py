"""`fatpaths deploy OUT`: push the compiled configs to the switches through NAPALM."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table
from rich.text import Text

from fatpaths_cfg.commands import _name_list, run_or_exit
from fatpaths_cfg.console import make_console
from fatpaths_cfg.errors import ErrorCollector

if TYPE_CHECKING:
    from fatpaths_cfg.deploy.push import Credentials, DeployReport, SwitchResult

console = make_console()
STATUS_STYLE = {
    "committed": "green",
    "unchanged": "dim",
    "diff": "cyan",
    "staged": "cyan",
    "failed": "red",
    "rolled back": "red",
}


def credentials(username: str, password_env: str | None, key_file: Path | None) -> Credentials:
    """Secrets come from the environment or a key file, never from the command line."""
    from fatpaths_cfg.deploy.push import Credentials

    errors = ErrorCollector()
    password = None
    if password_env is None and key_file is None:
        errors.add("--password-env/--key-file", 0, "", "no credentials given",
                   "name an environment variable holding the password, or an SSH key file")
    if password_env is not None:
        password = os.environ.get(password_env)
        if not password:
            errors.add("--password-env", 0, password_env, "environment variable is not set")
    if key_file is not None and not key_file.is_file():
        errors.add("--key-file", 0, str(key_file), "no such file")
    errors.raise_if_any()
    return Credentials(username, password, key_file)


def print_diff(result: SwitchResult) -> None:
    console.rule(f"{result.name} ({result.platform}, {result.mgmt})")
    if not result.diff:
        console.print("no changes" if result.ok else result.detail, style="dim")
        return
    for line in result.diff.splitlines():
        style = "green" if line.startswith("+") else "red" if line.startswith("-") else ""
        console.print(Text(line, style=style))


def print_report(report: DeployReport) -> None:
    table = Table(title="deploy")
    for column in ("switch", "platform", "mgmt", "status", "diff lines", "routes", "s", "detail"):
        table.add_column(column, justify="right" if column in ("diff lines", "s") else "left")
    for r in sorted(report.results, key=lambda r: r.name):
        changed = sum(
            1 for line in r.diff.splitlines()
            if line[:1] in "+-" and not line.startswith(("+++", "---"))
        )
        table.add_row(r.name, r.platform, r.mgmt, Text(r.status, STATUS_STYLE[r.status]),
                      str(changed), r.routes, f"{r.seconds:.1f}", r.detail)
    console.print(table)
    if report.skipped:
        console.print(f"skipped (no mgmt address): {', '.join(report.skipped)}")


def deploy_command(
    out: Path = typer.Argument(..., help="Compiled output directory (from `fatpaths compile`)."),
    limit: str | None = typer.Option(None, "--limit", help="Only these switches, e.g. sw1,sw2."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show the diffs, change nothing."),
    username: str = typer.Option("root", "--username", "-u", help="Login name on the devices."),
    password_env: str | None = typer.Option(
        None, "--password-env", help="Environment variable holding the password."
    ),
    key_file: Path | None = typer.Option(None, "--key-file", help="SSH private key file."),
    known_hosts: Path | None = typer.Option(
        None, "--known-hosts", help="Extra known_hosts file (unknown host keys are refused)."
    ),
    port: int = typer.Option(22, "--port", help="SSH (or eAPI) port of the devices."),
    commit: bool = typer.Option(
        True, "--commit/--no-commit", help="--no-commit leaves the candidate staged on the device."
    ),
    parallel: int = typer.Option(4, "--parallel", min=1, help="Switches deployed at once."),
    timeout: int = typer.Option(30, "--timeout", help="Connect and command timeout, seconds."),
    verify_timeout: float = typer.Option(
        15.0, "--verify-timeout", help="Seconds to wait for the compiled routes to be installed."
    ),
    frr_dir: str | None = typer.Option(None, "--frr-dir", help="FRR config dir on the device."),
    state_dir: str | None = typer.Option(
        None, "--state-dir", help="Where the device keeps interfaces.sh, candidate and rollback."
    ),
    vty_socket: str | None = typer.Option(
        None, "--vty-socket", help="vtysh --vty_socket on the device (FRR in its own paths)."
    ),
) -> None:
    """Push compiled configs: diff, commit, verify routes, roll back a switch on failure."""
    from fatpaths_cfg.deploy.push import DeployOptions, deploy

    secrets = run_or_exit(lambda: credentials(username, password_env, key_file))
    options = DeployOptions(
        port=port, dry_run=dry_run, commit=commit, timeout=timeout, verify_timeout=verify_timeout,
        known_hosts=known_hosts,
        frr_dir=frr_dir, state_dir=state_dir, vty_socket=vty_socket,
    )
    lock = threading.Lock()

    def show(result: SwitchResult) -> None:
        with lock:  # one switch's diff stays in one piece when switches finish together
            print_diff(result)

    with console.status("deploying"):
        report = run_or_exit(
            lambda: deploy(out, _name_list(limit), secrets, options, parallel, show)
        )
    print_report(report)
    if not report.ok:
        raise typer.Exit(1)


def add_commands(app: typer.Typer) -> None:
    app.command("deploy", short_help="Push compiled configs to the switches.")(deploy_command)
