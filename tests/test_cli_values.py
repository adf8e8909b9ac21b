"""Option values converted without pydantic are the values (and errors) typer's own gives."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

from fatpaths_cfg.cli.values import PlainCoercion, convert_plainly

REPO = Path(__file__).resolve().parent.parent


def probe_command(
    out: Path | None = typer.Option(None, "--out"),
    name: str = typer.Option("permutation", "--name"),
    count: int = typer.Option(10, "--count", min=1),
    bounded: int = typer.Option(2, "--bounded", min=1, max=8),
    offset: int | None = typer.Option(None, "--offset"),
    share: float = typer.Option(0.5, "--share"),
    items: list[str] = typer.Option([], "--item"),
    until_done: bool | None = typer.Option(None, "--until-done/--stop"),
    existing: Path | None = typer.Option(None, "--existing", exists=True),
) -> None:
    """An option of each kind the fatpaths commands declare."""


def probe_params() -> tuple[Any, dict[str, Any]]:
    app = typer.Typer()
    app.command()(probe_command)
    command = typer.main.get_command(app)
    return command, {param.name: param for param in command.params}


def converted(param: Any, command: Any, value: Any) -> tuple[str, Any]:
    """What an option makes of `value`: ("value", type and repr) or ("error", message); a repr
    because nan is not equal to itself."""
    try:
        result = param.process_value(command.context_class(command), value)
    except Exception as exc:  # the exception typer raises is what is compared
        return "error", (type(exc).__name__, str(exc))
    return "value", (type(result), repr(result))


SAMPLES: dict[str, list[Any]] = {
    "out": [None, "out5", "a/", "", ".", Path("x"), "sim-incast"],
    "name": [None, "permutation", "", " x", "websearch-sc20"],
    "count": [None, 10, "10", "0", "007", "-3", "+5", " 5", "1_000", "1.0", "abc", "9" * 19],
    "bounded": ["1", "8", "9", 0, 4],
    "offset": [None, "-0", "12", "x"],
    "share": [None, 0.5, "1", "1.50", "-0.0", "1e3", ".5", "nan", "abc", 2],
    "items": [None, (), ("q=5", "p=2"), ["a"]],
    "until_done": [None, True, False],
    "existing": [None, "missing-file", "pyproject.toml"],
}


@pytest.mark.parametrize("option", list(SAMPLES))
def test_plain_conversion_gives_what_typer_gives(
    option: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    typer_command, typer_params = probe_params()
    plain_command, plain_params = probe_params()
    convert_plainly(list(plain_params.values()))
    for value in SAMPLES[option]:
        expected = converted(typer_params[option], typer_command, value)
        assert converted(plain_params[option], plain_command, value) == expected, value


def test_every_typer_option_gets_the_plain_conversion() -> None:
    _, params = probe_params()
    if not hasattr(params["name"], "_runtime_param"):
        pytest.skip("this typer converts values without pydantic")
    convert_plainly(list(params.values()))
    assert all(isinstance(p._runtime_param, PlainCoercion) for p in params.values())


def modules_a_simulate_run_loaded(args: list[str], unwanted: tuple[str, ...]) -> list[str]:
    """The modules among `unwanted` (prefixes) that `fatpaths simulate ARGS` imported, run in
    a fresh interpreter; the run itself must succeed."""
    code = (
        "import json, sys\n"
        "from fatpaths_cfg.cli import main\n"
        f"sys.argv = ['fatpaths', 'simulate', *{args!r}]\n"
        "try:\n    main()\nexcept SystemExit as exit:\n    assert not exit.code, exit.code\n"
        f"loaded = sorted(m for m in sys.modules if m.startswith({unwanted!r}))\n"
        "print('UNWANTED', json.dumps(loaded))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    line = next(line for line in result.stdout.splitlines() if line.startswith("UNWANTED "))
    loaded: list[str] = json.loads(line.removeprefix("UNWANTED "))
    return loaded


def test_a_simulate_run_of_a_generated_fabric_imports_no_compiler(tmp_path: Path) -> None:
    # pydantic (the inventory's schema), the compiled model with the fabric and addressing it
    # builds on, YAML and htsim's matrix format: none of them serve a generated fabric's run,
    # and together they were a fifth of a small run's instructions.
    unwanted = (
        "pydantic",
        "yaml",
        "fatpaths_cfg.compiled",
        "fatpaths_cfg.fabric",
        "fatpaths_cfg.addressing",
        "fatpaths_cfg.sim.htsim",
    )
    run = ["--generate", "slimfly", "-p", "q=5", "--size", "64KiB", "-o", str(tmp_path / "run")]
    assert modules_a_simulate_run_loaded(run, unwanted) == []
    assert (tmp_path / "run" / "summary.json").is_file()


def test_a_simulate_run_of_a_compiled_fabric_reads_it_without_the_compiler(tmp_path: Path) -> None:
    # Reading a compiled directory back needs the fabric model and the view, but neither
    # PyYAML (the fabric's errors name inventory paths), the inventory's schema, nor the IR
    # and the compiler's models under it: together about 130 M instructions of the run.
    out = tmp_path / "out"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "fatpaths_cfg.cli",
            "compile",
            str(REPO / "inventories" / "slimfly-q3.yaml"),
            "-o",
            str(out),
        ],
        capture_output=True,
        check=True,
        cwd=REPO,
    )
    run = [str(out), "--size", "64KiB", "-o", str(tmp_path / "run")]
    unwanted = (
        "yaml",
        "pydantic",
        "fatpaths_cfg.compiled.ir",
        "fatpaths_cfg.addressing",
        "fatpaths_cfg.layers",
        "fatpaths_cfg.routing",
    )
    assert modules_a_simulate_run_loaded(run, unwanted) == []
    assert (tmp_path / "run" / "summary.json").is_file()
