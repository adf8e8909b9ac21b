"""Output people read in logs: unwrapped result lines, no stray blank lines, help text that
says what a switch is and finishes its sentences."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from rich.table import Table
from typer.main import get_command
from typer.testing import CliRunner

from fatpaths_cfg.cli import build_app

REPO = Path(__file__).resolve().parent.parent
# click's default limit for a command's short help: longer first sentences get cut with "...".
SHORT_HELP_LIMIT = 45


def cli(*args: str, columns: int = 60) -> subprocess.CompletedProcess[str]:
    """The CLI with stdout and stderr piped, as under `| tee log`, in a narrow window."""
    env = {**os.environ, "COLUMNS": str(columns)}
    env.pop("FORCE_COLOR", None)
    env.pop("TTY_COMPATIBLE", None)
    return subprocess.run(
        [sys.executable, "-m", "fatpaths_cfg.cli", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_piped_compile_prints_one_unbroken_line(tmp_path: Path) -> None:
    out = tmp_path / "a-long-output-directory-name-so-the-result-line-is-wider-than-any-window"
    result = cli("compile", str(REPO / "inventories" / "hand-6.yaml"), "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert not result.stdout.startswith("\n"), repr(result.stdout[:40])
    lines = result.stdout.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("compiled ") and lines[0].endswith("unchanged)")


def test_log_console_keeps_terminal_width_on_a_terminal() -> None:
    from fatpaths_cfg.support.console import make_console

    console = make_console()
    assert console.width >= 1000  # under pytest stdout is not a terminal
    terminal = type(console)(force_terminal=True, width=72)
    assert terminal.width == 72


def test_log_console_prints_wide_tables_unfolded(capsys: pytest.CaptureFixture[str]) -> None:
    from fatpaths_cfg.support.console import make_console

    table = Table(title="a table")
    for name in ("first column", "second column", "third column"):
        table.add_column(name)
    table.add_row("x" * 60, "y" * 60, "z" * 60)
    make_console().print(table)
    row = [line for line in capsys.readouterr().out.splitlines() if "x" * 60 in line]
    assert len(row) == 1 and "y" * 60 in row[0] and "z" * 60 in row[0]


def test_log_console_rule_stays_screen_wide(capsys: pytest.CaptureFixture[str]) -> None:
    from fatpaths_cfg.support.console import make_console

    make_console().rule("sw1")
    assert len(capsys.readouterr().out.rstrip("\n")) == 80


def test_log_console_prints_what_a_plain_rich_console_prints() -> None:
    from io import StringIO

    from rich.console import Console

    from fatpaths_cfg.support.console import LOG_WIDTH, LogFriendlyConsole

    lines = [
        "results in out/sim/fatpaths-ndp-incast32-1 (3 runs) at 2,598.8 µs",
        "deadlock at 570.0 us: paused cycle sw-1 -> sw-2 -> sw-1 (priority 0, 1)",
        "wrote 'a.yaml': None True 0x1f 10.0.0.1/31 fe80::1 https://example.org [x]",
        "emoji :smiley: and :thumbs_up-text: at 12:30:45, not : this : or :[bold]x[/]:",
    ]
    table = Table(title="flow completion time (FCT): 3.06 Gb/s")
    table.add_column("scheme")
    table.add_column("p99 FCT µs", justify="right")
    table.add_row("fatpaths", "≥2,648.6")
    log, plain = StringIO(), StringIO()
    log_console = LogFriendlyConsole(file=log, soft_wrap=False)
    plain_console = Console(file=plain, soft_wrap=False, width=LOG_WIDTH)
    assert log_console.color_system is None and plain_console.color_system is None
    for console in (log_console, plain_console):
        for line in lines:
            console.print(line, markup=False)
            console.print(line, justify="right", highlight=True)
        console.print(table)
    assert log.getvalue() == plain.getvalue()


def children(command: Any) -> dict[str, Any]:
    """A group's subcommands through click's own interface (the root loads feature areas on
    demand, so its `commands` dict holds only what has been loaded)."""
    if not hasattr(command, "list_commands"):
        return {}
    ctx = click.Context(command)
    return {name: command.get_command(ctx, name) for name in command.list_commands(ctx)}


def commands() -> Iterator[tuple[str, Any]]:
    root = get_command(build_app())

    def walk(path: str, command: Any) -> Iterator[tuple[str, Any]]:
        yield path, command
        for name, sub in children(command).items():
            yield from walk(f"{path} {name}".strip(), sub)

    yield from walk("", root)


def test_help_shows_no_bool_type_for_switches() -> None:
    runner = CliRunner()
    for path, _ in commands():
        result = runner.invoke(build_app(), [*path.split(), "--help"])
        assert result.exit_code == 0, result.output
        assert "<bool>" not in result.output, f"fatpaths {path} --help:\n{result.output}"


def shown_short_help(command: Any) -> str:
    """What a command list shows for a command (typer: short_help, else the first paragraph)."""
    return str(command.short_help or (command.help or "").split("\n\n")[0]).strip()


def test_command_lists_show_whole_sentences() -> None:
    for path, command in commands():
        if not path:
            continue
        text = shown_short_help(command)
        assert text.endswith("."), f"{path}: {text!r}"
        assert "\n" not in text, f"{path}: {text!r}"
        assert len(text) <= SHORT_HELP_LIMIT, f"{path}: {text!r} is cut in click's list"


@pytest.mark.parametrize("group", ["", "topo", "lab"])
def test_command_list_lines_hold_the_whole_description(group: str) -> None:
    result = CliRunner().invoke(build_app(), [*group.split(), "--help"])
    assert result.exit_code == 0, result.output
    parent = dict(commands())[group]
    lines = result.output.splitlines()
    for name, command in children(parent).items():
        text = shown_short_help(command)
        assert any(name in line and text in line for line in lines), (name, text, result.output)


def test_report_png_says_which_fabric_and_layers(tmp_path: Path) -> None:
    from PIL import Image

    out = tmp_path / "hand6"
    result = CliRunner().invoke(
        build_app(), ["compile", str(REPO / "inventories" / "hand-6.yaml"), "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    with Image.open(out / "report.png") as image:
        title = str(image.text.get("Title", ""))  # type: ignore[attr-defined]
    assert "hand6" in title and "3 layers" in title


def test_table_titles_stay_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from fatpaths_cfg.support.console import make_console, make_table

    title = "a title much wider than the one narrow column of the table below it"
    table = make_table(title)
    table.add_column("n")
    table.add_row("1")
    make_console().print(table)
    assert any(title in line for line in capsys.readouterr().out.splitlines())


@pytest.mark.parametrize("argv", [["--help"], ["nonsense"]])
def test_help_and_usage_errors_import_no_feature_area_numpy_or_rich(argv: list[str]) -> None:
    code = (
        "import sys\n"
        "from fatpaths_cfg.cli import main\n"
        f"sys.argv = ['fatpaths', *{argv!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('numpy', 'scipy', 'rich', 'fatpaths_cfg.api',"
        " 'fatpaths_cfg.cli.simulate', 'fatpaths_cfg.sim.run') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert "HEAVY []" in result.stdout, result.stdout
    assert "Usage: fatpaths" in result.stdout + result.stderr


@pytest.mark.parametrize("argv", [["topo", "kinds"], ["--help"]])
def test_commands_leave_the_collector_on_with_start_up_frozen(argv: list[str]) -> None:
    code = (
        "import gc, sys\n"
        "from fatpaths_cfg.cli import main\n"
        f"sys.argv = ['fatpaths', *{argv!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('COLLECTOR', gc.isenabled(), gc.get_freeze_count() > 0)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    # Only a command's import is frozen; the command list imports none.
    frozen = argv != ["--help"]
    assert f"COLLECTOR True {frozen}" in result.stdout, result.stdout


@pytest.mark.parametrize(("given", "kept"), [(None, "1"), ("2", "2")])
def test_numpy_starts_one_blas_thread_unless_the_user_says(given: str | None, kept: str) -> None:
    code = (
        "import os, sys\n"
        "from fatpaths_cfg.cli import main\n"
        "sys.argv = ['fatpaths', 'topo', 'kinds']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('BLAS', os.environ['OPENBLAS_NUM_THREADS'])\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO, env=env
    )
    assert f"BLAS {kept}" in result.stdout, result.stdout


def test_the_lazy_command_list_says_what_each_command_says() -> None:
    from fatpaths_cfg.cli.common import FEATURE_COMMANDS, feature_command

    for name, (_, short_help) in FEATURE_COMMANDS.items():
        assert shown_short_help(feature_command(name)) == short_help
