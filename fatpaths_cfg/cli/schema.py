"""`fatpaths schema`: the inventory JSON Schema, for editor completion and validation."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from fatpaths_cfg.cli.common import run_or_exit


def schema_command(
    out: Path | None = typer.Option(None, "-o", "--out", help="Write to FILE, not stdout."),
    force: bool = typer.Option(
        False, "--force", help="Overwrite FILE even if fatpaths did not write it."
    ),
) -> None:
    """Print the inventory JSON Schema (for editor completion and validation)."""
    from fatpaths_cfg.inventory.json_schema import SCHEMA_TITLE, inventory_json_schema_text
    from fatpaths_cfg.support.output import write_owned_file

    text = inventory_json_schema_text()
    if out is None:
        sys.stdout.write(text)
    else:
        signature = f'"title": "{SCHEMA_TITLE}"'
        run_or_exit(lambda: write_owned_file(out, text, signature, force))


def add_commands(app: typer.Typer) -> None:
    app.command("schema", short_help="Print the inventory JSON Schema.")(schema_command)
