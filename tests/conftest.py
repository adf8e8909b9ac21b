from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
INVENTORIES = REPO / "inventories"
# containerlab's JSON Schema is not ours to ship; it sits in the project's shared folder beside
# the repository, or wherever FATPATHS_CLAB_SCHEMA points.
CLAB_SCHEMA_DEFAULT = REPO.parent / "shared" / "schemas" / "clab.schema.json"


def clab_schema_path() -> Path:
    return Path(os.environ.get("FATPATHS_CLAB_SCHEMA", CLAB_SCHEMA_DEFAULT))


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "clab_schema: validates against containerlab's schema (FATPATHS_CLAB_SCHEMA)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without the schema, its tests are deselected, openly (never skipped as if they passed)."""
    if clab_schema_path().is_file():
        return
    deselected = [item for item in items if item.get_closest_marker("clab_schema")]
    if deselected:
        items[:] = [item for item in items if not item.get_closest_marker("clab_schema")]
        config.hook.pytest_deselected(items=deselected)
        config.stash[_DESELECTED] = len(deselected)


_DESELECTED = pytest.StashKey[int]()


def pytest_report_header(config: pytest.Config) -> str:
    schema = clab_schema_path()
    found = "found" if schema.is_file() else "missing: tests marked clab_schema are deselected"
    return f"containerlab schema: {schema} ({found})"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    count = terminalreporter.config.stash.get(_DESELECTED, 0)
    if count:
        terminalreporter.write_line(
            f"deselected {count} clab_schema tests: containerlab's schema is not at "
            f"{clab_schema_path()} (set FATPATHS_CLAB_SCHEMA to its path to run them)"
        )
