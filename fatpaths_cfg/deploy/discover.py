"""`fatpaths discover`: the wiring LLDP reports, written as an inventory YAML.

Each switch of the devices file is asked for its LLDP neighbours. A neighbour that is itself in
the devices file makes a link (seen from both ends or one); any other neighbour is a host on
that port. The result compiles like a hand-written inventory.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import typer
import yaml

from fatpaths_cfg.commands import run_or_exit
from fatpaths_cfg.console import make_console
from fatpaths_cfg.errors import ErrorCollector, UserErrors
from fatpaths_cfg.output import check_owned_file, write_owned_file
from fatpaths_cfg.platforms import DEFAULT_PLATFORM, PLATFORMS

console = make_console()
# First line of every inventory discover writes: what lets a rerun replace it.
DISCOVERED_INVENTORY = "# Written by fatpaths discover:"
Endpoint = tuple[str, str]


def wiring(
    name: str, platform: str, neighbours: dict[str, dict[str, list[dict[str, str]]]]
) -> dict[str, Any]:
    """Inventory data from each switch's NAPALM get_lldp_neighbors()."""
    switches = sorted(neighbours)
    links: set[tuple[Endpoint, Endpoint]] = set()
    hosts: dict[str, Endpoint] = {}
    for switch in switches:
        for port, found in sorted(neighbours[switch].items()):
            for peer in found:
                if peer["hostname"] in neighbours:
                    ends = sorted([(switch, port), (peer["hostname"], peer["port"])])
                    links.add((ends[0], ends[1]))
                elif peer["hostname"]:
                    hosts.setdefault(peer["hostname"], (switch, port))
    ports = {
        s: sorted(
            {p for link in links for sw, p in link if sw == s}
            | {p for sw, p in hosts.values() if sw == s}
        )
        for s in switches
    }
    return {
        "fabric": name,
        "description": "wiring as LLDP reported it (fatpaths discover)",
        "defaults": {"platform": platform},
        "switches": [{"name": s, "ports": ports[s]} for s in switches],
        "links": [{"a": f"{a[0]}:{a[1]}", "b": f"{b[0]}:{b[1]}"} for a, b in sorted(links)],
        "hosts": [{"name": h, "uplink": f"{sw}:{p}"} for h, (sw, p) in sorted(hosts.items())],
    }


def read_neighbours(
    book: Any, platform: str, options: Any, parallel: int
) -> dict[str, dict[str, list[dict[str, str]]]]:
    from fatpaths_cfg.deploy.push import driver_class

    errors = ErrorCollector()
    where = book.source.file if book.source else "--devices"
    accesses = {}
    for index, name in enumerate(sorted(book.file.devices)):
        access = book.access(name, index, None, errors)
        if access is None and not errors.errors:
            errors.add(
                where,
                book.source.line_of(("devices", name)) if book.source else 0,
                f"devices.{name}.host",
                "no management address",
            )
        accesses[name] = access
    if not accesses:
        errors.add(where, 0, "devices", "no devices to ask", "list the switches under devices:")
    errors.raise_if_any()
    cls = driver_class(platform)

    def one(name: str) -> tuple[str, dict[str, list[dict[str, str]]] | str]:
        access = accesses[name]
        optional = {
            "port": access.port,
            **{
                k: str(v)
                for k, v in {
                    "key_file": access.credentials.key_file,
                    "known_hosts": options.known_hosts,
                }.items()
                if v is not None
            },
            # Last, as in deploy: a devices file's known_hosts is the more specific.
            **access.paths,
        }
        driver = cls(
            access.host,
            access.credentials.username,
            access.credentials.password or "",
            options.timeout,
            optional,
        )
        try:
            driver.open()
            try:
                return name, driver.get_lldp_neighbors()
            finally:
                driver.close()
        except Exception as exc:  # one unreachable switch is reported, the rest still read
            return name, f"{type(exc).__name__}: {exc}"

    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        answers = dict(pool.map(one, sorted(accesses)))
    failed = {n: a for n, a in answers.items() if isinstance(a, str)}
    if failed:
        raise UserErrors(
            [
                UserErrors.single(where, f"devices.{n}", f"LLDP not read: {a}").errors[0]
                for n, a in sorted(failed.items())
            ]
        )
    return {n: a for n, a in answers.items() if not isinstance(a, str)}


def check_discovered_target(output: Path, devices: Path, force: bool) -> None:
    if output.resolve() == devices.resolve():
        raise UserErrors.single(
            output, "", "is the devices file being read", "write the inventory elsewhere with -o"
        )
    check_owned_file(output, DISCOVERED_INVENTORY, force)


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
    username: str | None = typer.Option(None, "--username", "-u", help="Login (default root)."),
    password_env: str | None = typer.Option(None, "--password-env"),
    password_file: Path | None = typer.Option(None, "--password-file"),
    key_file: Path | None = typer.Option(None, "--key-file", help="SSH private key file."),
    known_hosts: Path | None = typer.Option(None, "--known-hosts"),
    port: int | None = typer.Option(None, "--port", min=1, max=65535),
    lldp_socket: str | None = typer.Option(None, "--lldp-socket"),
    timeout: int = typer.Option(30, "--timeout"),
    parallel: int = typer.Option(4, "--parallel", min=1),
    force: bool = typer.Option(
        False, "--force", help="Overwrite -o FILE even if fatpaths did not write it."
    ),
) -> None:
    """Read LLDP neighbours from the switches and write them as a wiring inventory."""
    from fatpaths_cfg.deploy.devices import access_from_flags, load_device_book
    from fatpaths_cfg.deploy.push import DeployOptions

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
    text = f"{DISCOVERED_INVENTORY} LLDP neighbours of the switches in {devices.name}\n"
    text += yaml.safe_dump(data, sort_keys=False, default_flow_style=None)
    run_or_exit(lambda: write_owned_file(output, text, DISCOVERED_INVENTORY, force))
    console.print(
        f"{output}: {len(data['switches'])} switches, {len(data['links'])} links, "
        f"{len(data['hosts'])} hosts",
        soft_wrap=True,
    )
