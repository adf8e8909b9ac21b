"""What the frr and linux drivers share: a Linux box reached over SSH (paramiko) whose fabric
state is an iproute2 script, with a commit that can be rolled back, and rolls itself back.

Commit contract, identical for both platforms:
  * the candidate is staged in `state_dir/candidate` and checked there;
  * the diff is the device as it runs (kernel addresses and routes read back, and for FRR
    `show running-config`) against the candidate, so changes made by hand show up;
  * commit saves what runs (files, kernel items, running config) and a `revert.sh` that
    restores it, deletes what the candidate no longer has, then applies the candidate;
  * `rollback()` runs `revert.sh` and then reads the device back: it raises unless the device
    holds what was saved;
  * `commit_config(revert_in=N)` starts a timer process on the device, in its own session so
    it outlives the SSH connection, that runs `revert.sh` after N seconds unless
    `confirm_commit()` removes its `pending` marker first.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import paramiko
from napalm.base import NetworkDriver
from napalm.base.exceptions import CommitError, ConnectionException, ReplaceConfigException

from fatpaths_cfg.deploy.reach import connect_in_netns
from fatpaths_cfg.deploy.state import (
    KernelItem,
    RouteTable,
    changed_lines,
    device_addresses,
    device_routes,
    fib_table,
    script_items,
    script_ports,
    unified,
)


class RemoteCommandError(RuntimeError):
    """A command on the device exited non-zero."""


class DeviceReadError(RemoteCommandError):
    """A command reading the device's state failed: the device is unknown, not empty."""


class RollbackError(CommitError):
    """The device does not hold the saved state after a rollback."""


class CommitRefused(CommitError):
    """The device cannot apply a commit faithfully; nothing was changed."""


@dataclass(frozen=True)
class RemoteResult:
    status: int
    stdout: bytes
    stderr: bytes

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8", errors="replace")

    def message(self) -> str:
        detail = (self.stderr or self.stdout).decode("utf-8", errors="replace").strip()
        return detail.splitlines()[-1] if detail else f"exit status {self.status}"


