"""Atomic, deterministic output that never destroys what fatpaths did not write.

Everything is built in a temporary directory beside the target, then swapped in, so a failed
run leaves an earlier output untouched, and files whose bytes did not change keep their old
modification time (so downstream tools such as rsync or make see no change). A target is only
replaced when it is missing, empty, or an earlier output of the same command whose marker lists
every file in it; anything else is refused before work starts.
"""

from __future__ import annotations

import errno
import io
import json
import os
import shutil
import stat
import tempfile
import zipfile
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from fatpaths_cfg.errors import UserErrors

# zip entries carry a timestamp; a fixed one makes .npz files byte-identical across runs.
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


# The escaper json.dumps(ensure_ascii=False) uses: the C one where the interpreter has it.
_escape = json.encoder.encode_basestring


def dumps_json(data: Any) -> str:
    """`json.dumps(data, indent=2, ensure_ascii=False)` plus a newline, byte for byte.

    With `indent=` the json module uses its pure-Python encoder, a generator per nesting level;
    10k Batfish host files and 722 config_db.json files spent most of a render there. Strings
    go through the module's own C escaper, so the bytes cannot differ.
    """
    out: list[str] = []
    _indented(data, "", out)
    out.append("\n")
    return "".join(out)


def _indented(value: Any, pad: str, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(_escape(value))
    elif value is None or isinstance(value, bool | int | float):
        out.append(json.dumps(value))
    elif isinstance(value, dict):
        _indented_dict(value, pad, out)
    elif isinstance(value, list | tuple):
        _indented_list(value, pad, out)
    else:
        out.append(json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + pad))


def _indented_dict(value: dict[Any, Any], pad: str, out: list[str]) -> None:
    if not value:
        out.append("{}")
        return
    inner = pad + "  "
    out.append("{")
    first = True
    for key, item in value.items():
        # json turns non-string keys into strings its own way (True -> "true"); let it.
        name = _escape(key) if isinstance(key, str) else json.dumps({key: 0})[1:-4]
        out.append(f"\n{inner}{name}: " if first else f",\n{inner}{name}: ")
        first = False
        _indented(item, inner, out)
    out.append(f"\n{pad}}}")


def _indented_list(value: list[Any] | tuple[Any, ...], pad: str, out: list[str]) -> None:
    if not value:
        out.append("[]")
        return
    inner = pad + "  "
    out.append("[")
    first = True
    for item in value:
        out.append(f"\n{inner}" if first else f",\n{inner}")
        first = False
        _indented(item, inner, out)
    out.append(f"\n{pad}]")


# json.dumps with any option builds a new encoder per call; fabric.json encodes 55k records.
_compact = json.JSONEncoder(separators=(", ", ": "), ensure_ascii=False).encode


def _records(value: Any, depth: int, pad: str) -> str:
    inner = pad + "  "
    if isinstance(value, dict) and value and depth < 2:
        items = [
            f"{inner}{json.dumps(k)}: {_records(v, depth + 1, inner)}" for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list) and value and depth < 3 and isinstance(value[0], dict | list):
        return "[\n" + ",\n".join(inner + _compact(v) for v in value) + f"\n{pad}]"
    return _compact(value)


def dumps_json_records(data: Any) -> str:
    """JSON with one line per record (switch, link, host, layer, ...).

    `indent=` makes the json module fall back to its pure-Python encoder, which needs tens of
    seconds for a 76,000-host fabric; encoding each record compactly keeps the C encoder and
    still gives a file that diffs and greps one record per line.
    """
    return _records(data, 0, "") + "\n"


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for name in sorted(arrays):
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            payload = io.BytesIO()
            np.lib.format.write_array(
                payload, np.ascontiguousarray(arrays[name]), allow_pickle=False
            )
            zf.writestr(
                info, payload.getvalue(), compress_type=zipfile.ZIP_DEFLATED, compresslevel=1
            )
    return buffer.getvalue()


# Written into every output directory; its presence (with the listing of what fatpaths wrote)
# is what allows a later run to replace the directory.
OUTPUT_MARKER = ".fatpaths-output"
# Folders that later fatpaths commands (verify, simulate, analyze, lab) write inside a compiled
# directory: results of the previous compile, stale once it is compiled anew.
RESULT_FOLDERS = ("analysis", "convergence", "lab", "sim", "verify")
_MARKER_HEADER = (
    "# fatpaths {kind} output. The next `fatpaths {kind}` into this directory replaces it; it\n"
    "# refuses to while the directory holds files not listed below. Files fatpaths wrote:\n"
)
_SHOWN_FOREIGN = 5
# How much of an existing single-file output is searched for the signature of its writer.
_SIGNATURE_WINDOW = 1 << 20


