from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
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


@pytest.fixture
def mptcp_lab() -> None:
    """The lab's prerequisites with MPTCP (a missing one fails, never skips)."""
    from lab_fixtures import require_lab

    require_lab(mptcp=True)


@pytest.fixture
def hand6_up(tmp_path: Path) -> Iterator[Path]:
    """hand-6 compiled as a user would, its lab up for the test and torn down after."""
    from lab_fixtures import compiled_lab_output, torn_down_after

    from fatpaths_cfg.lab.lifecycle import up

    out = compiled_lab_output(INVENTORIES / "hand-6.yaml", tmp_path / "hand6")
    with torn_down_after(out):
        up(out)
        yield out


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "clab_schema: validates against containerlab's schema (FATPATHS_CLAB_SCHEMA)"
    )


def clab_engine_missing() -> str | None:
    """Why tests marked `clab` cannot run here, or None if they can."""
    if os.geteuid() != 0:
        return "not root"
    if shutil.which("containerlab") is None:
        return "containerlab is not installed"
    if shutil.which("docker") is None:
        return "docker is not installed"
    done = subprocess.run(["docker", "info"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return "`docker info` failed (no Docker engine running)"
    return None


def _deselect(config: pytest.Config, items: list[pytest.Item], marker: str, why: str) -> None:
    deselected = [item for item in items if item.get_closest_marker(marker)]
    if deselected:
        items[:] = [item for item in items if not item.get_closest_marker(marker)]
        config.hook.pytest_deselected(items=deselected)
        config.stash.setdefault(_DESELECTED, []).append(
            f"deselected {len(deselected)} {marker} tests: {why}"
        )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests whose tools are missing are deselected, openly (never skipped as if they passed)."""
    if not clab_schema_path().is_file():
        _deselect(
            config,
            items,
            "clab_schema",
            f"containerlab's schema is not at {clab_schema_path()} "
            "(set FATPATHS_CLAB_SCHEMA to its path to run them)",
        )
    if any(item.get_closest_marker("clab") for item in items):
        why = clab_engine_missing()
        if why is not None:
            _deselect(
                config, items, "clab", f"{why} (they need root, a Docker engine and containerlab)"
            )


_DESELECTED = pytest.StashKey[list[str]]()


def pytest_report_header(config: pytest.Config) -> str:
    schema = clab_schema_path()
    found = "found" if schema.is_file() else "missing: tests marked clab_schema are deselected"
    engine = clab_engine_missing()
    clab = "available" if engine is None else f"{engine}: tests marked clab are deselected"
    return f"containerlab schema: {schema} ({found}); containerlab engine: {clab}"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for line in terminalreporter.config.stash.get(_DESELECTED, []):
        terminalreporter.write_line(line)