class LinuxBoxDriver(NetworkDriver):
    """optional_args: port (22), key_file, known_hosts (added to the system known hosts; an
    unknown host key is refused), netns (dial from inside this network namespace of the
    deploying machine, where a lab's management network lives), state_dir
    (/var/lib/fatpaths), fabric_ports (the switch's ports: the kernel state read and cleaned
    up is theirs and the loopback's), lldp_socket (lldpcli -u, for an lldpd with its own
    control socket)."""

    script_name = "switch.sh"  # the compiled iproute2 script, as installed in state_dir
    routes_in_kernel_view = True  # no routing daemon: routes via next hops are the script's

    def __init__(
        self,
        hostname: str,
        username: str,
        password: str | None,
        timeout: int = 60,
        optional_args: dict[str, Any] | None = None,
    ) -> None:
        args = optional_args or {}
        self.hostname = hostname
        self.username = username
        self.password = password or None
        self.timeout = timeout
        self.port = int(args.get("port", 22))
        self.key_file: str | None = args.get("key_file")
        self.known_hosts: str | None = args.get("known_hosts")
        # A network namespace on this machine whose network leads to the switch (a lab's).
        self.netns: str | None = args.get("netns")
        self.state_dir = str(args.get("state_dir", "/var/lib/fatpaths"))
        ports = args.get("fabric_ports")
        self.fabric_ports: tuple[str, ...] | None = (
            tuple(ports.split(",") if isinstance(ports, str) else ports) if ports else None
        )
        self.lldp_socket: str | None = args.get("lldp_socket")
        self._client: paramiko.SSHClient | None = None
        self._candidate: dict[str, str] | None = None  # staged name -> text

    # -- session ------------------------------------------------------------------------------

    def open(self) -> None:
        client = paramiko.SSHClient()
        client.load_system_host_keys()
        if self.known_hosts:
            client.load_host_keys(self.known_hosts)
        # Trust on first use would let anyone on the management path receive the fabric config.
        client.set_missing_host_key_policy(paramiko.RejectPolicy())
        try:
            sock = (
                connect_in_netns(self.netns, self.hostname, self.port, self.timeout)
                if self.netns
                else None
            )
            client.connect(
                self.hostname,
                port=self.port,
                username=self.username,
                password=self.password,
                key_filename=self.key_file,
                timeout=self.timeout,
                banner_timeout=self.timeout,
                auth_timeout=self.timeout,
                look_for_keys=False,
                allow_agent=False,
                sock=sock,
            )
        except (paramiko.SSHException, OSError) as exc:
            client.close()
            raise ConnectionException(
                f"{self.hostname}:{self.port}: {exc or type(exc).__name__}"
            ) from exc
        self._client = client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def is_alive(self) -> dict[str, bool]:
        transport = self._client.get_transport() if self._client else None
        return {"is_alive": bool(transport and transport.is_active())}

    def run(self, command: str, stdin: bytes | None = None, check: bool = True) -> RemoteResult:
        if self._client is None:
            raise ConnectionException(f"{self.hostname}: not connected (call open() first)")
        channel_in, channel_out, channel_err = self._client.exec_command(
            command, timeout=self.timeout
        )
        if stdin is not None:
            channel_in.write(stdin)
        channel_in.channel.shutdown_write()
        out = channel_out.read()
        err = channel_err.read()
        result = RemoteResult(channel_out.channel.recv_exit_status(), out, err)
        if check and result.status != 0:
            raise RemoteCommandError(f"{command.split()[0]}: {result.message()}")
        return result

    def run_script(self, script: str) -> RemoteResult:
        """A long script goes through stdin: a command line is limited to 128 KiB per argument,
        and the file contents a commit writes can be larger."""
        return self.run("sh -s", stdin=script.encode())

    def read_file(self, path: str) -> bytes:
        """The file's bytes; b"" when it does not exist (a first deploy compares to nothing)."""
        quoted = shlex.quote(path)
        return self.run(f"if [ -e {quoted} ]; then cat {quoted}; fi").stdout

    # -- paths --------------------------------------------------------------------------------

    def managed_files(self) -> dict[str, str]:
        """Staged name -> where it runs from on the device."""
        return {self.script_name: f"{self.state_dir}/{self.script_name}"}

    @property
    def candidate_dir(self) -> str:
        return f"{self.state_dir}/candidate"

    @property
    def rollback_dir(self) -> str:
        return f"{self.state_dir}/rollback"

    @property
    def pending_marker(self) -> str:
        return f"{self.state_dir}/pending"

    # -- reading the device -------------------------------------------------------------------

    def ports_for(self, *scripts: str) -> set[str]:
        if self.fabric_ports is not None:
            return set(self.fabric_ports)
        return set().union(*(script_ports(s) for s in scripts))

    def state_commands(self) -> dict[str, str]:
        """What one read of the device runs (one SSH round trip for all of it)."""
        return {
            "addr": "ip -j addr show",
            "route4": "ip -4 -j route show",
            "route6": "ip -6 -j route show",
        }

    # The parts of state_commands that get_route_tables needs: a read between rounds skips
    # the rest (FRR's `show running-config` asks every daemon).
    route_state_keys: tuple[str, ...] = ("route4", "route6")
    # Parts only route reads need (a routing daemon's table): a whole read leaves them out.
    route_only_keys: tuple[str, ...] = ()

    def run_commands(self, commands: dict[str, str]) -> dict[str, RemoteResult]:
        """Run each command in its own subshell, in order, all in one SSH round trip, so that
        none can end the others early: each one's exit status, stdout and stderr."""
        separator = f"--fatpaths-{secrets.token_hex(8)}--"
        # Per command: its stdout, a separator carrying its exit status, its stderr, a separator.
        script = (
            "err=$(mktemp) || exit 1\n"
            + "".join(
                f'( {command}\n) 2>"$err"; status=$?; echo; echo {separator}:$status; '
                f'cat "$err"; echo; echo {separator}\n'
                for command in commands.values()
            )
            + 'rm -f "$err"\n'
        )
        parts = re.split(rf"\n{re.escape(separator)}(?::(\d+))?\n", self.run_script(script).text)
        if len(parts) != 4 * len(commands) + 1:
            raise DeviceReadError(
                f"reading the device state: {(len(parts) - 1) // 4} answers to "
                f"{len(commands)} commands"
            )
        return {
            key: RemoteResult(
                int(parts[4 * i + 1]), parts[4 * i].encode(), parts[4 * i + 2].encode()
            )
            for i, key in enumerate(commands)
        }

    def read_state(
        self,
        files: Iterable[str] = (),
        keys: Iterable[str] | None = None,
        before: dict[str, str] | None = None,
    ) -> DeviceState:
        """The device's tables and the given files, read in one command; `before` runs first
        in the same round trip (a round's route changes, read back at once), and its results
        are in the state's `before` without failing the read.

        A command that fails (vtysh finding no daemon, an `ip` the device lacks) raises
        DeviceReadError with its own reason: its empty output taken as an empty table would
        show a running switch as blank, the whole candidate as new."""
        commands = dict(self.state_commands())
        wanted = set(keys) if keys is not None else set(commands) - set(self.route_only_keys)
        commands = {key: command for key, command in commands.items() if key in wanted}
        for path in files:
            quoted = shlex.quote(path)
            commands[f"file:{path}"] = f"if [ -e {quoted} ]; then cat {quoted}; fi"
        first = {f"before:{key}": command for key, command in (before or {}).items()}
        results = self.run_commands({**first, **commands})
        outputs = {}
        for key, command in commands.items():
            result = results[key]
            if result.status != 0:
                raise DeviceReadError(f"{command}: {result.message()}")
            outputs[key] = result.text
        return DeviceState(outputs, {key[7:]: results[key] for key in first})

    def kernel_items(self, state: DeviceState, ports: set[str]) -> set[KernelItem]:
        items = device_addresses(state.outputs["addr"], ports)
        for key in ("route4", "route6"):
            items |= device_routes(state.outputs[key], ports, self.routes_in_kernel_view)
        return items

    def fib(self, state: DeviceState, ports: set[str]) -> RouteTable:
        table: RouteTable = {}
        for key in ("route4", "route6"):
            table.update(fib_table(state.outputs[key], ports))
        return table

    def rib(self, state: DeviceState) -> RouteTable | None:
        """A routing daemon's table; None on a box whose only table is the kernel's."""
        return None

    def get_route_tables(self) -> tuple[RouteTable | None, RouteTable]:
        """(RIB or None, FIB): static routes with the next hops they are installed through."""
        _, rib, fib = self.change_then_read({})
        return rib, fib

    def change_then_read(
        self, changes: dict[str, str]
    ) -> tuple[dict[str, RemoteResult], RouteTable | None, RouteTable]:
        """Run `changes` (shell commands, in order), then read the route tables, in one round
        trip: an ordered deploy's round costs one session per switch, not one for the push and
        one for its read-back. A change that fails does not stop the read; its result says so."""
        script_path = self.managed_files()[self.script_name]
        if self.fabric_ports is not None:
            state = self.read_state(keys=self.route_state_keys, before=changes)
            ports = set(self.fabric_ports)
        else:
            state = self.read_state([script_path], keys=self.route_state_keys, before=changes)
            ports = self.ports_for(state.file(script_path))
        return state.before, self.rib(state), self.fib(state, ports)

    def get_fib(self) -> RouteTable:
        """The kernel's routes via next hops out of the fabric ports."""
        return self.get_route_tables()[1]

    def get_static_rib(self) -> RouteTable | None:
        return self.get_route_tables()[0]

    # -- configuration ------------------------------------------------------------------------

    def load_replace_candidate(
        self, filename: str | None = None, config: str | None = None
    ) -> None:
        """Stage a full replacement: a switch's compiled file or folder, or the script text."""
        self.stage_candidate(filename, config, read_routes=False)

    def stage_candidate(
        self, filename: str | None = None, config: str | None = None, read_routes: bool = True
    ) -> tuple[RouteTable | None, RouteTable]:
        """load_replace_candidate, and the route tables (RIB or None, FIB) read in the same
        round trip (empty without `read_routes`): staging moves no route, so an ordered deploy
        reads OLD back while it stages NEW."""
        files = self.candidate_files(filename, config)
        write = f"rm -rf {shlex.quote(self.candidate_dir)} && " + write_files_command(
            {f"{self.candidate_dir}/{name}": content for name, content in files.items()}
        )
        # Refused here, a bad file never replaces a working one.
        steps = {"write": write, "check": self.check_command()}
        try:
            if read_routes:
                results, rib, fib = self.change_then_read(steps)
            else:
                results, rib, fib = self.run_commands(steps), None, {}
        except RemoteCommandError as exc:
            raise ReplaceConfigException(str(exc)) from exc
        if results["write"].status != 0:
            raise ReplaceConfigException(f"writing the candidate: {results['write'].message()}")
        if results["check"].status != 0:
            raise ReplaceConfigException(self.rejection(results["check"]))
        self._candidate = {
            name: content.decode("utf-8", "replace") for name, content in files.items()
        }
        return rib, fib

    @property
    def _candidate_loaded(self) -> bool:
        return self._candidate is not None

    def candidate_files(self, filename: str | None, config: str | None) -> dict[str, bytes]:
        if (filename is None) == (config is None):
            raise ReplaceConfigException("give exactly one of filename and config")
        if config is not None:
            return {self.script_name: config.encode()}
        path = Path(str(filename))
        if not path.is_file():
            raise ReplaceConfigException(f"{path}: no such file")
        return {self.script_name: path.read_bytes()}

    def check_command(self) -> str:
        """A shell command that exits non-zero when the device refuses the staged candidate."""
        return f"sh -n {shlex.quote(self.candidate_dir + '/' + self.script_name)}"

    def rejection(self, check: RemoteResult) -> str:
        """Why the device refused the candidate, from check_command's result."""
        return f"{self.check_command().split()[0]}: {check.message()}"

    def load_merge_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        raise NotImplementedError("fatpaths replaces whole configurations; merging is not offered")

    def compare_config(self) -> str:
        """The device as it runs against the candidate ('' when they agree)."""
        if self._candidate is None:
            return ""
        try:
            state = self.read_state()
        except DeviceReadError:
            # A dry run leaves nothing staged, also on a device it could not read.
            self.discard_config()
            raise
        return self.diff_against(state, self._candidate)

    def diff_against(self, state: DeviceState, files: dict[str, str]) -> str:
        script = files[self.script_name]
        running = sorted(i.replace() for i in self.kernel_items(state, self.ports_for(script)))
        wanted = sorted(item.replace() for item in script_items(script))
        return unified(running, wanted, "kernel", self.script_name)

    def installed_drift(self) -> str:
        """The device against the files it was last committed with: '' right after a commit
        that took, and whatever was changed by hand since."""
        paths = self.managed_files()
        state = self.read_state(paths.values())
        return self.diff_against(state, {name: state.file(path) for name, path in paths.items()})

    def discard_config(self) -> None:
        self.run(f"rm -rf {shlex.quote(self.candidate_dir)}")
        self._candidate = None

    def preflight_commands(self) -> dict[str, str]:
        """Shell tests that must pass before a commit, with the refusal each failure means."""
        return {}

    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        """Save what runs, apply the candidate; on any failure what ran before comes back."""
        if self._candidate is None:
            raise CommitError("no candidate loaded (call load_replace_candidate first)")
        if revert_in is not None and revert_in < 1:
            raise CommitError("revert_in must be at least one second")
        if self.has_pending_commit():
            raise CommitError("a commit is waiting for confirmation: confirm or roll it back")
        for test, refusal in self.preflight_commands().items():
            if self.run(test, check=False).status != 0:
                raise CommitRefused(refusal)
        candidate = self._candidate
        try:
            state = self.read_state()
            self.save_rollback(state, candidate)
        except RemoteCommandError as exc:
            raise CommitError(f"could not save the running state: {exc}") from exc
        try:
            self.run(self.apply_commands(self.candidate_dir, state, candidate[self.script_name]))
        except RemoteCommandError as exc:
            try:
                self.rollback()
            except (RemoteCommandError, RollbackError) as again:
                raise CommitError(f"{exc}; rollback failed too: {again}") from exc
            raise CommitError(f"{exc} (previous state restored and read back)") from exc
        if revert_in is not None:
            self.arm_revert_timer(revert_in)
        self.discard_config()

    def install_candidate(self) -> tuple[RouteTable | None, RouteTable]:
        """Put the staged files in place without applying them, for a device that already runs
        them: after an ordered deploy's rounds every route is in place, and a reload would only
        redo that work. The running state is read first and must equal the candidate; the
        rollback copy is saved as by a commit; the installed files are read back (digests).
        Returns the route tables (RIB or None, FIB) read right after, in the same round trip."""
        if self._candidate is None:
            raise CommitError("no candidate loaded (call load_replace_candidate first)")
        candidate = self._candidate
        try:
            state = self.read_state()
            drift = self.diff_against(state, candidate)
            if drift:
                raise CommitRefused(
                    "the device does not run the candidate ("
                    + ", ".join(changed_lines(drift)[:3])
                    + "), so "
                    "installing it alone would leave files and running state apart"
                )
            # One round trip (on a loaded machine each costs more than the work it carries):
            # save, install, read the installed files' digests back, and the route tables.
            paths = self.managed_files()
            results, rib, fib = self.change_then_read(
                {
                    "install": self.rollback_script(state, candidate)
                    + " && "
                    + self.install_files(self.candidate_dir)
                    + " && sha256sum "
                    + " ".join(shlex.quote(paths[name]) for name in sorted(candidate))
                }
            )
        except RemoteCommandError as exc:
            raise CommitError(f"could not install the files: {exc}") from exc
        if results["install"].status != 0:
            raise CommitError(f"could not install the files: {results['install'].message()}")
        read_back: dict[str, str] = {}
        for line in results["install"].text.splitlines():
            digest, _, path = line.partition("  ")  # sha256sum: "<digest>  <path>"
            read_back[path] = digest
        for name in sorted(candidate):
            want = hashlib.sha256(candidate[name].encode()).hexdigest()
            if read_back.get(paths[name]) != want:
                raise CommitError(f"{paths[name]}: the installed file reads back otherwise")
        self.discard_config()
        return rib, fib

    def apply_commands(self, source_dir: str, state: DeviceState, script: str) -> str:
        """Install the files of source_dir and apply them, removing kernel items they lack."""
        stale = self.kernel_items(state, self.ports_for(script)) - script_items(script)
        lines = [self.install_files(source_dir)]
        # Routes first: an address removed first would take its routes' next hops with it.
        lines += [
            f"{{ {item.delete()} 2>/dev/null || :; }}"
            for item in sorted(stale, key=lambda i: i.kind != "route")
        ]
        lines.append(f"sh {shlex.quote(self.managed_files()[self.script_name])}")
        return " && ".join(lines)

    def install_files(self, source_dir: str) -> str:
        targets = self.managed_files()
        folders = sorted({str(Path(p).parent) for p in targets.values()} | {self.state_dir})
        lines = ["mkdir -p " + " ".join(shlex.quote(f) for f in folders)]
        for name, path in targets.items():
            source = shlex.quote(f"{source_dir}/{name}")
            target = shlex.quote(path)
            temporary = shlex.quote(path + ".fatpaths-new")
            # Copy then rename: a daemon restarting half-way never reads half a file. The
            # owner and mode of the file being replaced are kept (frr:frr 0640 on Debian).
            lines.append(
                f"if [ -e {source}.absent ]; then rm -f {target}; else "
                f"cp {source} {temporary} && "
                f"{{ [ ! -e {target} ] || chown --reference={target} {temporary}; }} && "
                f"{{ [ ! -e {target} ] || chmod --reference={target} {temporary}; }} && "
                f"mv -f {temporary} {target}; fi"
            )
        return " && ".join(lines)

    # -- rollback -----------------------------------------------------------------------------

    def save_rollback(self, state: DeviceState, candidate: dict[str, str]) -> None:
        self.run_script(self.rollback_script(state, candidate))

    def rollback_script(self, state: DeviceState, candidate: dict[str, str]) -> str:
        """Save what runs (files, kernel items, what else the platform restores) as the rollback
        copy, replaced in one rename so that a copy is always whole."""
        new = self.rollback_dir + ".new"
        quoted = shlex.quote(new)
        lines = [f"rm -rf {quoted}", f"mkdir -p {quoted}"]
        for name, path in self.managed_files().items():
            running = shlex.quote(path)
            # An absent file is remembered as absent, so rollback removes what commit created.
            lines.append(
                f"if [ -e {running} ]; then cp -p {running} {quoted}/{name}; "
                f"else : > {quoted}/{name}.absent; fi"
            )
        script = candidate[self.script_name]
        saved = self.kernel_items(state, self.ports_for(script))
        files = {
            f"{new}/kernel.sh": _script(sorted(i.replace() for i in saved)),
            f"{new}/revert.sh": _script(self.revert_lines(script_items(script) - saved)),
            **{f"{new}/{name}": content for name, content in self.saved_extra(state).items()},
        }
        lines.append(write_files_command(files))
        lines.append(
            f"rm -rf {shlex.quote(self.rollback_dir)} && mv {quoted} "
            f"{shlex.quote(self.rollback_dir)}"
        )
        return " && ".join(lines)

    def saved_extra(self, state: DeviceState) -> dict[str, bytes]:
        """Whatever else a platform must restore (FRR: its running config), by relative path."""
        return {}

    def revert_lines(self, added: set[KernelItem]) -> list[str]:
        """revert.sh: undo what the commit adds, put back the saved files and kernel items.
        Each step goes on after a failure: a half-reverted switch is worse than a checked one."""
        lines = [
            f"{item.delete()} 2>/dev/null || :"
            for item in sorted(added, key=lambda i: i.kind != "route")
        ]
        lines.append(self.install_files(self.rollback_dir) + " || status=1")
        lines.append(f"sh {shlex.quote(self.rollback_dir + '/kernel.sh')} || status=1")
        return lines

    def rollback(self) -> None:
        """Back to what ran before the last commit, then read the device back."""
        self.cancel_revert_timer()
        kernel_sh = f"{self.rollback_dir}/kernel.sh"
        script_path = self.managed_files()[self.script_name]
        state = self.read_state([kernel_sh, script_path, f"{self.rollback_dir}/revert.sh"])
        if not state.file(f"{self.rollback_dir}/revert.sh"):
            raise RemoteCommandError(f"no rollback copy in {self.rollback_dir}")
        saved = script_items(state.file(kernel_sh))
        ports = self.ports_for(*(i.replace() for i in saved), state.file(script_path))
        stale = self.kernel_items(state, ports) - saved
        deletes = [
            f"{{ {item.delete()} 2>/dev/null || :; }}"
            for item in sorted(stale, key=lambda i: i.kind != "route")
        ]
        self.run(" && ".join([*deletes, f"sh {shlex.quote(self.rollback_dir + '/revert.sh')}"]))
        problems = self.rollback_problems(ports, saved)
        if problems:
            raise RollbackError(
                "after rollback the device differs from the saved state: " + "; ".join(problems)
            )

    def rollback_problems(self, ports: set[str], saved: set[KernelItem]) -> list[str]:
        return self.kernel_problems(self.read_state(), ports, saved)

    def kernel_problems(
        self, state: DeviceState, ports: set[str], saved: set[KernelItem]
    ) -> list[str]:
        now = self.kernel_items(state, ports)
        problems = []
        if now - saved:
            problems.append("kernel has " + ", ".join(i.replace() for i in sorted(now - saved)))
        if saved - now:
            problems.append("kernel lacks " + ", ".join(i.replace() for i in sorted(saved - now)))
        return problems

    # -- commit confirm -----------------------------------------------------------------------

    def arm_revert_timer(self, seconds: int) -> None:
        marker = shlex.quote(self.pending_marker)
        timer = (
            f"sleep {int(seconds)}; "
            # mv is atomic: either confirm_commit removes the marker or the timer takes it.
            f"mv {marker} {marker}.firing 2>/dev/null || exit 0; "
            f"sh {shlex.quote(self.rollback_dir + '/revert.sh')}; rm -f {marker}.firing"
        )
        log = shlex.quote(self.state_dir + "/revert.log")
        self.run(f"setsid sh -c {shlex.quote(timer)} </dev/null >{log} 2>&1 & echo $! > {marker}")

    def has_pending_commit(self) -> bool:
        return self.run(f"test -e {shlex.quote(self.pending_marker)}", check=False).status == 0

    def confirm_commit(self) -> None:
        if not self.cancel_revert_timer():
            raise CommitError(
                "no commit is waiting for confirmation (the switch may have reverted already)"
            )

    def cancel_revert_timer(self) -> bool:
        marker = shlex.quote(self.pending_marker)
        # The timer leads its own process group (setsid): killing the group takes its sleep too.
        done = self.run(
            f"pid=$(cat {marker} 2>/dev/null) && rm {marker} && "
            f"{{ kill -- -$pid 2>/dev/null || :; }}",
            check=False,
        )
        return done.status == 0

    # -- getters ------------------------------------------------------------------------------

    def get_facts(self) -> dict[str, Any]:
        uptime = self.run("cat /proc/uptime").text.split()
        return {
            "hostname": self.run("hostname").text.strip(),
            "fqdn": self.run("hostname -f", check=False).text.strip(),
            "vendor": "Linux",
            "model": "Linux " + self.run("uname -r").text.strip(),
            "os_version": self.run("uname -v").text.strip(),
            "serial_number": "",
            "uptime": float(uptime[0]) if uptime else -1.0,
            "interface_list": sorted(self.get_interfaces()),
        }

    def get_interfaces(self) -> dict[str, dict[str, Any]]:
        links = json.loads(self.run("ip -j link show").text or "[]")
        return {
            link["ifname"]: {
                "is_up": link.get("operstate") in ("UP", "UNKNOWN"),
                "is_enabled": "UP" in link.get("flags", []),
                "description": link.get("ifalias", ""),
                "last_flapped": -1.0,
                "speed": -1.0,
                "mtu": int(link.get("mtu", 0)),
                "mac_address": link.get("address", ""),
            }
            for link in links
        }

    def get_lldp_neighbors(self) -> dict[str, list[dict[str, str]]]:
        """NAPALM's shape: local port -> [{hostname, port}], read from lldpd."""
        socket = f" -u {shlex.quote(self.lldp_socket)}" if self.lldp_socket else ""
        text = self.run(f"lldpcli{socket} -f json0 show neighbors").text
        return lldp_neighbors(text)


