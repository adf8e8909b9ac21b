"""A NAPALM driver for a Linux box running FRR, over SSH (paramiko).

NAPALM ships no driver for plain FRR, so this one speaks to the box the way an operator would:
files are staged with `cat`, checked with `vtysh --dryrun`, applied with `frr-reload.py` (or
`vtysh -f` where the script is missing) and the previous files are kept for `rollback()`.

The managed files are the compiled `frr.conf` (in `frr_dir`) and `interfaces.sh` (in
`state_dir`, beside the staged `candidate/` and the `rollback/` copy). All paths are optional
arguments so that a box with FRR under another prefix, or a test device, keeps its /etc/frr.
"""

from __future__ import annotations

import difflib
import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import paramiko
from napalm.base import NetworkDriver
from napalm.base.exceptions import (
    CommitError,
    ConnectionException,
    ReplaceConfigException,
)

FRR_CONF = "frr.conf"
INTERFACES = "interfaces.sh"
MANAGED = (FRR_CONF, INTERFACES)


class RemoteCommandError(RuntimeError):
    """A command on the device exited non-zero."""


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


class FrrDriver(NetworkDriver):
    """`frr` platform: FRR's integrated frr.conf plus the compiled iproute2 interfaces script.

    optional_args: port (22), key_file, known_hosts (added to the system known hosts; an
    unknown host key is refused), frr_dir (/etc/frr), state_dir (/var/lib/fatpaths),
    vty_socket (vtysh --vty_socket, for FRR with its own socket directory),
    frr_reload (/usr/lib/frr/frr-reload.py).
    """

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
        self.frr_dir = str(args.get("frr_dir", "/etc/frr"))
        self.state_dir = str(args.get("state_dir", "/var/lib/fatpaths"))
        self.vty_socket: str | None = args.get("vty_socket")
        self.frr_reload = str(args.get("frr_reload", "/usr/lib/frr/frr-reload.py"))
        self._client: paramiko.SSHClient | None = None
        self._candidate_loaded = False

    # -- session ------------------------------------------------------------------------------

    def open(self) -> None:
        client = paramiko.SSHClient()
        client.load_system_host_keys()
        if self.known_hosts:
            client.load_host_keys(self.known_hosts)
        # Trust on first use would let anyone on the management path receive the fabric config.
        client.set_missing_host_key_policy(paramiko.RejectPolicy())
        try:
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

    # -- paths and helpers --------------------------------------------------------------------

    def running_path(self, name: str) -> str:
        return f"{self.frr_dir}/{name}" if name == FRR_CONF else f"{self.state_dir}/{name}"

    @property
    def candidate_dir(self) -> str:
        return f"{self.state_dir}/candidate"

    @property
    def rollback_dir(self) -> str:
        return f"{self.state_dir}/rollback"

    def vtysh(self, *args: str) -> str:
        socket = f" --vty_socket {shlex.quote(self.vty_socket)}" if self.vty_socket else ""
        return "vtysh" + socket + "".join(f" {shlex.quote(a)}" for a in args)

    def read_file(self, path: str) -> bytes:
        """The file's bytes; b"" when it does not exist (a first deploy compares to nothing)."""
        quoted = shlex.quote(path)
        return self.run(f"if [ -e {quoted} ]; then cat {quoted}; fi").stdout

    def write_file(self, path: str, content: bytes) -> None:
        self.run(f"cat > {shlex.quote(path)}", stdin=content)

    # -- configuration ------------------------------------------------------------------------

    def load_replace_candidate(
        self, filename: str | None = None, config: str | None = None
    ) -> None:
        """Stage a full replacement: a switch's compiled directory (or its frr.conf), or text.

        `config` text replaces frr.conf only; interfaces.sh then stays as it runs now.
        """
        files = self._candidate_files(filename, config)
        quoted = shlex.quote(self.candidate_dir)
        try:
            self.run(f"rm -rf {quoted} && mkdir -p {quoted}")
            for name, content in files.items():
                self.write_file(f"{self.candidate_dir}/{name}", content)
            # Refused here, a bad file never replaces a working one.
            check = self.run(self.vtysh("--dryrun", "-f", f"{self.candidate_dir}/{FRR_CONF}"),
                             check=False)
            if check.status != 0:
                detail = (check.stdout + check.stderr).decode("utf-8", "replace").strip()
                raise ReplaceConfigException(f"vtysh rejects the candidate frr.conf: {detail}")
            self.run(f"sh -n {shlex.quote(self.candidate_dir + '/' + INTERFACES)}")
        except RemoteCommandError as exc:
            raise ReplaceConfigException(str(exc)) from exc
        self._candidate_loaded = True

    def _candidate_files(self, filename: str | None, config: str | None) -> dict[str, bytes]:
        if (filename is None) == (config is None):
            raise ReplaceConfigException("give exactly one of filename and config")
        if config is not None:
            return {FRR_CONF: config.encode(), INTERFACES: self.read_file(
                self.running_path(INTERFACES))}
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

    def load_merge_candidate(
        self, filename: str | None = None, config: str | None = None
    ) -> None:
        raise NotImplementedError("the frr driver replaces whole files; merging is not offered")

    def compare_config(self) -> str:
        if not self._candidate_loaded:
            return ""
        parts: list[str] = []
        for name in MANAGED:
            running = self.read_file(self.running_path(name)).decode("utf-8", "replace")
            candidate = self.read_file(f"{self.candidate_dir}/{name}").decode("utf-8", "replace")
            parts.extend(
                difflib.unified_diff(
                    running.splitlines(keepends=True),
                    candidate.splitlines(keepends=True),
                    f"running/{name}",
                    f"candidate/{name}",
                )
            )
        return "".join(parts)

    def discard_config(self) -> None:
        self.run(f"rm -rf {shlex.quote(self.candidate_dir)}")
        self._candidate_loaded = False

    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        """Install the candidate and apply it; on any failure the previous files come back."""
        if not self._candidate_loaded:
            raise CommitError("no candidate loaded (call load_replace_candidate first)")
        if revert_in is not None:
            raise NotImplementedError("commit confirm is not offered by the frr driver")
        try:
            self._save_rollback()
        except RemoteCommandError as exc:
            raise CommitError(f"could not save the running files: {exc}") from exc
        try:
            self._install_from(self.candidate_dir)
            self._apply()
        except RemoteCommandError as exc:
            try:
                self.rollback()
            except RemoteCommandError as again:
                raise CommitError(f"{exc}; rollback failed too: {again}") from exc
            raise CommitError(f"{exc} (previous files restored and applied)") from exc
        self.discard_config()

    def rollback(self) -> None:
        """Back to the files that ran before the last commit, and apply them."""
        quoted = shlex.quote(self.rollback_dir)
        if self.run(f"test -d {quoted}", check=False).status != 0:
            raise RemoteCommandError(f"no rollback copy in {self.rollback_dir}")
        self._install_from(self.rollback_dir)
        self._apply()

    def _save_rollback(self) -> None:
        new = shlex.quote(self.rollback_dir + ".new")
        lines = [f"rm -rf {new}", f"mkdir -p {new}"]
        for name in MANAGED:
            running = shlex.quote(self.running_path(name))
            # An absent file is remembered as absent, so rollback removes what commit created.
            lines.append(
                f"if [ -e {running} ]; then cp -p {running} {new}/{name}; "
                f"else : > {new}/{name}.absent; fi"
            )
        lines += [f"rm -rf {shlex.quote(self.rollback_dir)}",
                  f"mv {new} {shlex.quote(self.rollback_dir)}"]
        self.run(" && ".join(lines))

    def _install_from(self, source_dir: str) -> None:
        lines = [f"mkdir -p {shlex.quote(self.frr_dir)} {shlex.quote(self.state_dir)}"]
        for name in MANAGED:
            source = shlex.quote(f"{source_dir}/{name}")
            target = shlex.quote(self.running_path(name))
            temporary = shlex.quote(self.running_path(name) + ".fatpaths-new")
            # Copy then rename: a daemon restarting half-way never reads half a file. The
            # owner and mode of the file being replaced are kept (frr:frr 0640 on Debian).
            lines.append(
                f"if [ -e {source}.absent ]; then rm -f {target}; else "
                f"cp {source} {temporary} && "
                f"{{ [ ! -e {target} ] || chown --reference={target} {temporary}; }} && "
                f"{{ [ ! -e {target} ] || chmod --reference={target} {temporary}; }} && "
                f"mv -f {temporary} {target}; fi"
            )
        self.run(" && ".join(lines))

    def _apply(self) -> None:
        script = shlex.quote(self.running_path(INTERFACES))
        self.run(f"if [ -e {script} ]; then sh {script}; fi")
        conf = self.running_path(FRR_CONF)
        if self.run(f"test -e {shlex.quote(conf)}", check=False).status != 0:
            return
        reload = shlex.quote(self.frr_reload)
        if self.run(f"test -x {reload}", check=False).status == 0:
            socket = f" --vty_socket {shlex.quote(self.vty_socket)}" if self.vty_socket else ""
            # The file reloaded is the installed one in --confdir, so frr-reload.py does not
            # `write` the running config over it: the bytes stay the compiled ones.
            self.run(
                f"{reload} --reload --stdout --log-level error{socket} "
                f"--confdir {shlex.quote(self.frr_dir)} --rundir {shlex.quote(self.state_dir)} "
                f"{shlex.quote(conf)}"
            )
        else:
            # Without frr-reload.py, lines removed from frr.conf stay in the running config.
            self.run(self.vtysh("-f", conf))

    # -- getters ------------------------------------------------------------------------------

    def get_facts(self) -> dict[str, Any]:
        version = self.run(self.vtysh("-c", "show version"), check=False).text.splitlines()
        uptime = self.run("cat /proc/uptime").text.split()
        interfaces = sorted(self.get_interfaces())
        return {
            "hostname": self.run("hostname").text.strip(),
            "fqdn": self.run("hostname -f", check=False).text.strip(),
            "vendor": "FRRouting",
            "model": "Linux " + self.run("uname -r").text.strip(),
            "os_version": version[0] if version else "",
            "serial_number": "",
            "uptime": float(uptime[0]) if uptime else -1.0,
            "interface_list": interfaces,
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

    def installed_static_routes(self) -> set[str]:
        """Prefixes of static routes zebra has installed (IPv4 and IPv6)."""
        prefixes: set[str] = set()
        for family in ("ip", "ipv6"):
            text = self.run(self.vtysh("-c", f"show {family} route static json")).text
            for prefix, entries in (json.loads(text) if text.strip() else {}).items():
                if any(entry.get("installed") for entry in entries):
                    prefixes.add(prefix)
        return prefixes
