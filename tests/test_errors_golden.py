"""Golden error tests: every bad inventory gives exactly its documented messages, exit code 2,
and writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_errors import printed_errors, snapshot
from typer.testing import CliRunner

from fatpaths_cfg.cli import build_app

CASES = sorted((Path(__file__).parent / "errors").glob("*.yaml"))


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_bad_inventory_reports_golden_errors(
    case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(case.parent)
    out = tmp_path / "out"
    before = snapshot(case.parent, tmp_path)
    result = CliRunner().invoke(build_app(), ["compile", case.name, "-o", str(out)])
    expected = case.with_suffix(".expected").read_text(encoding="utf-8")
    printed = printed_errors(result)
    assert result.exit_code == 2, result.output
    assert printed == expected
    assert "Traceback" not in result.output
    assert not out.exists()
    assert snapshot(case.parent, tmp_path) == before


def test_every_case_names_file_line_and_field() -> None:
    for expected in sorted((Path(__file__).parent / "errors").glob("*.expected")):
        for line in expected.read_text(encoding="utf-8").splitlines():
            file, number, *_ = line.split(":")
            assert file == expected.with_suffix(".yaml").name
            assert int(number) >= 1
