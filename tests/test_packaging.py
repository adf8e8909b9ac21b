"""The wheel a user installs: templates ship inside fatpaths_cfg, each platform's in its own
package (not as a top-level `templates` package another distribution could clash with), and an
installed wheel renders every platform."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from fatpaths_cfg.platforms import PLATFORMS

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
    shipped = {n for n in names if n.endswith(".j2")}
    in_repo = {p.relative_to(REPO).as_posix() for p in (REPO / "fatpaths_cfg").rglob("*.j2")}
    # Each platform's templates in its own package, the host plans' beside the render code.
    assert {n.split("/")[2] for n in in_repo if n.startswith("fatpaths_cfg/platforms/")} >= {
        "eos",
        "frr",
        "linux",
    }
    assert "fatpaths_cfg/render/templates/hosts/host.sh.j2" in in_repo
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
        "from fatpaths_cfg.platforms import PLATFORMS; "
        f"inventory = Path({str(REPO / 'inventories' / 'hand-6.yaml')!r}); "
        "compiled = api.compile_fabric(inventory); "
        f"api.write_output(compiled, inventory, Path({str(out)!r}), platforms=list(PLATFORMS))"
    )
    # The installed copy first on the path, so nothing is read from this checkout.
    env = {**os.environ, "PYTHONPATH": str(target)}
    subprocess.run([sys.executable, "-c", script], check=True, env=env, cwd=tmp_path)
    assert "ip route" in (out / "configs" / "frr" / "leaf1" / "frr.conf").read_text()
    # Every platform found its templates (or builder) in the installed packages.
    for name, platform in PLATFORMS.items():
        for relative in platform.paths("leaf1"):
            assert (out / "configs" / name / relative).stat().st_size > 0, (name, relative)
