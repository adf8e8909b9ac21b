"""What a CLI run printed as errors, in the form the golden `.expected` files hold."""

from __future__ import annotations

from pathlib import Path

from click.testing import Result


def printed_errors(result: Result) -> str:
    """The `error: ` lines of stderr without their prefix, one per line."""
    return "".join(
        f"{line.removeprefix('error: ')}\n"
        for line in result.stderr.splitlines()
        if line.startswith("error: ")
    )


def snapshot(*roots: Path) -> dict[Path, tuple[int, bytes]]:
    """Every file and directory under `roots`, with its mode and contents: two snapshots that
    compare equal mean nothing there was written, replaced, added or deleted."""
    found: dict[Path, tuple[int, bytes]] = {}
    for root in roots:
        for path in [root, *sorted(root.rglob("*"))]:
            if path.is_symlink():
                found[path] = (0, str(path.readlink()).encode())
            elif path.is_dir():
                found[path] = (path.stat().st_mode, b"")
            elif path.exists():
                found[path] = (path.stat().st_mode, path.read_bytes())
    return found
