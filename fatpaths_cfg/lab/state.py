"""`OUT/lab/state.json`: everything a lab created, written before each creation step.

Recording intent before acting is what lets `down` clean up after a crash half-way through
`up`: a namespace recorded but never created is simply skipped.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fatpaths_cfg.errors import UserErrors

STATE_SCHEMA = "fatpaths.lab/1"


@dataclass
class DaemonRecord:
    netns: str
    daemon: str
    pidfile: str
    pid: int | None = None
    # /proc/PID/stat start time: a recycled PID has another one, so `down` never kills a stranger.
    starttime: int | None = None


@dataclass
class LabState:
    lab: str
    fabric: str
    out: str
    runtime_dir: str
    phase: str = "creating"
    # "netns": namespaces, veths and FRR made by the lab itself; "clab": containers deployed by
    # containerlab from `clab_topology`, their namespaces attached under the lab's names.
    engine: str = "netns"
    clab_topology: str = ""
    namespaces: list[str] = field(default_factory=list)
    veths: list[list[str]] = field(default_factory=list)
    daemons: list[DaemonRecord] = field(default_factory=list)
    failed_links: list[int] = field(default_factory=list)
    # Files and directories `up --mgmt` made outside the runtime directory (the client key
    # folder, devices.yaml, sshd's privilege separation directory if it was missing).
    made: list[str] = field(default_factory=list)
    # Host-wide sysctl path -> value before `up` raised it; `down` restores these.
    sysctls: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"schema": STATE_SCHEMA, **asdict(self)}

    def save(self, path: Path) -> None:
        """Atomic replace: a crash while writing leaves the previous complete state."""
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".json.tmp")
        temporary.write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")
        os.replace(temporary, path)


def load_state(path: Path) -> LabState | None:
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("schema") != STATE_SCHEMA:
            schema = data.get("schema") if isinstance(data, dict) else None
            raise ValueError(f"unknown lab state schema {schema!r}")
        data.pop("schema")
        data["daemons"] = [DaemonRecord(**d) for d in data.get("daemons", [])]
        return LabState(**data)
    except (OSError, ValueError, TypeError) as exc:
        # Not a state this version wrote (damaged, or someone else's file): nothing it lists
        # may be trusted to remove.
        raise UserErrors.single(
            path,
            "",
            f"not a lab state fatpaths can read ({exc})",
            "if no lab of this output is up, move the file away and run the command again",
        ) from None


def process_starttime(pid: int) -> int | None:
    """Field 22 of /proc/PID/stat, or None if there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    except (FileNotFoundError, ProcessLookupError):
        return None
    # The command name (field 2) may contain spaces; fields after its ')' are plain.
    return int(stat.rsplit(")", 1)[1].split()[19])