class OutputSink:
    """Where a command's output files go: `OutputTree` keeps them in memory, `StagedOutput`
    writes each one as it is added. Paths are relative to the output directory."""

    kind: str

    def add_bytes(self, relative: str, data: bytes) -> None:
        raise NotImplementedError

    def __contains__(self, relative: object) -> bool:
        raise NotImplementedError

    def read_back(self, relative: str) -> bytes:
        """A file added earlier, as it will be written."""
        raise NotImplementedError

    def add_text(self, relative: str, text: str) -> None:
        self.add_bytes(relative, text.encode("utf-8"))

    def add_json(self, relative: str, data: Any) -> None:
        self.add_text(relative, dumps_json(data))

    def add_json_records(self, relative: str, data: Any) -> None:
        self.add_text(relative, dumps_json_records(data))


def _check_relative(relative: str) -> None:
    if relative.startswith("/") or ".." in relative.split("/"):
        raise ValueError(f"output path escapes the output directory: {relative}")
    if relative == OUTPUT_MARKER:
        raise ValueError(f"{OUTPUT_MARKER} is written by commit")


def marker_text(kind: str, names: Iterable[str]) -> str:
    return _MARKER_HEADER.format(kind=kind) + "".join(f"{relative}\n" for relative in sorted(names))


class OutputTree(OutputSink):
    """Files to be written under one output directory, kept in memory until `commit`.

    `kind` names the command that owns the directory (compile, analyze); it goes into the
    marker that lets a later run of that command recognise the directory as its own.
    """

    def __init__(self, kind: str = "compile") -> None:
        self.kind = kind
        self.files: dict[str, bytes] = {}

    def add_bytes(self, relative: str, data: bytes) -> None:
        _check_relative(relative)
        self.files[relative] = data

    def __contains__(self, relative: object) -> bool:
        return relative in self.files

    def read_back(self, relative: str) -> bytes:
        return self.files[relative]

    @property
    def total_bytes(self) -> int:
        return sum(len(d) for d in self.files.values())

    def commit(
        self,
        target: Path,
        protected: Sequence[Path] = (),
        force: bool = False,
        unmarked: frozenset[str] = frozenset(),
    ) -> tuple[int, int]:
        """Write into `target` atomically; returns (files written, files unchanged).

        Raises UserErrors, before anything is written, when `target` is not this command's
        to replace (see `check_output_target`), and when the file system refuses the write.
        """
        check_output_target(target, self.kind, protected, force, unmarked)
        with StagedOutput(target, self.kind, protected, force) as staged:
            for relative in sorted(self.files):
                staged.add_bytes(relative, self.files[relative])
            return staged.commit(checked=True)


