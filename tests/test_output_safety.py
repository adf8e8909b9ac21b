"""`compile -o` never destroys what fatpaths did not write: every refusal exits 2, names the
path and leaves everything as it was, with no temporary directory behind."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.cli import build_app
from fatpaths_cfg.support.output import OUTPUT_MARKER, OutputTree

REPO = Path(__file__).resolve().parent.parent

HAND6 = Path(__file__).resolve().parent.parent / "inventories" / "hand-6.yaml"


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under `root` (the temporary test directory) with its bytes."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def compile_cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(build_app(), ["compile", *args])
    return result.exit_code, result.stderr if result.exit_code else result.stdout


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project directory holding the inventory, as the current directory."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(HAND6, project / "inventory.yaml")
    monkeypatch.chdir(project)
    return project


def assert_refused(
    workspace: Path, args: list[str], expected: str, before: dict[str, bytes] | None = None
) -> None:
    root = workspace.parent
    before = snapshot(root) if before is None else before
    code, output = compile_cli("inventory.yaml", *args)
    assert code == 2, output
    assert output.strip() == expected
    assert snapshot(root) == before, "a refused compile changed files"


# Each case: what is at the target, the arguments, and the exact message (golden).
REFUSALS = {
    "foreign_directory": (
        "-o notes",
        "error: notes: is not empty and is not a fatpaths compile output (it has no "
        ".fatpaths-output) (choose another directory, or pass --force to replace it and "
        "everything in it)",
    ),
    "regular_file": (
        "-o notes/todo.txt",
        "error: notes/todo.txt: exists and is not a directory (remove it yourself or choose "
        "another path with -o)",
    ),
    "current_directory": (
        "-o .",
        "error: .: is the current directory or one of its parents; replacing it would delete "
        "everything in it (name a new directory, e.g. -o out/NAME)",
    ),
    "parent_of_current_directory": (
        "-o .. --force",
        "error: ..: is the current directory or one of its parents; replacing it would delete "
        "everything in it (name a new directory, e.g. -o out/NAME)",
    ),
    "the_inventory_itself": (
        "-o inventory.yaml --force",
        "error: inventory.yaml: is the input file inventory.yaml (name a new directory with -o)",
    ),
    "directory_holding_the_inventory": (
        "-o ../project --force",
        "error: ../project: is the current directory or one of its parents; replacing it would "
        "delete everything in it (name a new directory, e.g. -o out/NAME)",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_compile_refuses_targets_it_did_not_write(workspace: Path, case: str) -> None:
    (workspace / "notes").mkdir()
    (workspace / "notes" / "todo.txt").write_text("buy cables\n")
    args, expected = REFUSALS[case]
    assert_refused(workspace, args.split(), expected)


def test_force_never_replaces_a_directory_holding_the_inventory(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From elsewhere (so not an ancestor of the current directory), with --force."""
    elsewhere = workspace.parent / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    before = snapshot(workspace.parent)
    code, output = compile_cli("../project/inventory.yaml", "-o", "../project", "--force")
    assert code == 2
    assert output.strip() == (
        "error: ../project: holds the input file ../project/inventory.yaml; replacing it would "
        "delete it (name a new directory with -o)"
    )
    assert snapshot(workspace.parent) == before


def test_an_earlier_output_is_replaced_and_lists_what_it_wrote(workspace: Path) -> None:
    assert compile_cli("inventory.yaml", "-o", "out")[0] == 0
    marker = (workspace / "out" / OUTPUT_MARKER).read_text().splitlines()
    listed = {line for line in marker if not line.startswith("#")}
    on_disk = {
        p.relative_to(workspace / "out").as_posix()
        for p in (workspace / "out").rglob("*")
        if p.is_file()
    }
    assert listed == on_disk - {OUTPUT_MARKER}
    assert "fabric.json" in listed
    (workspace / "out" / "verify").mkdir()
    (workspace / "out" / "verify" / "report.md").write_text("stale\n")
    code, output = compile_cli("inventory.yaml", "-o", "out", "--seed", "9")
    assert code == 0, output
    assert not (workspace / "out" / "verify").exists(), "stale results of the old compile"
    assert sorted(p.name for p in workspace.iterdir()) == ["inventory.yaml", "out"]


