"""The documentation site: generated pages current, every inventory field described, and the
site builds with every link and anchor resolved (mkdocs --strict)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from fatpaths_cfg.inventory.field_docs import FIELD_DOCS
from fatpaths_cfg.inventory.json_schema import inventory_json_schema

REPO = Path(__file__).resolve().parent.parent


def test_generated_pages_are_current() -> None:
    result = subprocess.run(
        [sys.executable, str(REPO / "docs" / "generate.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_every_inventory_field_is_described_and_only_those() -> None:
    schema = inventory_json_schema()
    models = {"InventorySpec": schema, **schema["$defs"]}
    for name, model in models.items():
        fields = set(model.get("properties", {}))
        assert set(FIELD_DOCS.get(name, {})) == fields, name
        for field, prop in model.get("properties", {}).items():
            assert prop.get("description"), f"{name}.{field}"


def test_the_site_builds_with_every_link_resolved(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "reference" / "inventory" / "index.html").is_file()
    assert (tmp_path / "site" / "getting-started" / "index.html").is_file()


def test_the_getting_started_outputs_are_what_the_commands_print() -> None:
    result = subprocess.run(
        [sys.executable, str(REPO / "docs" / "tutorial.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_the_architecture_drawing_is_the_import_contract() -> None:
    """The layer drawing in the development guide lists the import-linter layers, top first."""
    import re
    import tomllib

    contract = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = [
        [name.strip().removeprefix("fatpaths_cfg.") for name in row.split("|")]
        for row in contract["contracts"][0]["layers"]
    ]
    page = (REPO / "docs" / "guide" / "development.md").read_text()
    drawing = re.search(r"```text\n(.*?)```", page[page.index("import-linter") :], re.S)
    assert drawing is not None
    rows = [
        [name.strip() for name in re.split(r"\s{2,}", line.strip())[0].split("|")]
        for line in drawing.group(1).splitlines()
        if line.strip()
    ]
    assert rows == layers


def test_every_figure_is_shown_beside_the_command_that_made_it() -> None:
    """Each file under docs/figures is used by a page, and the section that uses it (from the
    heading before to the next) names the script or command that produced it."""
    docs = REPO / "docs"
    pages = {page: page.read_text().splitlines() for page in docs.rglob("*.md")}
    made_by = re.compile(r"benchmarks/\w+\.py|`(sudo )?(\.venv/bin/)?fatpaths \w")
    for figure in sorted((docs / "figures").iterdir()):
        uses = [
            (page, at)
            for page, lines in pages.items()
            for at, line in enumerate(lines)
            if f"figures/{figure.name}" in line
        ]
        assert uses, f"{figure.name}: no page shows it"
        for page, at in uses:
            lines = pages[page]
            start = next((i for i in range(at, -1, -1) if lines[i].startswith("#")), 0)
            end = next((i for i in range(at + 1, len(lines)) if lines[i].startswith("#")), None)
            near = "\n".join(lines[start:end])
            assert made_by.search(near), f"{page.name}:{at + 1}: {figure.name} names no script"
