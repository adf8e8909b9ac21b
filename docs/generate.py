"""Write the documentation's generated pages from the code itself, so they cannot drift:

* reference/inventory.md from the inventory's JSON Schema (`fatpaths schema`);
* reference/commands.md from the command line (every command, argument and option);
* platforms/<name>.md and platforms/index.md from the platform descriptors.

    python docs/generate.py            # write the pages
    python docs/generate.py --check    # exit 1 when a committed page differs (tests run this)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parent


def _type(prop: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in prop:
        return f"[{prop['$ref'].rsplit('/', 1)[1]}](#{prop['$ref'].rsplit('/', 1)[1].lower()})"
    if "anyOf" in prop:
        return " or ".join(_type(p, defs) for p in prop["anyOf"])
    kind = prop.get("type", "any")
    if kind == "array":
        return f"list of {_type(prop.get('items', {}), defs)}"
    if kind == "object" and "additionalProperties" in prop:
        return f"map to {_type(prop['additionalProperties'], defs)}"
    bounds = []
    for key, sign in (
        ("minimum", ">="),
        ("exclusiveMinimum", ">"),
        ("maximum", "<="),
        ("minLength", "length >="),
        ("maxLength", "length <="),
    ):
        if key in prop:
            bounds.append(f"{sign} {prop[key]}")
    if "pattern" in prop:
        bounds.append(f"matching `{prop['pattern']}`")
    return kind + (f" ({', '.join(bounds)})" if bounds else "")


def _default(prop: dict[str, Any]) -> str:
    if "default" not in prop:
        return "required"
    value = prop["default"]
    if isinstance(value, dict | list) and value:
        return "see below" if isinstance(value, dict) else json.dumps(value)
    return f"`{json.dumps(value)}`"


def _table(model: dict[str, Any], defs: dict[str, Any], required: set[str]) -> list[str]:
    lines = ["| field | type | default | allowed | meaning |", "|---|---|---|---|---|"]
    for name, prop in sorted(model.get("properties", {}).items()):
        allowed = ", ".join(f"`{v}`" for v in prop.get("enum", [])) or "-"
        default = "required" if name in required else _default(prop)
        meaning = prop.get("description", "").replace("|", "\\|").replace("\n", " ")
        lines.append(f"| `{name}` | {_type(prop, defs)} | {default} | {allowed} | {meaning} |")
    return lines


def inventory_page() -> str:
    from fatpaths_cfg.inventory.json_schema import inventory_json_schema

    schema = inventory_json_schema()
    defs = schema["$defs"]
    example = (DOCS.parent / "inventories" / "hand-6.yaml").read_text(encoding="utf-8")
    lines = [
        "# Inventory reference",
        "",
        "Generated from the inventory's JSON Schema (`fatpaths schema`, the same file as",
        "`inventories/inventory.schema.json`); `python docs/generate.py` writes this page.",
        "Point an editor's YAML language server at the schema for completion and these texts.",
        "",
        "## Top level",
        "",
        *_table(schema, defs, set(schema.get("required", []))),
        "",
    ]
    for name in sorted(defs):
        model = defs[name]
        lines += [f"## {name}", ""]
        if model.get("description"):
            lines += [model["description"].replace("\n", " "), ""]
        lines += [*_table(model, defs, set(model.get("required", []))), ""]
    lines += [
        "## Example",
        "",
        "`inventories/hand-6.yaml`, six switches written out port by port:",
        "",
        "```yaml",
        example.rstrip(),
        "```",
        "",
    ]
    return "\n".join(lines)


def _commands() -> list[tuple[str, Any]]:
    import typer

    from fatpaths_cfg.cli import build_app

    root = typer.main.get_command(build_app())
    found: list[tuple[str, Any]] = []

    def walk(prefix: str, command: Any) -> None:
        ctx = command.make_context(prefix or "fatpaths", [], resilient_parsing=True)
        subcommands = getattr(command, "list_commands", None)
        if subcommands is None:
            found.append((prefix, command))
            return
        if prefix:
            found.append((prefix, command))
        for name in command.list_commands(ctx):
            walk(f"{prefix} {name}".strip(), command.get_command(ctx, name))

    walk("", root)
    return found


def commands_page() -> str:
    import click

    lines = [
        "# Command reference",
        "",
        "Generated from the command line itself (`python docs/generate.py`); `fatpaths COMMAND",
        "--help` prints the same. The guide pages say how the commands fit together.",
        "",
    ]
    for path, command in _commands():
        ctx = click.Context(command, info_name=f"fatpaths {path}")
        usage = " ".join(command.collect_usage_pieces(ctx))
        lines += [f"## fatpaths {path}", "", "```", f"fatpaths {path} {usage}".rstrip(), "```", ""]
        help_text = (command.help or command.short_help or "").strip()
        if help_text:
            lines += [" ".join(help_text.split("\n\n")[0].split()), ""]
            rest = help_text.split("\n\n")[1:]
            lines += [" ".join(p.split()) + "\n" for p in rest]
        sub = getattr(command, "list_commands", None)
        if sub is not None:
            names = command.list_commands(ctx)
            lines += ["Subcommands: " + ", ".join(f"`{n}`" for n in names), ""]
            continue
        rows = []
        for param in command.params:
            if isinstance(param, click.Argument):
                rows.append((param.human_readable_name.upper(), "argument", "", ""))
                continue
            record = param.get_help_record(ctx)
            if record is None:
                continue
            names, text = record
            panel = getattr(param, "rich_help_panel", None) or ""
            rows.append((names, "option", text.replace("|", "\\|"), panel))
        if rows:
            lines += ["| argument or option | description |", "|---|---|"]
            shown_panel = ""
            for names, kind, text, panel in rows:
                # A command that groups its options (simulate) shows each group's heading.
                if panel and panel != shown_panel:
                    lines.append(f"| **{panel} options** | |")
                    shown_panel = panel
                shown = names if kind == "option" else f"{names} (argument)"
                lines.append(f"| `{shown}` | {' '.join(text.split())} |")
            lines.append("")
    return "\n".join(lines)


def platform_pages() -> dict[str, str]:
    from fatpaths_cfg.platforms import PLATFORMS

    pages: dict[str, str] = {}
    index = [
        "# Platforms",
        "",
        "Generated from the platform descriptors (`fatpaths_cfg/platforms/<name>/__init__.py`):",
        "what each network OS is rendered as, what `verify` reads back, where it runs, how it is",
        "deployed.",
        "",
        "| platform | what | encodings | families | ECMP | backup routes | lab | containerlab"
        " | deploy |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, platform in sorted(PLATFORMS.items()):
        deploy = platform.deploy
        driver = "-" if deploy is None else deploy.driver.split(":")[-1]
        lab = "namespaces" if platform.netns is not None else "-"
        clab = platform.clab.kind if platform.clab is not None else "-"
        index.append(
            f"| [{name}]({name}.md) | {platform.summary} | {', '.join(platform.encodings)} | "
            f"{', '.join(platform.families)} | {'yes' if platform.ecmp else 'no'} | "
            f"{'yes' if platform.floating else 'no'} | {lab} | {clab} | {driver} |"
        )
        files = [
            f"| `configs/{name}/{f.path}` | {f.holds} | "
            f"{'template ' + f.template if f.template else 'built by ' + (f.builder or '-')} |"
            for f in platform.files
        ]
        limits = platform.limits
        page = [
            f"# {name}",
            "",
            f"{platform.summary}.",
            "",
            "## What is rendered",
            "",
            "| file | verify reads back | made by |",
            "|---|---|---|",
            *files,
            "",
            "## What it can do",
            "",
            f"* Layer encodings: {', '.join(platform.encodings)}; families: "
            f"{', '.join(platform.families)}.",
            f"* Equal-cost next hops inside a layer: {'yes' if platform.ecmp else 'no'}; "
            f"floating backup routes (`routing.backup: lfa`): "
            f"{'yes' if platform.floating else 'no'}.",
            f"* Table limits checked at compile time: {limits.routes:,} routes, "
            f"{limits.vlans:,} VLANs, {limits.static_macs:,} static MAC entries per switch.",
            "",
            "## Where it runs",
            "",
            (
                f"* Batfish: reads its own files from the snapshot folder "
                f"`{platform.snapshot.folder}`."
                if platform.snapshot.folder
                else f"* Batfish: has no parser for it; reads the {platform.snapshot.model} "
                "files that stand in for it."
            ),
            "* Namespace lab (`fatpaths lab up`): "
            + ("yes" if platform.netns is not None else "no (use containerlab)")
            + ".",
            "* containerlab: "
            + (
                f"kind `{platform.clab.kind}`, image `{platform.clab.default_image or 'built'}`."
                if platform.clab is not None
                else "no."
            ),
            "* Deploy: "
            + (
                f"driver `{driver}`, candidate `{deploy.candidate}`"
                + (
                    "; ordered rounds (`deploy --from`): yes."
                    if deploy.rounds
                    else "; ordered rounds: no (whole configs only)."
                )
                if deploy is not None
                else "no."
            ),
            "",
        ]
        pages[f"platforms/{name}.md"] = "\n".join(page)
    index += [
        "",
        "## Adding a platform",
        "",
        "A platform is one package, `fatpaths_cfg/platforms/<name>/`: its descriptor (the",
        "package's `__init__.py`, a `Platform` with its files, encodings, families, limits,",
        "Batfish snapshot, lab node and deploy driver), its `render.py` for structured files or",
        "files that need more than the view, its `reader.py` that parses its own formats back for",
        "`verify`, and its Jinja `templates/`. Add its name to the list in",
        "`fatpaths_cfg/platforms/__init__.py`; the inventory schema, `--platform` choices, these",
        "pages and the tests parametrised over the registry pick it up. Add a golden case",
        "(`tests/golden/`). Step by step:",
        "[Adding a platform](../guide/configs.md#adding-a-platform).",
        "",
    ]
    pages["platforms/index.md"] = "\n".join(index)
    return pages


def generated() -> dict[str, str]:
    return {
        "reference/inventory.md": inventory_page(),
        "reference/commands.md": commands_page(),
        **platform_pages(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    args = parser.parse_args()
    stale = []
    for relative, text in generated().items():
        path = DOCS / relative
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(relative)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if stale:
        print(f"stale: {', '.join(stale)} (run: python docs/generate.py)", file=sys.stderr)
        raise SystemExit(1)


if __name__ == "__main__":
    main()