def test_an_earlier_output_with_a_users_file_is_kept_unless_forced(workspace: Path) -> None:
    assert compile_cli("inventory.yaml", "-o", "out")[0] == 0
    (workspace / "out" / "configs" / "my-notes.txt").write_text("mine\n")
    assert_refused(
        workspace,
        ["-o", "out"],
        "error: out: holds files fatpaths did not write: configs/my-notes.txt (move them "
        "elsewhere, or pass --force to replace the directory with them)",
    )
    code, _ = compile_cli("inventory.yaml", "-o", "out", "--force")
    assert code == 0
    assert not (workspace / "out" / "configs" / "my-notes.txt").exists()
    assert (workspace / "out" / OUTPUT_MARKER).is_file()


def test_a_limited_compile_never_adopts_foreign_files(workspace: Path) -> None:
    assert compile_cli("inventory.yaml", "-o", "out")[0] == 0
    (workspace / "out" / "hosts" / "extra.sh").write_text("echo mine\n")
    code, _ = compile_cli("inventory.yaml", "-o", "out", "--limit", "leaf1", "--force")
    assert code == 0
    assert not (workspace / "out" / "hosts" / "extra.sh").exists()
    assert (workspace / "out" / "configs" / "frr" / "leaf2" / "frr.conf").is_file()


def test_force_replaces_a_foreign_directory_when_asked(workspace: Path) -> None:
    (workspace / "scratch").mkdir()
    (workspace / "scratch" / "old.txt").write_text("x\n")
    code, output = compile_cli("inventory.yaml", "-o", "scratch", "--force")
    assert code == 0, output
    assert (workspace / "scratch" / "fabric.json").is_file()
    assert not (workspace / "scratch" / "old.txt").exists()


def test_an_empty_directory_is_used(workspace: Path) -> None:
    (workspace / "empty").mkdir()
    assert compile_cli("inventory.yaml", "-o", "empty")[0] == 0
    assert (workspace / "empty" / "fabric.json").is_file()


def test_analyze_results_refuse_a_foreign_directory(tmp_path: Path) -> None:
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "paper.tex").write_text("\\section{}\n")
    tree = OutputTree("analyze")
    tree.add_text("analysis.json", "{}\n")
    with pytest.raises(Exception, match="not a fatpaths analyze output"):
        tree.commit(foreign)
    assert (foreign / "paper.tex").read_text() == "\\section{}\n"


