"""FRR per switch namespace: zebra and staticd with their own pid, socket and log paths."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path

from fatpaths_cfg.lab.netns import LabCommandError, LabWaitError, in_netns, run
from fatpaths_cfg.lab.plan import SwitchNode
from fatpaths_cfg.lab.state import DaemonRecord, process_starttime

FRR_DIR = Path(os.environ.get("FATPATHS_FRR_DIR", "/usr/lib/frr"))
DAEMONS = ("zebra", "staticd")


def frr_available() -> bool:
    return all((FRR_DIR / d).is_file() for d in DAEMONS)


def switch_runtime_dir(runtime_dir: Path, node: SwitchNode) -> Path:
    return runtime_dir / node.netns


def prepare_runtime(runtime_dir: Path, node: SwitchNode) -> Path:
    """A directory the `frr` user owns, holding a copy of the compiled frr.conf.

    FRR drops to its own user before reading its config and creating sockets, and refuses to
    run as root (root is not in the vty group), so the compiled file is copied byte for byte.
    """
    assert node.frr_conf is not None
    folder = switch_runtime_dir(runtime_dir, node)
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(node.frr_conf, folder / "frr.conf")
    for path in (runtime_dir, folder, folder / "frr.conf"):
        shutil.chown(path, "frr", "frr")
    return folder


def daemon_records(runtime_dir: Path, node: SwitchNode) -> list[DaemonRecord]:
    folder = switch_runtime_dir(runtime_dir, node)
    return [DaemonRecord(node.netns, d, str(folder / f"{d}.pid")) for d in DAEMONS]


def start_daemon(record: DaemonRecord, timeout: float = 10.0) -> None:
    folder = Path(record.pidfile).parent
    argv = [
        str(FRR_DIR / record.daemon),
        "-d",
        "-N",
        record.netns,
        "-i",
        record.pidfile,
        "-z",
        str(folder / "zserv.api"),
        "--vty_socket",
        str(folder),
        # No TCP vty: nothing listens besides the sockets in the runtime directory.
        "-P",
        "0",
        "-f",
        str(folder / "frr.conf"),
        "--log",
        f"file:{folder / record.daemon}.log",
    ]
    run(in_netns(record.netns, argv))
    # `-d` returns before the daemonised child has written its pid file.
    await_pidfile(record, timeout)


def await_pidfile(record: DaemonRecord, timeout: float = 10.0) -> None:
    """Fill in the record's pid and start time once the daemon has written its pid file."""
    folder = Path(record.pidfile).parent
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            pid = int(Path(record.pidfile).read_text(encoding="ascii").split()[0])
        except (FileNotFoundError, ValueError, IndexError):
            time.sleep(0.02)
            continue
        record.pid = pid
        record.starttime = process_starttime(pid)
        if record.starttime is None:
            raise LabCommandError(f"{record.daemon} in {record.netns} exited; see {folder}")
        return
    raise LabCommandError(f"{record.daemon} in {record.netns} wrote no pid file in {timeout} s")


def stop_daemon(record: DaemonRecord, timeout: float = 5.0) -> bool:
    """SIGTERM (then SIGKILL) the recorded process, only if it is still the same process."""
    if record.pid is None:
        try:
            record.pid = int(Path(record.pidfile).read_text(encoding="ascii").split()[0])
        except (FileNotFoundError, ValueError, IndexError):
            return False
        record.starttime = process_starttime(record.pid)
    if record.starttime is None or process_starttime(record.pid) != record.starttime:
        return False
    return terminate(record.pid, timeout)


def terminate(pid: int, timeout: float = 5.0) -> bool:
    started = process_starttime(pid)
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process_starttime(pid) != started:
            return True
        time.sleep(0.02)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    return True


def kernel_prefixes(netns: str) -> set[str]:
    found: set[str] = set()
    for family in ("-4", "-6"):
        out = run(["ip", "-n", netns, family, "-j", "route", "show"], check=False) or "[]"
        for route in json.loads(out):
            dst = route.get("dst", "")
            if dst == "default":
                continue
            found.add(dst if "/" in dst else dst + ("/128" if ":" in dst else "/32"))
    return found


def missing_routes(
    node: SwitchNode, expected: Callable[[SwitchNode], set[str]] | None = None
) -> set[str]:
    wanted = set(node.routes) if expected is None else expected(node)
    return wanted - kernel_prefixes(node.netns)


def wait_for_routes(
    nodes: list[SwitchNode],
    timeout: float = 60.0,
    on_wait: Callable[[int], None] | None = None,
    expected: Callable[[SwitchNode], set[str]] | None = None,
    hint: str = "see the FRR logs under the lab's runtime directory, then `fatpaths lab down`",
) -> None:
    """Pinging before zebra has pushed every static route would report phantom failures.

    `expected`: the prefixes a switch must hold (default all of its routes; fewer while some
    of its links are down)."""
    pending = list(nodes)
    deadline = time.monotonic() + timeout
    while pending:
        pending = [node for node in pending if missing_routes(node, expected)]
        if not pending:
            return
        if on_wait is not None:
            on_wait(len(pending))
        if time.monotonic() > deadline:
            detail = ", ".join(
                f"{n.name} ({len(missing_routes(n, expected))} missing)" for n in pending[:5]
            )
            raise LabWaitError(f"routes did not reach the kernel in {timeout} s: {detail}", hint)
        time.sleep(0.2)
