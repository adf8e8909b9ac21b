from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
INVENTORIES = REPO / "inventories"


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO
