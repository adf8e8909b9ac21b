"""How to reach each switch: address, SSH port, user and where its secret comes from.

Addresses come from the compiled fabric (the inventory's per-switch `mgmt:` or its `mgmt:`
pool and map) or from a devices file, which may also give ports, users and secrets per switch:

    defaults: {port: 22, username: admin, password_env: FABRIC_PASSWORD}
    pool: 10.255.0.0/24            # optional: switch i (fabric order) gets host address i+1
    devices:
      leaf1: {host: 10.255.0.11, port: 2222, key_file: keys/leaf1}
      leaf2: {host: 10.255.0.12, frr_dir: /opt/frr/etc}  # device paths differ, too
      leaf3: {host: 198.18.0.5, netns: fp-1a2b3c-mgmt, known_hosts: lab/known_hosts}

A secret is named, never written: an environment variable (`password_env`), a file holding the
password (`password_file`) or an SSH key (`key_file`). Nothing here is printed or saved.
"""

from __future__ import annotations

import ipaddress
import itertools
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from fatpaths_cfg.errors import ErrorCollector, UserError, UserErrors
from fatpaths_cfg.inventory.load import validation_errors
from fatpaths_cfg.inventory.schema import IPAddressText, IPNetworkText, Name
from fatpaths_cfg.inventory.yaml_source import SourceMap, load_yaml

PATH_FIELDS = ("state_dir", "frr_dir", "vty_socket", "lldp_socket")
# What a path on a device may hold: nothing a remote shell would expand or split.
DEVICE_PATH = re.compile(r"/[A-Za-z0-9_.+@%=,:/-]*")
# Permission bits of a key file that ssh refuses (readable or writable by others).
KEY_FILE_OPEN_BITS = 0o077
# How this machine reaches the switch over SSH: a known_hosts file of its host keys and the
# network namespace the connection starts in (a lab's management namespace).
REACH_FIELDS = ("known_hosts", "netns")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Access(_Strict):
    """How to log in; every field may be left to the defaults or the command line."""

    host: IPAddressText | None = None
    port: Annotated[int, Field(ge=1, le=65535)] | None = None
    username: str | None = None
    password_env: str | None = None
    password_file: str | None = None
    key_file: str | None = None
    # Where the device keeps things, when it differs from the driver's defaults.
    state_dir: str | None = None
    frr_dir: str | None = None
    vty_socket: str | None = None
    lldp_socket: str | None = None
    # How to reach the device from this machine (SSH platforms): its host keys, and the
    # network namespace to dial from when its management network lives in one (a lab's).
    known_hosts: str | None = None
    netns: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+$")] | None = None

    @field_validator(*PATH_FIELDS)
    @classmethod
    def _device_path(cls, value: str | None) -> str | None:
        """Paths on the device reach its shell (`vtysh`, `cp`, `mv` over SSH): absolute, no
        `..`, and none of the characters a shell reads as syntax."""
        if value is None:
            return value
        if not value.startswith("/"):
            raise ValueError(f"{value!r} is not an absolute path (start it with /)")
        if ".." in value.split("/"):
            raise ValueError(f"{value!r} climbs out with '..'; give the path itself")
        if not DEVICE_PATH.fullmatch(value):
            bad = sorted({c for c in value if not DEVICE_PATH.fullmatch("/" + c)})
            raise ValueError(
                f"{value!r} holds {' '.join(repr(c) for c in bad)}: a device path may hold "
                "letters, digits and . _ - + @ % = , : /"
            )
        return value


class DevicesFile(_Strict):
    defaults: Access = Access()
    pool: IPNetworkText | None = None
    devices: dict[Name, Access] = {}


@dataclass(frozen=True)
class Credentials:
    username: str
    password: str | None = None
    key_file: Path | None = None