@pytest.fixture
def mount_point(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs mount: the kernel refuses to rename it (EBUSY), so it can never be swapped."""
    assert os.geteuid() == 0, "mounting a file system needs root"
    point = tmp_path / "mounted"
    point.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(point)], check=True)
    try:
        yield point
    finally:
        subprocess.run(["umount", "-l", str(point)], check=True)


def test_a_mount_point_is_refused_and_a_directory_inside_it_works(mount_point: Path) -> None:
    (mount_point / "keep.txt").write_text("mine\n")
    before = snapshot(mount_point.parent)
    code, output = compile_cli(str(HAND6), "-o", str(mount_point), "--force")
    assert code == 2
    assert f"{mount_point}: is a mount point" in output
    assert f"-o {mount_point}/NAME" in output
    assert snapshot(mount_point.parent) == before
    assert compile_cli(str(HAND6), "-o", str(mount_point / "hand6"))[0] == 0
    assert sorted(p.name for p in mount_point.iterdir()) == ["hand6", "keep.txt"]


def test_a_busy_rename_is_a_clear_error_with_nothing_left_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """EBUSY from the swap itself (a directory in use elsewhere): the earlier output stays."""
    out = tmp_path / "out"
    api.compile_to_directory(HAND6, out)
    before = snapshot(tmp_path)
    real_rename = os.rename

    def busy(source: str | Path, destination: str | Path) -> None:
        if Path(source) == out:
            raise OSError(errno.EBUSY, os.strerror(errno.EBUSY), str(source))
        real_rename(source, destination)

    monkeypatch.setattr(os, "rename", busy)
    code, output = compile_cli(str(HAND6), "-o", str(out), "--seed", "5")
    assert code == 2
    assert "cannot write the output: Device or resource busy" in output
    assert snapshot(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_read_only_location_is_a_clear_error_with_nothing_left_behind(
    tmp_path: Path,
) -> None:
    parent = tmp_path / "ro"
    parent.mkdir()
    if os.geteuid() == 0:  # root ignores permission bits; a read-only mount binds it too
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(parent)], check=True
        )
    else:
        parent.chmod(0o555)
    try:
        code, output = compile_cli(str(HAND6), "-o", str(parent / "out"))
        assert code == 2
        assert "cannot write the output" in output
        assert "choose another directory with -o" in output
        assert list(parent.iterdir()) == []
    finally:
        if os.geteuid() == 0:
            subprocess.run(["umount", str(parent)], check=True)
        parent.chmod(0o755)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ro"]


@pytest.mark.parametrize(
    "argv",
    [["topo", "generate", "slimfly", "-p", "q=3"], ["schema"]],
    ids=["topo-generate", "schema"],
)
def test_single_file_outputs_overwrite_only_their_own(tmp_path: Path, argv: list[str]) -> None:
    mine = tmp_path / "mine.yaml"
    mine.write_text("fabric: handmade\n")
    refused = CliRunner().invoke(build_app(), [*argv, "-o", str(mine)])
    assert refused.exit_code == 2
    assert f"{mine}: exists and was not written by fatpaths" in refused.stderr
    assert mine.read_text() == "fabric: handmade\n"
    ours = tmp_path / "ours.out"
    for _ in range(2):  # the second run replaces the first run's file
        assert CliRunner().invoke(build_app(), [*argv, "-o", str(ours)]).exit_code == 0
    forced = CliRunner().invoke(build_app(), [*argv, "-o", str(mine), "--force"])
    assert forced.exit_code == 0
    assert mine.read_text() == ours.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.yaml", "ours.out"]


def test_the_same_bytes_under_two_names_are_one_hard_linked_file(tmp_path: Path) -> None:
    tree = OutputTree()
    config = b"ip route 10.0.0.0/29 172.16.0.1\n" * 1000
    tree.add_bytes("configs/frr/s1/frr.conf", config)
    tree.add_bytes("batfish/sonic_configs/s1/frr.conf", config)
    # Equal but distinct bytes are written apart: only a deliberate reuse is linked.
    tree.add_bytes("configs/frr/s2/frr.conf", bytes(bytearray(config)))
    tree.commit(tmp_path / "out")
    first = (tmp_path / "out/configs/frr/s1/frr.conf").stat()
    assert (tmp_path / "out/batfish/sonic_configs/s1/frr.conf").stat().st_ino == first.st_ino
    assert first.st_nlink == 2
    assert (tmp_path / "out/configs/frr/s2/frr.conf").stat().st_nlink == 1
    assert (tmp_path / "out/batfish/sonic_configs/s1/frr.conf").read_bytes() == config


def test_a_compile_links_the_snapshots_frr_conf_to_the_rendered_one(tmp_path: Path) -> None:
    out = tmp_path / "out"
    api.compile_to_directory(REPO / "inventories" / "slimfly-q5.yaml", out, batfish=True)
    rendered = out / "configs/frr/sf-0-0-0/frr.conf"
    snapshot = out / "batfish/sonic_configs/sf-0-0-0/frr.conf"
    assert snapshot.stat().st_ino == rendered.stat().st_ino