class StagedOutput(OutputSink):
    """An output directory written file by file as it is produced, so the files never wait in
    memory all at once (a Slim Fly q=37 output is 3 GB): into a staging directory beside
    the target, swapped in whole by `commit`. Leaving the `with` block without a commit removes
    the staging directory, so a failed run leaves an earlier output as it was.

    The caller checks the target (`check_output_target`) before it starts; `commit` checks it
    again, since the directory may have changed while the output was produced.
    """

    def __init__(
        self,
        target: Path,
        kind: str = "compile",
        protected: Sequence[Path] = (),
        force: bool = False,
    ) -> None:
        self.kind = kind
        self.target = target
        self.protected = tuple(protected)
        self.force = force
        self.sizes: dict[str, int] = {}
        self.unchanged: set[str] = set()
        # What this process added, in order: a forked worker sends its part to the parent.
        self.journal: list[tuple[str, int, bool]] = []
        try:
            self._stager: _Stager | None = _Stager(target.resolve())
        except OSError as exc:
            raise _write_error(target, exc) from None

    def __enter__(self) -> StagedOutput:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.discard()

    def add_bytes(self, relative: str, data: bytes) -> None:
        _check_relative(relative)
        try:
            same = self._staging().write(relative, data)
        except OSError as exc:
            raise _write_error(self.target, exc) from None
        self._record(relative, len(data), same)

    def _record(self, relative: str, size: int, same: bool) -> None:
        self.sizes[relative] = size
        if same:
            self.unchanged.add(relative)
        else:
            self.unchanged.discard(relative)
        self.journal.append((relative, size, same))

    def add_written(self, relative: str, write: Callable[[Path], object]) -> bool:
        """A file made by a writer that wants a path (csv, matplotlib): `write(path)` creates
        it in the staging directory, and it joins the output like any other. Returns whether
        the writer made it (a plot with nothing to show makes none)."""
        _check_relative(relative)
        path = self._staging().staging / relative
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write(path)
            if not path.exists():
                return False
            size = path.stat().st_size
        except OSError as exc:
            raise _write_error(self.target, exc) from None
        self._record(relative, size, False)
        return True

    def adopt(self, entries: Iterable[tuple[str, int, bool]]) -> None:
        """Files another process wrote into the same staging directory (see `journal`)."""
        for relative, size, same in entries:
            self._record(relative, size, same)

    def __contains__(self, relative: object) -> bool:
        return relative in self.sizes

    def read_back(self, relative: str) -> bytes:
        if relative not in self.sizes:
            raise KeyError(relative)
        try:
            return (self._staging().staging / relative).read_bytes()
        except OSError as exc:
            raise _write_error(self.target, exc) from None

    @property
    def total_bytes(self) -> int:
        return sum(self.sizes.values())

    def _staging(self) -> _Stager:
        if self._stager is None:
            raise RuntimeError("the output was already committed or discarded")
        return self._stager

    def commit(self, checked: bool = False) -> tuple[int, int]:
        """Swap the staged files in as the target; returns (files written, files unchanged).
        `checked`: the caller checked the target just now."""
        stager = self._staging()
        if not checked:
            check_output_target(self.target, self.kind, self.protected, self.force)
        try:
            marker = marker_text(self.kind, self.sizes).encode("utf-8")
            unchanged = len(self.unchanged) + stager.write(OUTPUT_MARKER, marker)
            _swap_in(stager.staging, stager.target)
        except OSError as exc:
            raise _write_error(self.target, exc) from None
        self._stager = None
        return len(self.sizes) + 1 - unchanged, unchanged

    def discard(self) -> None:
        if self._stager is not None:
            shutil.rmtree(self._stager.staging, ignore_errors=True)
            self._stager = None


class _Stager:
    """Creates the files of one output in a staging directory beside its target."""

    def __init__(self, target: Path) -> None:
        self.target = target
        target.parent.mkdir(parents=True, exist_ok=True)
        self.staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
        try:
            self.staging.chmod(0o755)  # mkdtemp makes it private; the output is meant to be shared
        except BaseException:
            shutil.rmtree(self.staging, ignore_errors=True)
            raise
        self.earlier = target.is_dir()
        # Tens of thousands of files: plain strings and one mkdir per folder, not per file.
        self.folders: set[str] = set()
        # The very same bytes object under two names (the Batfish snapshot's frr.conf is the
        # rendered one) is written once and hard-linked: half the bytes of a large fabric's
        # output. The object is held, so that its id cannot pass to other bytes meanwhile;
        # the names of one object are added close together, so a few recent ones suffice.
        self.recent: OrderedDict[int, tuple[bytes, str]] = OrderedDict()

    def write(self, relative: str, data: bytes) -> bool:
        """Create `relative` with `data`; True when it is kept unchanged from the earlier
        output (the same inode, so its modification time too)."""
        path = f"{self.staging}/{relative}"
        folder = os.path.dirname(path)
        if folder not in self.folders:
            os.makedirs(folder, exist_ok=True)
            self.folders.add(folder)
        if self.earlier and _keep_unchanged(f"{self.target}/{relative}", data, path):
            return True
        earlier = self.recent.get(id(data))
        if earlier is not None and earlier[0] is data and _linked(earlier[1], path):
            return False
        _write_new(path, data)
        if len(data) >= _LINK_MIN_BYTES:
            self.recent[id(data)] = (data, path)
            if len(self.recent) > _RECENT_OBJECTS:
                self.recent.popitem(last=False)
        return False


# Below this a link saves nothing worth a shared inode.
_LINK_MIN_BYTES = 4096
_RECENT_OBJECTS = 64


