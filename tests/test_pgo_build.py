"""`.ci/pgo_build.py` picks only an `llvm-profdata` of rustc's own LLVM major version: a profile
merged by another version is one rustc cannot read, and the build would fail."""

from __future__ import annotations

import stat
from pathlib import Path
from types import ModuleType

import pytest
from script_loader import load_script


def load() -> ModuleType:
    return load_script(".ci/pgo_build.py")


def fake_tool(path: Path, version_line: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho '{version_line}'\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_llvm_major_reads_rustc_and_llvm_profdata_alike() -> None:
    pgo = load()
    rustc = "rustc 1.95.0 (59807616e 2026-04-14)\nhost: x86_64-unknown-linux-gnu\n"
    rustc += "LLVM version: 22.1.2\n"
    assert pgo.llvm_major(rustc) == 22
    assert pgo.llvm_major("Ubuntu LLVM version 14.0.6\n  Optimized build.") == 14
    assert pgo.llvm_major("no version here") is None


def test_the_toolchains_own_tool_first_and_a_mismatched_one_never(tmp_path: Path) -> None:
    pgo = load()
    host = "x86_64-unknown-linux-gnu"
    sysroot = tmp_path / "sysroot"
    bin_dir = tmp_path / "bin"
    # On the path: an old LLVM's tool under both names.
    fake_tool(bin_dir / "llvm-profdata", "LLVM version 14.0.6")
    fake_tool(bin_dir / "llvm-profdata-22", "LLVM version 14.0.6")
    with pytest.raises(pgo.Skip, match="no llvm-profdata of LLVM 22"):
        pgo.profdata_tool(host, 22, sysroot, path=str(bin_dir))
    # A distribution's versioned tool of the right version is taken.
    right = fake_tool(bin_dir / "llvm-profdata-22", "LLVM version 22.1.2")
    assert pgo.profdata_tool(host, 22, sysroot, path=str(bin_dir)) == right
    # The toolchain's own (rustup's llvm-tools) comes before anything on the path.
    own = fake_tool(
        sysroot / "lib" / "rustlib" / host / "bin" / "llvm-profdata", "LLVM version 22.1.2"
    )
    assert pgo.profdata_tool(host, 22, sysroot, path=str(bin_dir)) == own
