"""What `fatpaths discover` reads and writes: the wiring LLDP reports, written as an inventory YAML.

Each switch of the devices file is asked for its LLDP neighbours. A neighbour that is itself in
the devices file makes a link (seen from both ends or one); any other neighbour is a host on
that port. The result compiles like a hand-written inventory.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml

from fatpaths_cfg.errors import ErrorCollector, UserErrors
from fatpaths_cfg.support.output import check_owned_file

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


def inventory_text(data: dict[str, Any], devices: Path) -> str:
    """The inventory YAML discover writes, under the header that lets a rerun replace it."""
    text = f"{DISCOVERED_INVENTORY} LLDP neighbours of the switches in {devices.name}\n"
    return text + yaml.safe_dump(data, sort_keys=False, default_flow_style=None)
