"""The wheel a user installs: templates ship inside fatpaths_cfg (not as a top-level
`templates` package another distribution could clash with), and an installed wheel renders."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "maturin", "build", "--release", "--quiet", "-o", str(out)],
        cwd=REPO,
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("*.whl")
    return built


def test_templates_are_package_data_of_fatpaths_cfg(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    shipped = {n for n in names if n.startswith("fatpaths_cfg/templates/")}
    in_repo = {
        "fatpaths_cfg/templates/" + p.relative_to(REPO / "fatpaths_cfg" / "templates").as_posix()
        for p in (REPO / "fatpaths_cfg" / "templates").rglob("*.j2")
    }
    assert in_repo and in_repo <= shipped
    assert not [n for n in names if n.split("/", 1)[0] == "templates"]


def test_an_installed_wheel_compiles_and_renders(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    out = tmp_path / "out"
    script = (
        "import fatpaths_cfg, sys; from pathlib import Path; from fatpaths_cfg import api; "
        f"assert Path(fatpaths_cfg.__file__).is_relative_to({str(target)!r}); "
        f"api.compile_to_directory(Path({str(REPO / 'inventories' / 'hand-6.yaml')!r}), "
        f"Path({str(out)!r}))"
    )
    # The installed copy first on the path, so nothing is read from this checkout.
    env = {**os.environ, "PYTHONPATH": str(target)}
    subprocess.run([sys.executable, "-c", script], check=True, env=env, cwd=tmp_path)
    assert "ip route" in (out / "configs" / "frr" / "leaf1" / "frr.conf").read_text()