def lldp_neighbors(json0: str) -> dict[str, list[dict[str, str]]]:
    """lldpcli's json0 format (every level a list, whatever the count) to NAPALM's shape, the
    youngest neighbour of a port first: after a re-cabling, the previous cable's neighbour
    stays listed until its TTL runs out."""
    data = json.loads(json0) if json0.strip() else {}
    found: dict[str, list[tuple[int, dict[str, str]]]] = {}
    for lldp in data.get("lldp", []):
        for interface in lldp.get("interface", []):
            for chassis in interface.get("chassis", [{}]):
                names = chassis.get("name", [])
                hostname = names[0]["value"] if names else ""
                for port in interface.get("port", []):
                    ids = port.get("id", [])
                    descr = port.get("descr", [])
                    name = (
                        ids[0]["value"]
                        if ids and ids[0].get("type") == "ifname"
                        else (descr[0]["value"] if descr else (ids[0]["value"] if ids else ""))
                    )
                    found.setdefault(interface["name"], []).append(
                        (
                            _age_seconds(interface.get("age", "")),
                            {"hostname": hostname, "port": name},
                        )
                    )
    return {
        port: [n for _, n in sorted(entries, key=lambda e: e[0])] for port, entries in found.items()
    }


def _age_seconds(age: str) -> int:
    """'1 day, 02:03:04' -> 93784; unknown ages sort last."""
    match = re.match(r"^(\d+) days?, (\d+):(\d+):(\d+)$", age.strip())
    if not match:
        return 2**31
    days, hours, minutes, seconds = (int(g) for g in match.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


@dataclass(frozen=True)
class DeviceState:
    """Outputs of one read of the device, by what was asked, and the results of the changes
    run before it in the same round trip."""

    outputs: dict[str, str]
    before: dict[str, RemoteResult] = field(default_factory=dict)

    def file(self, path: str) -> str:
        return self.outputs[f"file:{path}"]


def write_files_command(files: dict[str, bytes]) -> str:
    """One command writing every file (base64, so no content can end a here-document)."""
    folders = sorted({str(Path(p).parent) for p in files})
    lines = ["mkdir -p " + " ".join(shlex.quote(f) for f in folders)]
    for path, content in files.items():
        encoded = base64.b64encode(content).decode("ascii")
        lines.append(f"echo {encoded} | base64 -d > {shlex.quote(path)}")
    return " && ".join(lines)


def _script(lines: list[str]) -> bytes:
    return ("#!/bin/sh\nstatus=0\n" + "\n".join(lines) + "\nexit $status\n").encode()
