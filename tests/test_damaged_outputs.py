"""The hostile corpus of damaged compiled outputs: every command that reads one refuses it.

Each case in `damaged/` is a command line (`CASE.args`, one word a line) run against a compiled
fabric `fabric` (and an intact copy, `intact`), the damage done to `fabric` first
(`CASE.damage`, one step a line, see `DAMAGES`), and what must happen (`CASE.expected`: an
`exit N` line, then the error lines printed). A refused command writes nothing: after the run
every file of the workspace, the damaged output's included, is byte for byte as it was.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_errors import printed_errors, snapshot
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.cli import build_app

HERE = Path(__file__).resolve().parent
CASES = sorted((HERE / "damaged").glob("*.args"))
HAND6 = HERE.parent / "inventories" / "hand-6.yaml"


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("damaged") / "fabric"
    api.build_output(api.compile_fabric(HAND6), platforms=["frr"]).commit(out)
    return out


def _json_path(data: Any, path: str) -> tuple[Any, str | int]:
    """The container and key that `a/0/b` names in fabric.json's data."""
    *parents, last = [int(p) if p.isdigit() else p for p in path.split("/")]
    for key in parents:
        data = data[key]
    return data, last


def _edit_json(out: Path, edit: Callable[[Any], None]) -> None:
    path = out / "fabric.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def _set(out: Path, path: str, value: str) -> None:
    def edit(data: Any) -> None:
        parent, key = _json_path(data, path)
        parent[key] = json.loads(value)

    _edit_json(out, edit)


def _delete(out: Path, path: str) -> None:
    def edit(data: Any) -> None:
        parent, key = _json_path(data, path)
        del parent[key]

    _edit_json(out, edit)


def _tables(out: Path, edit: Callable[[dict[str, np.ndarray]], None]) -> None:
    path = out / "routing.npz"
    with np.load(path) as arrays:
        tables = {name: np.array(arrays[name]) for name in arrays.files}
    edit(tables)
    path.unlink()
    np.savez(path, **tables)  # type: ignore[arg-type]


def _table(out: Path, name: str, change: str, *args: str) -> None:
    def edit(tables: dict[str, np.ndarray]) -> None:
        if change == "dtype":
            tables[name] = tables[name].astype(args[0])
        elif change == "object":
            tables[name] = np.array([[["x"]]], dtype=object)
        elif change == "drop":
            del tables[name]
        elif change == "drop-layer":
            tables[name] = tables[name][:-1]
        elif change == "set":
            layer, s, t, value = (int(a) for a in args)
            tables[name][layer, s, t] = value
        elif change == "same":  # the same tables written again, uncompressed
            pass
        else:
            raise ValueError(change)

    _tables(out, edit)


def _write(out: Path, name: str, text: str) -> None:
    path = out / name
    path.unlink()
    path.write_bytes(json.loads(text).encode("latin-1"))


def _byte(out: Path, name: str, offset: str, value: str) -> None:
    data = bytearray((out / name).read_bytes())
    data[int(offset)] = int(value, 16)
    (out / name).write_bytes(bytes(data))


def _nest(out: Path, name: str, depth: str) -> None:
    (out / name).write_text("[" * int(depth) + "]" * int(depth), encoding="utf-8")


def _loop(out: Path, name: str) -> None:
    (out / name).unlink()
    os.symlink(name, out / name)


def _truncate(out: Path, name: str, size: str) -> None:
    data = (out / name).read_bytes()
    (out / name).write_bytes(data[: int(size)])


def _grow(out: Path, name: str, size: str) -> None:
    os.truncate(out / name, int(size))  # zeros past the end, as a sparse file


def _link(out: Path, name: str, target: str) -> None:
    (out / name).unlink()
    os.symlink(target, out / name)


DAMAGES: dict[str, Callable[..., None]] = {
    "set": _set,  # set PATH JSON: a field of fabric.json
    "delete": _delete,  # delete PATH
    "table": _table,  # table NAME dtype T | object | drop | drop-layer | set L S T V | same
    "write": _write,  # write FILE JSON-STRING: the file's whole content
    "byte": _byte,  # byte FILE OFFSET HEX
    "nest": _nest,  # nest FILE DEPTH: that many nested lists
    "loop": _loop,  # loop FILE: a symbolic link to itself
    "truncate": _truncate,  # truncate FILE SIZE
    "grow": _grow,  # grow FILE SIZE: zeros appended up to SIZE bytes
    "link": _link,  # link FILE TARGET: a symbolic link to TARGET (e.g. /dev/zero)
    "remove": lambda out, name: (out / name).unlink(),
}


