"""Rebuilds the installed native module with profile-guided optimisation, or leaves it alone.

`.ci/install` runs this after `pip install -e .` (skip it with FATPATHS_PGO=0). It builds the
module instrumented, runs `.ci/pgo_train.py` with it, merges the profile with the toolchain's
own `llvm-profdata` and builds the module again with that profile, into
`fatpaths_cfg/_native.abi3.so`, where the editable install loads it from. The simulator's event
loop then runs about 5% fewer instructions and 5-8% less CPU time (docs/guide/performance.md);
its results are the same to the bit (the profile changes code layout and inlining, never
arithmetic).

The profile must be merged by an `llvm-profdata` of rustc's own LLVM version: rustup's
`llvm-tools` component (added here when rustup is present), or a distribution's
`llvm-profdata-N` of the same major version. Without one, or if any step fails, the plain
module from `pip install -e .` stays, and this says why; the exit status is 0 either way, since
a plain module is a working install. `_native.BUILD` says which one is installed.

    python .ci/pgo_build.py      (from the checkout's root, in the package's environment)
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NATIVE = ROOT / "native"
WORK = NATIVE / "target" / "pgo"
MODULE = ROOT / "fatpaths_cfg" / "_native.abi3.so"


class Skip(Exception):
    """Why the plain module stays."""


def llvm_major(version_text: str) -> int | None:
    """The LLVM major version in `rustc -vV`'s or `llvm-profdata --version`'s output."""
    found = re.search(r"LLVM version:?\s*(\d+)\.", version_text)
    return int(found.group(1)) if found else None


def rustc_info() -> tuple[str, int, Path]:
    """rustc's host triple, LLVM major version and sysroot."""
    info = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout
    host = re.search(r"^host: (\S+)", info, re.M)
    major = llvm_major(info)
    if host is None or major is None:
        raise Skip(f"rustc -vV names no host or LLVM version:\n{info}")
    sysroot = subprocess.run(
        ["rustc", "--print", "sysroot"], capture_output=True, text=True, check=True
    ).stdout.strip()
    return host.group(1), major, Path(sysroot)


def profdata_tool(host: str, major: int, sysroot: Path, path: str | None = None) -> Path:
    """An `llvm-profdata` whose LLVM major version is `major`: the toolchain's own (rustup's
    `llvm-tools`), else `llvm-profdata-<major>` or `llvm-profdata` on `path` if its version
    matches. A profile merged by another version cannot be read by rustc's LLVM."""
    candidates = [sysroot / "lib" / "rustlib" / host / "bin" / "llvm-profdata"]
    for name in (f"llvm-profdata-{major}", "llvm-profdata"):
        found = shutil.which(name, path=path)
        if found:
            candidates.append(Path(found))
    for tool in candidates:
        if not tool.is_file():
            continue
        out = subprocess.run([str(tool), "--version"], capture_output=True, text=True)
        if llvm_major(out.stdout + out.stderr) == major:
            return tool
    raise Skip(
        f"no llvm-profdata of LLVM {major} (rustc's); with rustup: "
        "`rustup component add llvm-tools`"
    )


def cargo_build(target_dir: Path, rustflags: str, build: str | None = None) -> Path:
    env = dict(os.environ)
    env["RUSTFLAGS"] = f"{env.get('RUSTFLAGS', '')} {rustflags}".strip()
    if build is not None:
        env["FATPATHS_NATIVE_BUILD"] = build
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "--target-dir", str(target_dir)],
        cwd=NATIVE,
        env=env,
        check=True,
    )
    return target_dir / "release" / "lib_native.so"


def install(module: Path) -> None:
    """Puts `module` where the editable install loads it, in one rename (a process that has
    the old one open keeps it)."""
    staged = MODULE.with_suffix(".so.new")
    shutil.copyfile(module, staged)
    os.replace(staged, MODULE)


def built_as() -> str:
    out = subprocess.run(
        [sys.executable, "-c", "from fatpaths_cfg import _native; print(_native.BUILD)"],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def build() -> None:
    host, major, sysroot = rustc_info()
    own = sysroot / "lib" / "rustlib" / host / "bin" / "llvm-profdata"
    if not own.is_file() and shutil.which("rustup"):
        # Best effort (it needs the network); the search below says what is missing.
        subprocess.run(["rustup", "component", "add", "llvm-tools"], capture_output=True)
    profdata = profdata_tool(host, major, sysroot)
    shutil.rmtree(WORK, ignore_errors=True)
    raw = WORK / "raw"
    print("== profile-guided build of the native module: instrumented build", flush=True)
    instrumented = cargo_build(WORK / "generate", f"-Cprofile-generate={raw}")
    plain = WORK / "plain.so"
    shutil.copyfile(MODULE, plain)
    try:
        install(instrumented)
        print("== profile-guided build: training run (.ci/pgo_train.py)", flush=True)
        subprocess.run([sys.executable, str(ROOT / ".ci" / "pgo_train.py")], cwd=ROOT, check=True)
        merged = WORK / "merged.profdata"
        subprocess.run([str(profdata), "merge", "-o", str(merged), str(raw)], check=True)
        print("== profile-guided build: optimised build", flush=True)
        optimised = cargo_build(WORK / "use", f"-Cprofile-use={merged}", build="pgo")
        install(optimised)
        if built_as() != "pgo":
            raise Skip("the rebuilt module does not say it was built with the profile")
    except BaseException:
        install(plain)
        raise
    # Only the merged profile is kept (the builds' directories hold some 400 MB).
    for done in ("generate", "use", "raw"):
        shutil.rmtree(WORK / done, ignore_errors=True)
    plain.unlink()
    print(f"== native module: profile-guided build installed ({MODULE.relative_to(ROOT)})")


def main() -> int:
    try:
        build()
    except Exception as why:  # whatever went wrong, the plain module is back in place
        print(f"== native module: plain build kept ({why})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