def _write_new(path: str, data: bytes) -> None:
    """A new file in the staging directory, without a buffered file object per file (12k
    of them in a Slim Fly q=19 output). Exclusive: a name already there (a worker's retry)
    is unlinked first, since it may be a link to a file of the earlier output."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
    try:
        handle = os.open(path, flags, 0o666)
    except FileExistsError:
        os.unlink(path)
        handle = os.open(path, flags, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(handle, view) :]
    finally:
        os.close(handle)


def _keep_unchanged(old: str, data: bytes, path: str) -> bool:
    """Carry the earlier output's file over when its bytes are `data`: as a hard link (no new
    inode, no copy) unless something else links to it too, then as a copy."""
    try:
        status = os.lstat(old)
    except OSError:
        return False
    if not stat.S_ISREG(status.st_mode) or status.st_size != len(data):
        return False
    with open(old, "rb") as existing:
        if existing.read() != data:
            return False
    if os.path.lexists(path):
        os.unlink(path)
    if status.st_nlink == 1 and _linked(old, path):
        return True
    shutil.copy2(old, path)
    return True


def _linked(source: str, path: str) -> bool:
    """Hard-link `path` to `source`; False where links are refused."""
    try:
        os.link(source, path)
    except OSError:
        return False
    return True


def _swap_in(staging: Path, target: Path) -> None:
    if not target.exists():
        os.rename(staging, target)
        return
    retired = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
    try:
        os.rename(target, retired / "previous")
        try:
            os.rename(staging, target)
        except BaseException:
            os.rename(retired / "previous", target)
            raise
    finally:
        shutil.rmtree(retired, ignore_errors=True)


_WRITE_HINTS = {
    errno.EROFS: "the file system is read-only; choose another directory with -o",
    errno.EACCES: "no permission to write there; choose another directory with -o",
    errno.EPERM: "no permission to write there; choose another directory with -o",
    errno.EBUSY: "it is in use (a mount point, or open elsewhere); choose another directory",
    errno.ENOSPC: "the disk is full; free some space or choose another directory",
    errno.ENOTDIR: "a part of the path is a file, not a directory",
}


def _write_error(target: Path, exc: OSError) -> UserErrors:
    hint = _WRITE_HINTS.get(exc.errno or 0, "nothing was written; the earlier output is unchanged")
    where = f" ({exc.filename})" if exc.filename else ""
    return UserErrors.single(target, "", f"cannot write the output: {exc.strerror}{where}", hint)


def _marker_lines(directory: Path) -> list[str] | None:
    marker = directory / OUTPUT_MARKER
    if not marker.is_file():
        return None
    try:
        lines = marker.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    if not lines or not lines[0].startswith("# fatpaths "):
        return None
    return lines


def output_manifest(directory: Path) -> set[str] | None:
    """The files an earlier fatpaths run listed in its marker, or None if it left no marker."""
    lines = _marker_lines(directory)
    if lines is None:
        return None
    return {line for line in lines if line and not line.startswith("#")}


def output_kind(directory: Path) -> str | None:
    """The command whose output `directory` is (compile, simulate, ...), from its marker."""
    lines = _marker_lines(directory)
    if lines is None:
        return None
    words = lines[0].split()
    return words[2] if len(words) > 3 and words[3].startswith("output") else None


def _foreign_files(directory: Path, manifest: set[str], kind: str) -> list[str]:
    # Only a compiled directory holds the result folders of later commands (verify, sim, ...);
    # in any other output, a folder of that name is the user's.
    results = RESULT_FOLDERS if kind == "compile" else ()
    foreign = []
    for path in sorted(directory.rglob("*")):
        if path.is_dir() and not path.is_symlink():
            continue
        relative = path.relative_to(directory).as_posix()
        top = relative.split("/", 1)[0]
        if relative not in manifest and relative != OUTPUT_MARKER and top not in results:
            foreign.append(relative)
    return foreign


def check_output_target(
    target: Path,
    kind: str,
    protected: Sequence[Path] = (),
    force: bool = False,
    unmarked: frozenset[str] = frozenset(),
    appends: bool = False,
) -> None:
    """Refuse, with exit 2 and nothing written, any target that holds what fatpaths did not write.

    A missing or empty directory is fine, and so is an earlier output of the same command
    (marker present) that holds no other files. Everything else needs --force, except targets
    that no flag makes safe: a file, a mount point, the current directory or one of its
    parents, and the input itself or a directory holding it. `unmarked`: the names a version
    before markers wrote at a place only fatpaths writes to (OUT/verify); a directory holding
    nothing else counts as that command's earlier output. `appends`: the command adds files
    beside what is there and removes nothing (a sweep's results), which --force allows.
    """
    real = target.resolve()
    forced = "write beside the files in it" if appends else "replace it and everything in it"
    here = Path.cwd().resolve()

    def refuse(message: str, hint: str) -> UserErrors:
        return UserErrors.single(target, "", message, hint)

    if real == here or real in here.parents:
        raise refuse(
            "is the current directory or one of its parents; replacing it would delete "
            "everything in it",
            "name a new directory, e.g. -o out/NAME",
        )
    for source in protected:
        source_real = source.resolve()
        if real == source_real:
            what = "directory" if source.is_dir() else "file"
            raise refuse(f"is the input {what} {source}", "name a new directory with -o")
        if real in source_real.parents:
            raise refuse(
                f"holds the input file {source}; replacing it would delete it",
                "name a new directory with -o",
            )
    if os.path.lexists(target) and not target.is_dir():
        raise refuse(
            "exists and is not a directory", "remove it yourself or choose another path with -o"
        )
    if os.path.ismount(real):
        # A mount point cannot be renamed, so the atomic swap cannot replace it.
        raise refuse(
            "is a mount point; it cannot be replaced as a whole",
            f"compile into a directory inside it, e.g. -o {target / 'NAME'}",
        )
    if not target.is_dir() or not any(target.iterdir()):
        return
    manifest = output_manifest(target)
    if manifest is None and unmarked:
        manifest = set(unmarked) if not _foreign_files(target, set(unmarked), kind) else None
    if manifest is None:
        if force:
            return
        raise refuse(
            f"is not empty and is not a fatpaths {kind} output (it has no {OUTPUT_MARKER})",
            f"choose another directory, or pass --force to {forced}",
        )
    other = output_kind(target)
    if other is not None and other != kind and not force:
        # Another command's output (a compiled fabric under a simulate run, say) is still
        # not this command's to replace.
        raise refuse(
            f"is a fatpaths {other} output, not {_article(kind)} {kind} output",
            "choose another directory, or pass --force to replace it",
        )
    foreign = _foreign_files(target, manifest, kind)
    if foreign and not force:
        shown = ", ".join(foreign[:_SHOWN_FOREIGN])
        more = f" and {len(foreign) - _SHOWN_FOREIGN} more" if len(foreign) > _SHOWN_FOREIGN else ""
        raise refuse(
            f"holds files fatpaths did not write: {shown}{more}",
            "move them elsewhere, or pass --force to "
            + ("write beside them" if appends else "replace the directory with them"),
        )


def record_written(directory: Path, kind: str, names: Iterable[str]) -> None:
    """Add `names` to the marker of an output that grows file by file (a sweep's results
    folder: each batch of rows is a new file), written aside and renamed so a crash leaves
    the previous listing. Call it before the files appear: a file the marker does not list
    is the user's, to be refused, never removed."""
    listed = output_manifest(directory) or set()
    wanted = listed | set(names)
    if wanted == listed and (directory / OUTPUT_MARKER).is_file():
        return
    staging = directory / f".{OUTPUT_MARKER}.{os.getpid()}.tmp"
    try:
        staging.write_text(marker_text(kind, wanted), encoding="utf-8")
        os.replace(staging, directory / OUTPUT_MARKER)
    except OSError as exc:
        staging.unlink(missing_ok=True)
        raise _write_error(directory, exc) from None


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def write_owned_file(path: Path, text: str, signature: str, force: bool = False) -> None:
    """Write a single-file output; an existing file is replaced only if it contains
    `signature` (so an earlier fatpaths output of the same kind) or the user passed --force."""
    check_owned_file(path, signature, force)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        staging = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            staging.write_text(text, encoding="utf-8")
            os.replace(staging, path)
        finally:
            staging.unlink(missing_ok=True)
    except OSError as exc:
        raise _write_error(path, exc) from None


def check_owned_file(path: Path, signature: str, force: bool = False) -> None:
    """Raises UserErrors when `write_owned_file` would refuse `path`: so a command checks its
    single-file outputs before its work, not after."""
    if os.path.lexists(path):
        if path.is_dir() or (path.is_symlink() and not path.exists()):
            raise UserErrors.single(
                path, "", "exists and is not a file", "choose another path with -o"
            )
        try:
            with path.open("rb") as existing:
                ours = signature.encode() in existing.read(_SIGNATURE_WINDOW)
        except OSError:
            ours = False
        if not ours and not force:
            raise UserErrors.single(
                path,
                "",
                "exists and was not written by fatpaths",
                "choose another path, or pass --force to overwrite it",
            )
