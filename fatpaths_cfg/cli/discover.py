"""`fatpaths discover`: the wiring LLDP reports, written as an inventory YAML (the reading and
the inventory: deploy.discover)."""

from __future__ import annotations

from pathlib import Path

import typer

from fatpaths_cfg.cli import access
from fatpaths_cfg.cli.common import run_or_exit
from fatpaths_cfg.platforms import DEFAULT_PLATFORM, PLATFORMS


def known_platform(value: str) -> str:
    if value not in PLATFORMS:
        raise typer.BadParameter(f"unknown platform {value!r}; one of {', '.join(PLATFORMS)}")
    return value


def discover_command(
    devices: Path = typer.Option(..., "--devices", help="Devices file naming the switches."),
    output: Path = typer.Option(..., "-o", "--output", help="Inventory YAML to write."),
    name: str = typer.Option("discovered", "--name", help="Fabric name in the inventory."),
    platform: str = typer.Option(
        DEFAULT_PLATFORM,
        "--platform",
        callback=known_platform,
        help=f"Platform of the switches ({', '.join(PLATFORMS)}).",
    ),
    username: str | None = access.USERNAME,
    password_env: str | None = access.PASSWORD_ENV,
    password_file: Path | None = access.PASSWORD_FILE,
    key_file: Path | None = access.KEY_FILE,
    known_hosts: Path | None = access.KNOWN_HOSTS,
    port: int | None = access.PORT,
    lldp_socket: str | None = access.LLDP_SOCKET,
    timeout: int = access.TIMEOUT,
    parallel: int = typer.Option(4, "--parallel", min=1, help="Switches read at once."),
    force: bool = typer.Option(
        False, "--force", help="Overwrite -o FILE even if fatpaths did not write it."
    ),
) -> None:
    """Read LLDP neighbours from the switches and write them as a wiring inventory."""
    from fatpaths_cfg.deploy.devices import access_from_flags, load_device_book
    from fatpaths_cfg.deploy.discover import (
        DISCOVERED_INVENTORY,
        check_discovered_target,
        inventory_text,
        read_neighbours,
        wiring,
    )
    from fatpaths_cfg.deploy.push import DeployOptions
    from fatpaths_cfg.support.console import make_console
    from fatpaths_cfg.support.output import write_owned_file

    cli = run_or_exit(
        lambda: access_from_flags(
            username, port, password_env, password_file, key_file, lldp_socket=lldp_socket
        )
    )
    book = run_or_exit(lambda: load_device_book(devices, cli))
    # Checked before any switch is dialled; written only once every answer is in.
    run_or_exit(lambda: check_discovered_target(output, devices, force))
    options = DeployOptions(timeout=timeout, known_hosts=known_hosts)
    neighbours = run_or_exit(lambda: read_neighbours(book, platform, options, parallel))
    data = wiring(name, platform, neighbours)
    text = inventory_text(data, devices)
    run_or_exit(lambda: write_owned_file(output, text, DISCOVERED_INVENTORY, force))
    make_console().print(
        f"{output}: {len(data['switches'])} switches, {len(data['links'])} links, "
        f"{len(data['hosts'])} hosts",
        soft_wrap=True,
    )


def add_commands(app: typer.Typer) -> None:
    app.command("discover", short_help="Write the wiring LLDP reports.")(discover_command)
