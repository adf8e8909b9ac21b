"""`frr` deploy: a NAPALM driver for a Linux box running FRR, over SSH (paramiko), and the
routes it compares: the compiled frr.conf's and those zebra installed.

NAPALM ships no driver for plain FRR, so this one speaks to the box the way an operator would:
files are staged with `cat`, checked with `vtysh --dryrun`, applied with `frr-reload.py` and
compared with `show running-config`. `vtysh -f` is never a fallback: it only adds lines, so a
route removed from frr.conf would keep forwarding while the deploy reported success.

The managed files are the compiled `frr.conf` (in `frr_dir`) and `interfaces.sh` (in
`state_dir`, beside the staged `candidate/` and the `rollback/` copy). All paths are optional
arguments so that a box with FRR under another prefix, or a test device, keeps its /etc/frr.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from napalm.base.exceptions import ReplaceConfigException

from fatpaths_cfg.deploy.linux_box import (
    DeviceState,
    LinuxBoxDriver,
    RemoteCommandError,
    RemoteResult,
    RollbackError,
)
from fatpaths_cfg.deploy.state import KernelItem, RouteLine, RouteTable, prefix, unified

FRR_CONF = "frr.conf"
# A compiled frr.conf's static routes. A route with a distance is a floating backup
# (`routing.backup`): the device selects it only once the primary is withdrawn, so it is no part
# of the table the device is checked against.
FRR_ROUTE = re.compile(r"^ipv?6? route (\S+) (\S+)$")
INTERFACES = "interfaces.sh"
# Lines `show running-config` prints about itself rather than about the configuration.
RUNNING_HEADER = ("Building configuration", "Current configuration", "frr version", "end")
# `frr defaults` takes effect only when the daemons start, so no reload can make it match; the
# forwarding lines mirror kernel sysctls that interfaces.sh sets (FRR prints `ip forwarding`
# only as `no ip forwarding`, when off).
RUNTIME_INVISIBLE = re.compile(r"^(frr defaults |(no )?ipv?6? forwarding$)")

__all__ = [
    "FRR_CONF",
    "INTERFACES",
    "FrrDriver",
    "RemoteCommandError",
    "RemoteResult",
    "RollbackError",
    "frr_config_lines",
]


def frr_config_lines(text: str) -> list[str]:
    """A config as FRR means it, so that the file and `show running-config` compare equal when
    FRR runs the file: no comments, separators or header; static routes sorted (FRR prints
    them in table order, the compiler per layer); and none of what the running config cannot
    show faithfully (see RUNTIME_INVISIBLE), nor the hostname vtysh adds from the system
    after the daemons' own, nor an empty `line vty` block."""
    kept: list[str] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if (
            not line.strip()
            or line.lstrip().startswith("!")
            or line.startswith(RUNNING_HEADER)
            or RUNTIME_INVISIBLE.match(line)
        ):
            continue
        if line.startswith("hostname ") and any(k.startswith("hostname ") for k in kept):
            continue
        kept.append(line)
    lines: list[str] = []
    for i, line in enumerate(kept):
        block_is_empty = i + 1 == len(kept) or not kept[i + 1].startswith(" ")
        if line == "line vty" and block_is_empty:
            continue
        lines.append(line)
    routes = [line for line in lines if line.startswith(("ip route ", "ipv6 route "))]
    return [line for line in lines if line not in routes] + sorted(routes)


# Ends the here-documents of route_change_command.
_END = "FATPATHS_ROUTES_END"


