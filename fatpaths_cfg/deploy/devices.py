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
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from fatpaths_cfg.errors import ErrorCollector, UserErrors
from fatpaths_cfg.inventory.load import validation_errors
from fatpaths_cfg.inventory.schema import IPAddressText, Name
from fatpaths_cfg.inventory.yaml_source import SourceMap, load_yaml

PATH_FIELDS = ("state_dir", "frr_dir", "vty_socket", "lldp_socket")
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


class DevicesFile(_Strict):
    defaults: Access = Access()
    pool: str | None = None
    devices: dict[Name, Access] = {}

    @field_validator("pool")
    @classmethod
    def _pool(cls, value: str | None) -> str | None:
        if value is not None:
            ipaddress.ip_network(value)
        return value


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

    def access(
        self, name: str, index: int, fabric_mgmt: str | None, errors: ErrorCollector
    ) -> DeviceAccess | None:
        """None (and an error) when the switch has no address or no usable secret."""
        entry = self.file.devices.get(name, Access())
        layers = [entry, self.file.defaults, self.cli]

        def pick(attribute: str) -> Any:
            return next(
                (getattr(a, attribute) for a in layers if getattr(a, attribute) is not None), None
            )

        where = self.source.file if self.source else "--devices"
        line = self.source.line_of(("devices", name)) if self.source else 0
        host = entry.host
        if host is None and self.file.pool is not None:
            host = self._pooled(name, index, where, errors)
            if host is None:
                # Falling back to the inventory's address would dial a switch the pool was
                # written to avoid (a dry run against the real fabric instead of a lab).
                return None
        host = host or fabric_mgmt
        if host is None:
            return None
        credentials = self._credentials(pick, where, line, f"devices.{name}", errors)
        if credentials is None:
            return None
        known_hosts = pick("known_hosts")
        if known_hosts is not None and not Path(known_hosts).is_file():
            errors.add(where, line, f"devices.{name}", f"known_hosts {known_hosts}: no such file")
            return None
        fields = PATH_FIELDS + REACH_FIELDS
        paths = {key: pick(key) for key in fields if pick(key) is not None}
        return DeviceAccess(host, pick("port") or 22, credentials, paths)

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
                self.source.line_of(("pool",)) if self.source else 0,
                "pool",
                f"{pool} holds {size} host address{'es' if size != 1 else ''}, too few for "
                f"{name} (switch {index + 1} in fabric order)",
                "give a larger pool, or `host:` for the switches past its end",
            )
            return None
        return str(address)

    def _credentials(
        self, pick: Any, where: str, line: int, field: str, errors: ErrorCollector
    ) -> Credentials | None:
        password_env, password_file, key_file = (
            pick("password_env"),
            pick("password_file"),
            pick("key_file"),
        )
        before = len(errors.errors)
        if password_env is None and password_file is None and key_file is None:
            errors.add(
                where,
                line,
                field,
                "no credentials given",
                "name an environment variable (password_env / --password-env), a "
                "password file or an SSH key file",
            )
        password = None
        if password_env is not None:
            password = os.environ.get(password_env)
            if not password:
                errors.add(where, line, field, f"environment variable {password_env} is not set")
        if password_file is not None:
            password, problem = _read_password(Path(password_file))
            if problem:
                errors.add(where, line, field, f"password file {password_file}: {problem}")
        if key_file is not None and not Path(key_file).is_file():
            errors.add(where, line, field, f"key file {key_file}: no such file")
        if len(errors.errors) > before:
            return None
        return Credentials(
            pick("username") or "root", password, Path(key_file) if key_file else None
        )

    def unknown_names(self, switches: set[str]) -> list[str]:
        return sorted(set(self.file.devices) - switches)


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
        raise UserErrors(validation_errors(exc, data, source)) from None