def damage(out: Path, case: Path) -> None:
    for line in case.with_suffix(".damage").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            step, _, rest = line.partition(" ")
            args = rest.split(" ", 1) if step in ("set", "write") else rest.split(" ")
            DAMAGES[step](out, *args)


def workspace(root: Path, compiled: Path, case: Path) -> None:
    shutil.copytree(compiled, root / "fabric")
    shutil.copytree(compiled, root / "intact")
    (root / "victim.txt").write_text("the user's notes\n")
    damage(root / "fabric", case)


def printed(stderr: str) -> str:
    return "".join(
        f"{line.removeprefix('error: ')}\n"
        for line in stderr.splitlines()
        if line.startswith("error: ")
    )


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_damaged_output_is_refused(
    case: Path, compiled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace(tmp_path, compiled, case)
    monkeypatch.chdir(tmp_path)
    args = case.read_text(encoding="utf-8").splitlines()
    lines = case.with_suffix(".expected").read_text(encoding="utf-8").splitlines(keepends=True)
    code, expected = int(lines[0].removeprefix("exit ")), "".join(lines[1:])
    before = snapshot(tmp_path)
    result = CliRunner().invoke(build_app(), args)
    assert result.exit_code == code, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    assert printed_errors(result) == expected
    assert snapshot(tmp_path) == before


def test_the_corpus_covers_every_reader() -> None:
    commands = [case.read_text(encoding="utf-8").split()[0] for case in CASES]
    for command in ("analyze", "verify", "simulate"):
        assert commands.count(command) >= 20, command
    assert {"plan", "deploy"} <= set(commands)
    for case in CASES:
        assert case.with_suffix(".expected").read_text().startswith("exit 2\n"), case.name


def test_the_intact_output_is_read(compiled: Path, tmp_path: Path) -> None:
    """The corpus' damage steps, with nothing damaged, leave an output every reader takes: so
    each refusal above is the damage's doing."""
    out = tmp_path / "fabric"
    shutil.copytree(compiled, out)
    _table(out, "dist", "dtype", "uint8")  # rewritten the corpus' way, the same tables
    from compiled_edit import record_checksums

    record_checksums(out)
    result = CliRunner().invoke(build_app(), ["verify", str(out), "--report", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output


def test_the_fabric_json_cap_is_set_by_its_variable(
    compiled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FATPATHS_MAX_FABRIC_JSON_MB replaces the cap both ways: lower, a file within the
    default cap is refused by its size; higher, the same file is parsed (and refused, whole,
    by the checksum its padding changed)."""
    from fatpaths_cfg.compiled.read import load_compiled
    from fatpaths_cfg.errors import UserErrors

    out = tmp_path / "fabric"
    shutil.copytree(compiled, out)
    with (out / "fabric.json").open("a", encoding="utf-8") as padded:
        padded.write(" " * 2_000_000)  # still valid JSON
    size = (out / "fabric.json").stat().st_size

    def refusal() -> str:
        with pytest.raises(UserErrors) as caught:
            load_compiled(out)
        return str(caught.value)

    monkeypatch.setenv("FATPATHS_MAX_FABRIC_JSON_MB", "1")
    assert refusal() == (
        f"{out}/fabric.json: {size:,} bytes, over the 1 MB cap: FATPATHS_MAX_FABRIC_JSON_MB=1; "
        "refused before parsing (the output is damaged; compile it again, or set "
        "FATPATHS_MAX_FABRIC_JSON_MB=3 to read it anyway)"
    )
    monkeypatch.setenv("FATPATHS_MAX_FABRIC_JSON_MB", "3")
    assert "its sha256 differs from the one compile recorded" in refusal()
    monkeypatch.setenv("FATPATHS_MAX_FABRIC_JSON_MB", "lots")
    assert refusal() == (
        "FATPATHS_MAX_FABRIC_JSON_MB: 'lots' is not a size "
        "(a whole number of MB, e.g. FATPATHS_MAX_FABRIC_JSON_MB=1000)"
    )