@dataclass(frozen=True)
class DeviceAccess:
    host: str
    port: int
    credentials: Credentials
    # driver optional_args: state_dir, frr_dir, vty_socket, lldp_socket, known_hosts, netns
    paths: dict[str, str]
    # Where the address came from, shown by a dry run: a devices file's line or pool, or
    # the compiled fabric's mgmt address.
    origin: str = ""

    @property
    def address(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host  # IPv6: [fd00::1]:22
        return f"{host}:{self.port}"


@dataclass
class DeviceBook:
    """The devices file (if any) with the command line's values underneath."""

    file: DevicesFile
    source: SourceMap | None
    cli: Access
    _reported: set[tuple[str, int, str, str]] = field(default_factory=set)

    def access(
        self, name: str, index: int, fabric_mgmt: str | None, errors: ErrorCollector
    ) -> DeviceAccess | None:
        """None (and an error) when the switch has no address or no usable secret."""
        entry = self.file.devices.get(name, Access())
        where = self.source.file if self.source else "--devices"
        place = _Places(self, name, where)
        pick = place.pick
        host, origin = entry.host, f"{where}:{place.entry_line} devices.{name}.host"
        if host is None and self.file.pool is not None:
            host = self._pooled(name, index, where, errors)
            origin = f"{where}:{self.line(('pool',))} pool {self.file.pool}, address {index + 1}"
            if host is None:
                # Falling back to the inventory's address would dial a switch the pool was
                # written to avoid (a dry run against the real fabric instead of a lab).
                return None
        if host is None:
            host, origin = fabric_mgmt, "the compiled fabric's mgmt address"
        if host is None:
            return None
        credentials = self._credentials(place, errors)
        if credentials is None:
            return None
        known_hosts = pick("known_hosts")
        if known_hosts is not None and not Path(known_hosts).is_file():
            self._once(errors, place.of("known_hosts"), f"known_hosts {known_hosts}: no such file")
            return None
        fields = PATH_FIELDS + REACH_FIELDS
        paths = {key: pick(key) for key in fields if pick(key) is not None}
        return DeviceAccess(host, pick("port") or 22, credentials, paths, origin)

    def line(self, path: tuple[str, ...]) -> int:
        return self.source.line_of(path) if self.source else 0

    def _once(
        self, errors: ErrorCollector, at: tuple[str, int, str], message: str, hint: str = ""
    ) -> None:
        """A value every switch inherits (from `defaults:` or a flag) is wrong once, at its
        own line, not once per switch at the switch's."""
        key = (*at, message)
        if key not in self._reported:
            self._reported.add(key)
            errors.add(*at, message, hint)

    def _pooled(self, name: str, index: int, where: str, errors: ErrorCollector) -> str | None:
        """Host address `index` of the pool; None, and a located error, past its end."""
        assert self.file.pool is not None
        pool = ipaddress.ip_network(self.file.pool)
        hosts = itertools.islice(pool.hosts(), index, index + 1)
        address = next(hosts, None)
        if address is None:
            size = sum(1 for _ in itertools.islice(pool.hosts(), index))
            errors.add(
                where,
                self.line(("pool",)),
                "pool",
                f"{pool} holds {size} host address{'es' if size != 1 else ''}, too few for "
                f"{name} (switch {index + 1} in fabric order)",
                "give a larger pool, or `host:` for the switches past its end",
            )
            return None
        return str(address)

    def _credentials(self, place: _Places, errors: ErrorCollector) -> Credentials | None:
        pick = place.pick
        password_env, password_file, key_file = (
            pick("password_env"),
            pick("password_file"),
            pick("key_file"),
        )
        before = len(errors.errors)
        if password_env is None and password_file is None and key_file is None:
            # Said once for the file (`defaults:` is where one secret serves every switch),
            # not once per switch.
            at = (
                (place.where, self.line(("defaults",)), "defaults")
                if self.source
                else ("--key-file", 0, "")
            )
            self._once(
                errors,
                at,
                "no credentials given, for any switch without its own",
                "name an environment variable (password_env / --password-env), a "
                "password file or an SSH key file",
            )
            return None
        password = None
        failed = False
        if password_env is not None:
            password = os.environ.get(password_env)
            if not password:
                failed = True
                message = f"environment variable {password_env} is not set"
                self._once(errors, place.of("password_env"), message)
        if password_file is not None:
            password, problem = _read_password(Path(password_file))
            if problem:
                failed = True
                message = f"password file {password_file}: {problem}"
                self._once(errors, place.of("password_file"), message)
        if key_file is not None:
            problem = _key_file_problem(Path(key_file))
            if problem:
                failed = True
                self._once(errors, place.of("key_file"), f"key file {key_file}: {problem}")
        if failed or len(errors.errors) > before:
            return None
        return Credentials(
            pick("username") or "root", password, Path(key_file) if key_file else None
        )

    def unknown_names(self, switches: set[str]) -> list[str]:
        return sorted(set(self.file.devices) - switches)


class _Places:
    """Where each access value of one switch comes from: its own entry, `defaults:` or the
    command line, in that order."""

    def __init__(self, book: DeviceBook, name: str, where: str) -> None:
        self.book, self.name, self.where = book, name, where
        self.entry = book.file.devices.get(name, Access())
        self.entry_line = book.line(("devices", name))

    def pick(self, attribute: str) -> Any:
        for layer in (self.entry, self.book.file.defaults, self.book.cli):
            if getattr(layer, attribute) is not None:
                return getattr(layer, attribute)
        return None

    def of(self, attribute: str) -> tuple[str, int, str]:
        """(file, line, field) of the value `pick` returns, for an error about it."""
        if getattr(self.entry, attribute) is not None:
            return self.where, self.entry_line, f"devices.{self.name}.{attribute}"
        if getattr(self.book.file.defaults, attribute) is not None:
            line = self.book.line(("defaults", attribute))
            return self.where, line, f"defaults.{attribute}"
        return "--" + attribute.replace("_", "-"), 0, ""


def _key_file_problem(path: Path) -> str:
    """What ssh would hold against a private key file, or ""."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return "no such file"
    if not stat.S_ISREG(mode):
        return "not a file"
    if mode & KEY_FILE_OPEN_BITS:
        return (
            f"permissions {stat.S_IMODE(mode):04o} let others read it; ssh refuses such a key "
            f"(chmod 600 {path})"
        )
    return ""


def _read_password(path: Path) -> tuple[str | None, str]:
    """(the password, "") or (None, what is wrong with the file)."""
    if not path.is_file():
        return None, "no such file"
    try:
        return path.read_bytes().decode("utf-8").strip(), ""
    except UnicodeDecodeError:
        # The bytes are a secret: the message says where, never what.
        return None, "not UTF-8 (save the password as UTF-8 text)"
    except OSError as exc:
        return None, f"cannot read it: {exc.strerror}"


def load_device_book(path: Path | None, cli: Access) -> DeviceBook:
    if path is None:
        return DeviceBook(DevicesFile(), None, cli)
    data, source = load_yaml(path)
    if not isinstance(data, dict):
        raise UserErrors.single(
            source.file,
            "",
            "the devices file must be a mapping",
            "see `devices:` in the documentation's deploy guide (docs/guide/deploy.md)",
            line=1,
        )
    try:
        return DeviceBook(DevicesFile.model_validate(data), source, cli)
    except ValidationError as exc:
        raise UserErrors(validation_errors(exc, data, source, DevicesFile)) from None


def access_from_flags(
    username: str | None,
    port: int | None,
    password_env: str | None,
    password_file: Path | None,
    key_file: Path | None,
    **paths: str | None,
) -> Access:
    """The access given on the command line; a bad value is named by its flag."""
    try:
        return Access(
            username=username,
            port=port,
            password_env=password_env,
            password_file=str(password_file) if password_file else None,
            key_file=str(key_file) if key_file else None,
            **paths,
        )
    except ValidationError as exc:  # a device path given as a flag: named by the flag
        raise UserErrors(
            [
                UserError(
                    "--" + str(error["loc"][0]).replace("_", "-"),
                    0,
                    "",
                    str(error["msg"]).removeprefix("Value error, "),
                )
                for error in exc.errors()
            ]
        ) from None
