"""Bad sweep files: every problem named with file, line and field, exit 2, nothing written;
and the sweep's engine stays out of the CLI until a sweep runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_errors import printed_errors, snapshot
from typer.testing import CliRunner

from fatpaths_cfg.cli import build_app

CASES = sorted((Path(__file__).parent / "sweep_errors").glob("*.yaml"))


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_bad_sweep_reports_golden_errors(
    case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(case.parent)
    out = tmp_path / "results"
    before = snapshot(case.parent, tmp_path)
    result = CliRunner().invoke(build_app(), ["sweep", case.name, "-o", str(out)])
    expected = case.with_suffix(".expected").read_text(encoding="utf-8")
    printed = printed_errors(result)
    assert result.exit_code == 2, result.output
    assert printed == expected
    assert not out.exists()
    assert snapshot(case.parent, tmp_path) == before


def test_cli_does_not_import_the_engine_until_a_sweep_runs() -> None:
    probe = (
        "import sys; from fatpaths_cfg.cli import build_app; build_app(); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed', "
        "'pyarrow')))"
    )
    repo = Path(__file__).resolve().parent.parent
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=repo, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