class FrrDriver(LinuxBoxDriver):
    """`frr` platform: FRR's integrated frr.conf plus the compiled iproute2 interfaces script.

    optional_args, besides LinuxBoxDriver's: frr_dir (/etc/frr), vty_socket (vtysh
    --vty_socket, for FRR with its own socket directory), frr_reload
    (/usr/lib/frr/frr-reload.py).
    """

    script_name = INTERFACES
    routes_in_kernel_view = False  # zebra owns the routes via next hops
    route_state_keys = ("route4", "route6", "rib4", "rib6")
    route_only_keys = ("rib4", "rib6")

    def __init__(
        self,
        hostname: str,
        username: str,
        password: str | None,
        timeout: int = 60,
        optional_args: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(hostname, username, password, timeout, optional_args)
        args = optional_args or {}
        self.frr_dir = str(args.get("frr_dir", "/etc/frr"))
        self.vty_socket: str | None = args.get("vty_socket")
        self.frr_reload = str(args.get("frr_reload", "/usr/lib/frr/frr-reload.py"))

    def managed_files(self) -> dict[str, str]:
        return {
            FRR_CONF: f"{self.frr_dir}/{FRR_CONF}",
            INTERFACES: f"{self.state_dir}/{INTERFACES}",
        }

    def running_path(self, name: str) -> str:
        return self.managed_files()[name]

    def vtysh(self, *args: str) -> str:
        socket = f" --vty_socket {shlex.quote(self.vty_socket)}" if self.vty_socket else ""
        return "vtysh" + socket + "".join(f" {shlex.quote(a)}" for a in args)

    def route_change_command(self, add: list[RouteLine], remove: list[RouteLine]) -> str:
        """One round's lines as shell: `vtysh -f` reading first every new route, then, as a
        second file, the old ones' removal (make before break: each state of the switch is one
        the plan proved), the second only if the first went in. Two files, not one: FRR applies
        one file as one transaction, and within it a route whose old next hop goes and new one
        comes may be withdrawn and added again, which the hitless benchmark saw as probes lost
        to "net unreachable". A file, not a `-c` per line: the push takes half the time."""

        def text(lines: list[RouteLine], verb: str) -> str:
            return "".join(
                f"{verb}{'ipv6' if family == 'v6' else 'ip'} route {prefix} {hop}\n"
                for family, prefix, hop in lines
            )

        vtysh = self.vtysh("-f", "/dev/stdin")
        # Route lines hold only addresses and keywords, so they cannot end the here-document.
        files = [batch for batch in (text(add, ""), text(remove, "no ")) if batch]
        return "set -e\n" + "\n".join(f"{vtysh} <<'{_END}'\n{batch}{_END}" for batch in files)

    def state_commands(self) -> dict[str, str]:
        return {
            **super().state_commands(),
            "running": self.vtysh("-c", "show running-config"),
            "rib4": self.vtysh("-c", "show ip route json"),
            "rib6": self.vtysh("-c", "show ipv6 route json"),
        }

    # -- candidate ----------------------------------------------------------------------------

    def candidate_files(self, filename: str | None, config: str | None) -> dict[str, bytes]:
        """A switch's compiled directory (or its frr.conf), or frr.conf text; without a
        compiled interfaces.sh the installed one stays."""
        if (filename is None) == (config is None):
            raise ReplaceConfigException("give exactly one of filename and config")
        if config is not None:
            return {
                FRR_CONF: config.encode(),
                INTERFACES: self.read_file(self.running_path(INTERFACES)),
            }
        path = Path(str(filename))
        folder = path if path.is_dir() else path.parent
        conf = path / FRR_CONF if path.is_dir() else path
        if not conf.is_file():
            raise ReplaceConfigException(f"{conf}: no such file")
        script = folder / INTERFACES
        return {
            FRR_CONF: conf.read_bytes(),
            INTERFACES: script.read_bytes()
            if script.is_file()
            else self.read_file(self.running_path(INTERFACES)),
        }

    def check_command(self) -> str:
        script = shlex.quote(f"{self.candidate_dir}/{INTERFACES}")
        return (
            self.vtysh("--dryrun", "-f", f"{self.candidate_dir}/{FRR_CONF}") + f" && sh -n {script}"
        )

    def rejection(self, check: RemoteResult) -> str:
        detail = (check.stdout + check.stderr).decode("utf-8", "replace").strip()
        return f"the device rejects the candidate: {detail}"

    def diff_against(self, state: DeviceState, files: dict[str, str]) -> str:
        routing = unified(
            frr_config_lines(state.outputs["running"]),
            frr_config_lines(files[FRR_CONF]),
            "show-running-config",
            FRR_CONF,
        )
        return routing + super().diff_against(state, files)

    # -- commit -------------------------------------------------------------------------------

    def preflight_commands(self) -> dict[str, str]:
        return {
            f"test -x {shlex.quote(self.frr_reload)}": (
                f"{self.frr_reload} is missing on the device (Debian: frr-pythontools); "
                "refusing to commit, because without it lines removed from frr.conf would keep "
                "running"
            )
        }

    def reload_command(self, conf_dir: str) -> str:
        socket = f" --vty_socket {shlex.quote(self.vty_socket)}" if self.vty_socket else ""
        # The file reloaded is conf_dir/frr.conf itself, so frr-reload.py does not `write`
        # the running config over any file: installed bytes stay the compiled ones.
        return (
            f"{shlex.quote(self.frr_reload)} --reload --stdout --log-level error{socket} "
            f"--confdir {shlex.quote(conf_dir)} --rundir {shlex.quote(self.state_dir)} "
            f"{shlex.quote(conf_dir + '/' + FRR_CONF)}"
        )

    def apply_commands(self, source_dir: str, state: DeviceState, script: str) -> str:
        return (
            super().apply_commands(source_dir, state, script)
            + " && "
            + self.reload_command(self.frr_dir)
        )

    @property
    def saved_running_dir(self) -> str:
        return f"{self.rollback_dir}/running"

    def saved_extra(self, state: DeviceState) -> dict[str, bytes]:
        running = (
            "\n".join(
                line
                for line in state.outputs["running"].splitlines()
                if not line.startswith(RUNNING_HEADER)
            )
            + "\n"
        )
        return {f"running/{FRR_CONF}": running.encode()}

    def revert_lines(self, added: set[KernelItem]) -> list[str]:
        # Reloading the saved running config (not the saved file) brings back exactly what ran,
        # including anything configured by hand that the file never held.
        return [
            *super().revert_lines(added),
            self.reload_command(self.saved_running_dir) + " || status=1",
        ]

    def rollback_problems(self, ports: set[str], saved: set[KernelItem]) -> list[str]:
        saved_running = f"{self.saved_running_dir}/{FRR_CONF}"
        state = self.read_state([saved_running])
        problems = self.kernel_problems(state, ports, saved)
        want = frr_config_lines(state.file(saved_running))
        now = frr_config_lines(state.outputs["running"])
        if now != want:
            diff = unified(now, want, "show-running-config", "saved running config")
            changed = [line for line in diff.splitlines()[2:] if line[:1] in "+-"]
            problems.append("running config differs: " + ", ".join(changed[:4]))
        return problems

    # -- getters ------------------------------------------------------------------------------

    def get_facts(self) -> dict[str, Any]:
        facts = super().get_facts()
        version = self.run(self.vtysh("-c", "show version"), check=False).text.splitlines()
        facts.update(vendor="FRRouting", os_version=version[0] if version else "")
        return facts

    def rib(self, state: DeviceState) -> RouteTable:
        """Static routes zebra installed (IPv4 and IPv6), with their installed next hops."""
        return {**frr_rib_table(state.outputs["rib4"]), **frr_rib_table(state.outputs["rib6"])}


def frr_rib_table(show_route_json: str) -> RouteTable:
    """Static routes zebra installed, with the next hops it installed them through."""
    table: RouteTable = {}
    for dst, entries in (json.loads(show_route_json) if show_route_json.strip() else {}).items():
        for entry in entries:
            if entry.get("protocol") != "static" or not entry.get("installed"):
                continue
            hops = frozenset(
                hop["ip"] for hop in entry.get("nexthops", []) if hop.get("fib") and "ip" in hop
            )
            table[prefix(dst)] = hops
    return table


def frr_compiled_table(conf: str) -> RouteTable:
    table: dict[str, set[str]] = {}
    for line in conf.splitlines():
        match = FRR_ROUTE.match(line.strip())
        if match:
            # A malformed prefix stays as written: the device refuses the candidate for it.
            try:
                dst = prefix(match[1])
            except ValueError:
                dst = match[1]
            table.setdefault(dst, set()).add(match[2])
    return {dst: frozenset(hops) for dst, hops in table.items()}


def frr_candidate_routes(folder: Path) -> RouteTable:
    """The compiled routes of an frr candidate: its folder's frr.conf."""
    return frr_compiled_table((folder / "frr.conf").read_text(encoding="utf-8"))
