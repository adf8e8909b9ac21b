"""The one Jinja2 environment every platform renders with, and our own filters.

Autoescape is off because the outputs are configs, not HTML; safety comes from the inventory
schema, which restricts names to characters that cannot start a new line, quote or comment.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import jinja2

from fatpaths_cfg.ifnames import kernel_ifname
from fatpaths_cfg.platforms import PLATFORMS
from fatpaths_cfg.platforms.descriptor import default_template_folder
from fatpaths_cfg.render.routes import RouteTable

# The host plans' templates (`hosts/...`). Like every platform's (`platforms/<name>/templates/`)
# they are inside the package, so a wheel installs them as package data of fatpaths_cfg rather
# than as a top-level `templates` package that any other distribution could clash with.
HOST_TEMPLATES = Path(__file__).resolve().parent / "templates" / "hosts"


def template_folders() -> dict[str, Path]:
    """Name prefix -> folder of every template: `hosts/`, and `<name>/` for each registered
    platform, so that templates include each other by platform (`frr/routes.j2`)."""
    folders = {name: default_template_folder(name) for name in PLATFORMS}
    return {"hosts": HOST_TEMPLATES, **folders}


def eos_mac(mac: str) -> str:
    """`02:fa:00:00:00:01` -> `02fa.0000.0001` (EOS and IOS notation)."""
    digits = mac.replace(":", "")
    return ".".join(digits[i : i + 4] for i in range(0, 12, 4))


def vlan_ranges(vlans: list[int]) -> str:
    """[100, 101, 102, 105] -> `100-102,105` (compact trunk allowed lists)."""
    parts: list[str] = []
    ordered = sorted(set(vlans))
    start = previous = ordered[0] if ordered else 0
    for vlan in [*ordered[1:], None]:
        if vlan is not None and vlan == previous + 1:
            previous = vlan
            continue
        parts.append(str(start) if start == previous else f"{start}-{previous}")
        if vlan is not None:
            start = previous = vlan
    return ",".join(parts) if ordered else ""


def route_lines(routes: RouteTable, line: str) -> str:
    """Every route as `line % (prefix, next hop)`, newline-joined (no trailing newline).

    The template keeps the syntax; this filter keeps the 67M-line fabrics fast: a line of the
    form `A%sB%sC` is laid out by the native writer from the table's columns."""
    parts = line.split("%s")
    if len(parts) == 3 and "%" not in "".join(parts):
        head, middle, tail = parts
        return routes.lines(head, middle, tail)
    return "\n".join([line % pair for pair in zip(routes.prefixes, routes.next_hops, strict=True)])


def multipath_lines(routes: RouteTable, single: str, multi: str, hop: str) -> str:
    """Routes with all next hops of a prefix on one line (iproute2 `nexthop via A nexthop
    via B`): `single % (prefix, hop)` or `multi % (prefix, hop % A + hop % B ...)`."""
    lines = [
        single % (prefix, hops[0])
        if len(hops) == 1
        else multi % (prefix, "".join(hop % h for h in hops))
        for prefix, hops in routes.grouped()
    ]
    return "\n".join(lines)


@cache
def environment() -> jinja2.Environment:
    return _environment(_prefix_loader(template_folders()))


@cache
def platform_environment(name: str, folder: Path) -> jinja2.Environment:
    """The environment of a platform whose templates are in `folder`: `NAME/x.j2` is read from
    there, anything else (shared includes) from the other platforms' folders."""
    if folder == default_template_folder(name):
        return environment()
    own = jinja2.PrefixLoader({name: jinja2.FileSystemLoader(folder)})
    return _environment(jinja2.ChoiceLoader([own, _prefix_loader(template_folders())]))


def _prefix_loader(folders: dict[str, Path]) -> jinja2.PrefixLoader:
    return jinja2.PrefixLoader({name: jinja2.FileSystemLoader(f) for name, f in folders.items()})


def _environment(loader: jinja2.BaseLoader) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["ifname"] = kernel_ifname
    env.filters["eos_mac"] = eos_mac
    env.filters["vlan_ranges"] = vlan_ranges
    env.filters["route_lines"] = route_lines
    env.filters["multipath_lines"] = multipath_lines
    return env
