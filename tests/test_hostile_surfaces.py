"""The hostile corpus of the surfaces beyond the inventory: simulate's options, matrices and
outputs, verify --report, analyze --results, deploy's devices files and flags, discover, sweep
and tune.

Each case in `hostile/` is a command line (`CASE.args`, one word a line), maybe an input
beside it (`CASE.yaml`, `CASE.txt`: copied into the workspace), and what must happen
(`CASE.expected`: an `exit N` line, `writes PATH` lines naming the only paths the command may
change, then the error lines it prints). Every case runs in a workspace that holds a compiled
fabric and the user's own files a careless command would destroy; after the run, everything
but the named output must be byte for byte as it was.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli_errors import snapshot
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.cli import build_app
from fatpaths_cfg.support.output import OUTPUT_MARKER, marker_text

HERE = Path(__file__).resolve().parent
CASES = sorted((HERE / "hostile").glob("*.args"))
HAND6 = HERE.parent / "inventories" / "hand-6.yaml"


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hostile") / "fabric"
    api.build_output(api.compile_fabric(HAND6), platforms=["frr"]).commit(out)
    return out


def workspace(root: Path, compiled: Path) -> None:
    """The fabric, and files that are the user's: each is something a case must not touch."""
    shutil.copytree(compiled, root / "fabric")
    (root / "victim.txt").write_text("the user's notes\n")
    # A folder of the user's that happens to look like a simulate run.
    experiment = root / "myexp"
    (experiment / "ecmp").mkdir(parents=True)
    (experiment / "run.json").write_text('{"mine": true}\n')
    (experiment / "summary.json").write_text('{"mine": true}\n')
    (experiment / "ecmp" / "flows.csv").write_text("flow,src,dst\n")
    reports = root / "reports"
    reports.mkdir()
    (reports / "report.json").write_text('{"reviewed": true}\n')
    (reports / "report.md").write_text("# my review\n")
    (root / "pw.bin").write_bytes(b"caf\xe9\n")  # a password saved as Latin-1
    shutil.copy(HAND6, root / "inv.yaml")  # the user's inventory (tune's input)
    (root / "id_test").write_text("not a real key\n")
    (root / "id_test").chmod(0o600)  # as ssh wants a private key
    (root / "id_open").write_text("not a real key either\n")
    (root / "id_open").chmod(0o644)
    # Reports a version before output markers wrote where verify writes by default.
    (root / "fabric" / "verify").mkdir()
    (root / "fabric" / "verify" / "report.json").write_text("{}\n")
    (root / "fabric" / "verify" / "report.md").write_text("# old\n")
    # An earlier simulate run, and one the user has since added a file to.
    for name, extra in (("oldrun", None), ("oldrun_notes", "notes.txt")):
        run = root / name
        run.mkdir()
        (run / "run.json").write_text("{}\n")
        (run / OUTPUT_MARKER).write_text(marker_text("simulate", ["run.json"]))
        if extra:
            (run / extra).write_text("the user's\n")


def read_expected(case: Path) -> tuple[int, list[str], str]:
    """(exit code, paths the command may write, expected error lines)."""
    lines = case.with_suffix(".expected").read_text(encoding="utf-8").splitlines(keepends=True)
    code = int(lines[0].removeprefix("exit "))
    writes = [line.removeprefix("writes ").strip() for line in lines if line.startswith("writes ")]
    errors = "".join(line for line in lines[1:] if not line.startswith("writes "))
    return code, writes, errors


def printed(stderr: str) -> str:
    """Our `error: ` lines without the prefix, and click's usage `Error: ` line as it is."""
    kept = []
    for line in stderr.splitlines():
        if line.startswith("error: "):
            kept.append(line.removeprefix("error: "))
        elif line.startswith("Error: "):
            kept.append(line)
    return "".join(f"{line}\n" for line in kept)


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_hostile_case(
    case: Path, compiled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace(tmp_path, compiled)
    for data in case.parent.glob(f"{case.stem}.*"):
        if data.suffix not in (".args", ".expected"):  # its input: a YAML file, a matrix
            shutil.copy(data, tmp_path / data.name)
    monkeypatch.chdir(tmp_path)
    args = case.read_text(encoding="utf-8").splitlines()
    code, writes, expected = read_expected(case)
    before = snapshot(tmp_path)
    result = CliRunner().invoke(build_app(), args)
    assert result.exit_code == code, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    assert printed(result.stderr) == expected
    after = snapshot(tmp_path)
    allowed = [tmp_path / path for path in writes]

    def outside(found: dict[Path, tuple[int, bytes]]) -> dict[Path, tuple[int, bytes]]:
        return {
            path: value
            for path, value in found.items()
            if not any(path == out or out in path.parents for out in allowed)
        }

    assert outside(after) == outside(before)
    for out in allowed:
        # What a case may write, it wrote (so the check above is not vacuous for it).
        assert snapshot(out) != {p: v for p, v in before.items() if p == out or out in p.parents}


# Each surface's cases are named SURFACE_...; each surface holds at least this many.
SURFACES = ("sweep", "tune", "devices", "simulate", "matrix")
CASES_PER_SURFACE = 20


def test_the_corpus_covers_every_surface() -> None:
    commands = {case.read_text(encoding="utf-8").split()[0] for case in CASES}
    assert commands >= {"simulate", "verify", "deploy", "sweep", "tune", "analyze", "discover"}
    for surface in SURFACES:
        count = sum(case.stem.startswith(f"{surface}_") for case in CASES)
        assert count >= CASES_PER_SURFACE, (surface, count)
    for case in CASES:
        code, _writes, expected = read_expected(case)
        # A refused case says why; a case that passes prints no error.
        assert bool(expected) == (code == 2), case.name


def test_a_default_run_directory_of_the_users_is_passed_over(
    compiled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace(tmp_path, compiled)
    monkeypatch.chdir(tmp_path)
    theirs = tmp_path / "fabric" / "sim" / "fatpaths-ndp-permutation-8KiB-seed1"
    theirs.mkdir(parents=True)
    (theirs / "run.json").write_text('{"mine": true}\n')
    before = snapshot(theirs)
    args = ["simulate", "fabric", "--size", "8KiB"]
    for _ in range(2):  # the second run replaces its own directory, and still not theirs
        result = CliRunner().invoke(build_app(), args)
        assert result.exit_code == 0, result.output
        assert snapshot(theirs) == before
        ours = theirs.with_name(theirs.name + "-2")
        assert (ours / OUTPUT_MARKER).is_file() and (ours / "flows.csv").is_file()
    assert sorted(p.name for p in theirs.parent.iterdir()) == [theirs.name, ours.name]
