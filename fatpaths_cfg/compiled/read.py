"""Reading a compiled output back: `fabric.json` and `routing.npz` into a `LoadedCompiled`.

A damaged output is refused, not trusted: each file is checked before anything reads it (its
encoding and schema, every field the stages read with its type and range, the tables' dtypes
and shapes against the fabric, every switch id in range, next hops along the layer's links and
nearer to their destination), and last against the checksums compile recorded in
`checksums.sha256`. Any problem is one located user error (exit 2) naming
the file and what is wrong; nothing is written.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import re
import zipfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from fatpaths_cfg.compiled.schema import SCHEMA
from fatpaths_cfg.compiled.view import (
    FAMILIES_OF,
    AddressRecords,
    FamilyAddresses,
    LayerRecord,
    LoadedCompiled,
)
from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.fabric import Fabric, Host, Link, Switch, Uplink
from fatpaths_cfg.support.output import output_manifest

# sha256sum's format (`sha256sum -c checksums.sha256` checks an output by hand).
CHECKSUMS = "checksums.sha256"
# The files every stage after compile trusts; the configs are what `verify` checks.
CHECKSUMMED = ("fabric.json", "routing.npz")
DAMAGED = "the output is damaged; compile it again"
NOT_AN_OUTPUT = "run `fatpaths compile INVENTORY -o DIR` first"
# The dtype of each table routing.npz holds, [layer, switch, destination].
TABLES = {"dist": np.dtype(np.uint8), "next_hop": np.dtype(np.int32), "backup": np.dtype(np.int32)}
# fabric.json's size cap (see `fabric_json_cap`): a compiled Slim Fly q=19 of 4 layers holds
# 4.5 bytes of fabric.json per entry of its `dist` table and one q=5 18.7; the floor covers
# small fabrics of many hosts.
FABRIC_CAP_VARIABLE = "FATPATHS_MAX_FABRIC_JSON_MB"
BYTES_PER_MB = 1_000_000
FABRIC_JSON_FLOOR = 64 * BYTES_PER_MB
FABRIC_JSON_BYTES_PER_ENTRY = 16
_DIGEST_LINE = re.compile(r"^([0-9a-f]{64})  (\S+)$")
_REQUIRED: Any = object()  # a field without a default
UNREACHABLE = 255  # `dist` of a destination a layer does not reach


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def checksums_text(digests: dict[str, str]) -> str:
    """`checksums.sha256` of the given {file: sha256}, in sha256sum's format."""
    return "".join(f"{digests[name]}  {name}\n" for name in sorted(digests))


def load_compiled(
    directory: Path,
    field: str = "",
    hint: str = NOT_AN_OUTPUT,
    schemas: Iterable[str] = (SCHEMA,),
) -> LoadedCompiled:
    """The compiled output in `directory`, checked; located UserErrors when it is not one or is
    damaged. `field` names the argument or option that gave the directory; `schemas` are the
    fabric.json versions the caller reads (`plan` and `--keep-layers` read schema 1 too)."""
    fabric_file = directory / "fabric.json"
    if not directory.is_dir() or not _exists(fabric_file):
        raise UserErrors.single(
            str(directory), field, "not a compiled fabric directory (no fabric.json)", hint
        )
    raw_fabric = _read_capped(fabric_file, fabric_json_cap(directory / "routing.npz"))
    data = _parse_json(fabric_file, raw_fabric)
    accepted = tuple(schemas)
    if not isinstance(data, dict):
        message = f"holds a JSON {_kind(data)}, not the object a fabric.json is"
        raise UserErrors.single(str(fabric_file), "", message, DAMAGED)
    found = data.get("schema")
    if found not in accepted:
        raise UserErrors.single(
            str(fabric_file),
            "schema",
            f"unsupported schema {found!r}",
            f"this fatpaths reads {', '.join(accepted)}; recompile",
        )
    reader = _FabricReader(str(fabric_file), data)
    fabric = reader.fabric()
    layers = reader.layers(fabric)
    addresses = reader.addresses(fabric, len(layers))
    routing = reader.obj(data.get("routing", {}), "routing")
    ecmp = reader.boolean(routing, "ecmp_within_layer", "routing", default=False)
    backup_mode = reader.text(routing, "backup", "routing", default="none")
    if backup_mode not in ("none", "lfa"):
        reader.fail("routing.backup", f"{backup_mode!r} is not none or lfa")
    npz = directory / "routing.npz"
    raw_tables = _read_bytes(npz, missing="missing (every compiled output has one)")
    tables = _read_tables(npz, raw_tables, (len(layers), fabric.nr), backup_mode != "none")
    _check_hops(npz, tables, fabric, layers)
    _check_checksums(directory, {"fabric.json": raw_fabric, "routing.npz": raw_tables})
    return LoadedCompiled(
        directory,
        str(found),
        reader.text(data, "inventory", "", default=""),
        reader.integer(data, "seed", "", default=0, low=0),
        fabric,
        ecmp,
        backup_mode,
        layers,
        addresses,
        tables["dist"],
        tables["next_hop"],
        tables.get("backup"),
    )


def _exists(path: Path) -> bool:
    """There, even as a broken link or a link loop (reading it then names the problem)."""
    try:
        path.lstat()
    except OSError:
        return False
    return True


def _read_bytes(path: Path, missing: str = "missing") -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise UserErrors.single(str(path), "", missing, DAMAGED) from None
    except OSError as exc:
        raise UserErrors.single(str(path), "", f"cannot be read: {exc.strerror}", DAMAGED) from None


@dataclass(frozen=True)
class SizeCap:
    """The most bytes a fabric.json may hold, and what the figure comes from."""

    bytes: int
    why: str


def fabric_json_cap(npz: Path) -> SizeCap:
    """fabric.json's cap: FATPATHS_MAX_FABRIC_JSON_MB when set, else what a fabric of the
    layers and switches routing.npz's header gives can need (and the floor without one).
    Parsing JSON in Python takes ten times the file's size in memory or more: a file far
    beyond its fabric is refused before that, by its size."""
    text = os.environ.get(FABRIC_CAP_VARIABLE)
    if text is not None:
        megabytes = int(text) if text.isdigit() else 0
        if megabytes < 1:
            raise UserErrors.single(
                FABRIC_CAP_VARIABLE,
                "",
                f"{text!r} is not a size",
                f"a whole number of MB, e.g. {FABRIC_CAP_VARIABLE}=1000",
            )
        return SizeCap(megabytes * BYTES_PER_MB, f"{FABRIC_CAP_VARIABLE}={megabytes}")
    shape = _table_shape(npz, "dist")
    if shape is None or len(shape) != 3:
        return SizeCap(FABRIC_JSON_FLOOR, "routing.npz gives no size to allow more")
    layers, switches = shape[0], shape[1]
    most = FABRIC_JSON_FLOOR + FABRIC_JSON_BYTES_PER_ENTRY * layers * switches * switches
    return SizeCap(most, f"what routing.npz's {layers} layers of {switches} switches can need")


def _table_shape(npz: Path, name: str) -> tuple[int, ...] | None:
    """A table's shape from its header alone; None when the archive does not give one."""
    try:
        with zipfile.ZipFile(npz) as archive, archive.open(f"{name}.npy") as header:
            version = np.lib.format.read_magic(header)
            if version == (1, 0):
                shape = np.lib.format.read_array_header_1_0(header)[0]
            else:
                shape = np.lib.format.read_array_header_2_0(header)[0]
    except (OSError, KeyError, zipfile.BadZipFile, ValueError, EOFError, zlib.error):
        return None
    return tuple(int(n) for n in shape)


def _read_capped(path: Path, cap: SizeCap) -> bytes:
    """The file's bytes, refused by its size before reading when over the cap (and, for a
    device or pipe that reports no size, one byte past the cap into reading)."""
    known: int | None = None
    try:
        with path.open("rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            if size > cap.bytes:
                known = size
            else:
                data = stream.read(cap.bytes + 1)
                if len(data) <= cap.bytes:
                    return data
    except FileNotFoundError:
        raise UserErrors.single(str(path), "", "missing", DAMAGED) from None
    except OSError as exc:
        raise UserErrors.single(str(path), "", f"cannot be read: {exc.strerror}", DAMAGED) from None
    described = f"{known:,} bytes" if known is not None else f"more than {cap.bytes:,} bytes"
    setting = f"={-(-known // BYTES_PER_MB)}" if known is not None else " higher"
    raise UserErrors.single(
        str(path),
        "",
        f"{described}, over the {cap.bytes / BYTES_PER_MB:,.0f} MB cap: {cap.why}; "
        "refused before parsing",
        f"{DAMAGED}, or set {FABRIC_CAP_VARIABLE}{setting} to read it anyway",
    )


def _parse_json(path: Path, raw: bytes) -> Any:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        message = f"not UTF-8 text (byte 0x{raw[exc.start]:02X} at offset {exc.start})"
        raise UserErrors.single(str(path), "", message, DAMAGED, line=line) from None
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise UserErrors.single(
            str(path), "", f"invalid JSON: {exc.msg}", DAMAGED, line=exc.lineno
        ) from None
    except RecursionError:
        raise UserErrors.single(
            str(path), "", "nested too deeply to be a fabric.json", DAMAGED
        ) from None
    except ValueError as exc:  # NaN or Infinity, which JSON does not have
        raise UserErrors.single(str(path), "", str(exc), DAMAGED) from None


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"invalid JSON: {name} is not a JSON number")


def _kind(value: object) -> str:
    names = {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


class _FabricReader:
    """The fields of one fabric.json, each checked as it is read; the first problem raises a
    UserError naming the field (`links[3].a.switch`)."""

    def __init__(self, file: str, data: dict[str, Any]) -> None:
        self.file = file
        self.data = data

    def fail(self, where: str, message: str) -> NoReturn:
        raise UserErrors.single(self.file, where, message, DAMAGED)

    def _get(self, obj: dict[str, Any], key: str, where: str, default: Any) -> Any:
        if key in obj:
            return obj[key]
        if default is _REQUIRED:
            self.fail(_join(where, key), "missing")
        return default

    def obj(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(where, f"expected an object, found a JSON {_kind(value)}")
        return value

    def items(self, obj: dict[str, Any], key: str, where: str, default: Any = None) -> list[Any]:
        value = self._get(obj, key, where, _REQUIRED if default is None else default)
        if not isinstance(value, list):
            self.fail(_join(where, key), f"expected a list, found a JSON {_kind(value)}")
        return value

    def text(self, obj: dict[str, Any], key: str, where: str, default: Any = _REQUIRED) -> str:
        value = self._get(obj, key, where, default)
        if not isinstance(value, str):
            self.fail(_join(where, key), f"expected a string, found a JSON {_kind(value)}")
        return value

    def optional_text(self, obj: dict[str, Any], key: str, where: str) -> str | None:
        value = obj.get(key)
        if value is not None and not isinstance(value, str):
            self.fail(_join(where, key), f"expected a string or null, found a JSON {_kind(value)}")
        return value

    def integer(
        self,
        obj: dict[str, Any],
        key: str,
        where: str,
        default: Any = _REQUIRED,
        low: int | None = None,
        high: int | None = None,
    ) -> int:
        value = self._get(obj, key, where, default)
        return self.bounded(value, _join(where, key), low, high)

    def bounded(self, value: Any, where: str, low: int | None, high: int | None) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            self.fail(where, f"expected an integer, found a JSON {_kind(value)}")
        if (low is not None and value < low) or (high is not None and value > high):
            span = f"{low}..{high}" if high is not None else f"at least {low}"
            self.fail(where, f"{value} is out of range ({span})")
        return value

    def speed(self, obj: dict[str, Any], key: str, where: str, required: bool = True) -> Any:
        value = self._get(obj, key, where, _REQUIRED if required else None)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.fail(_join(where, key), f"expected a number, found a JSON {_kind(value)}")
        if not math.isfinite(value) or value <= 0:
            self.fail(_join(where, key), f"{value} is not a positive speed")
        return value

    def boolean(self, obj: dict[str, Any], key: str, where: str, default: Any = _REQUIRED) -> bool:
        value = self._get(obj, key, where, default)
        if not isinstance(value, bool):
            self.fail(_join(where, key), f"expected true or false, found a JSON {_kind(value)}")
        return value

    def index(self, entry: dict[str, Any], where: str, position: int) -> None:
        value = self.integer(entry, "index", where)
        if value != position:
            self.fail(_join(where, "index"), f"is {value}, expected {position} (its place)")

    def fabric(self) -> Fabric:
        data = self.data
        name = self.text(data, "name", "")
        origin = data.get("origin") or {}
        if not isinstance(origin, dict):
            self.fail("origin", f"expected an object, found a JSON {_kind(origin)}")
        switches = self._switches()
        index = {s.name: s.index for s in switches}
        links = self._links(switches, index)
        hosts = self._hosts(index)
        return Fabric(name, switches, links, hosts, origin)

    def _switches(self) -> list[Switch]:
        switches = []
        seen: set[str] = set()
        for i, entry in enumerate(self.items(self.data, "switches", "")):
            where = f"switches[{i}]"
            entry = self.obj(entry, where)
            self.index(entry, where, i)
            name = self.text(entry, "name", where)
            if name in seen:
                self.fail(_join(where, "name"), f"{name!r} is named twice")
            seen.add(name)
            ports = self.items(entry, "ports", where)
            for j, port in enumerate(ports):
                if not isinstance(port, str):
                    self.fail(f"{where}.ports[{j}]", f"expected a string, found a {_kind(port)}")
            switches.append(
                Switch(
                    i,
                    name,
                    self.text(entry, "platform", where),
                    self.text(entry, "role", where),
                    tuple(ports),
                    self.optional_text(entry, "mgmt", where),
                    self.integer(entry, "plane", where, default=0, low=0),
                )
            )
        return switches

    def _end(self, entry: dict[str, Any], key: str, where: str, index: dict[str, int]) -> int:
        switch = self.text(entry, key, where)
        if switch not in index:
            self.fail(_join(where, key), f"names no switch of this fabric ({switch!r})")
        return index[switch]

    def _links(self, switches: list[Switch], index: dict[str, int]) -> list[Link]:
        links = []
        for i, entry in enumerate(self.items(self.data, "links", "")):
            where = f"links[{i}]"
            entry = self.obj(entry, where)
            self.index(entry, where, i)
            ends = []
            for side in ("a", "b"):
                end = self.obj(self._get(entry, side, where, _REQUIRED), f"{where}.{side}")
                ends.append(
                    (
                        self._end(end, "switch", f"{where}.{side}", index),
                        self.text(end, "port", f"{where}.{side}"),
                    )
                )
            (a, a_port), (b, b_port) = ends
            if a == b:
                self.fail(where, f"joins switch {switches[a].name!r} to itself")
            links.append(Link(i, a, a_port, b, b_port, self.speed(entry, "speed_gbps", where)))
        return links

    def _hosts(self, index: dict[str, int]) -> list[Host]:
        hosts = []
        for i, entry in enumerate(self.items(self.data, "hosts", "")):
            where = f"hosts[{i}]"
            entry = self.obj(entry, where)
            self.index(entry, where, i)
            uplinks = []
            for j, up in enumerate(self.items(entry, "uplinks", where, default=[])):
                at = f"{where}.uplinks[{j}]"
                up = self.obj(up, at)
                plane = self.integer(up, "plane", at, low=0)
                if plane != j:
                    self.fail(f"{at}.plane", f"is {plane}, expected {j} (one uplink per plane)")
                uplinks.append(
                    Uplink(plane, self._end(up, "switch", at, index), self.text(up, "port", at))
                )
            switch = self._end(entry, "switch", where, index)
            port = self.text(entry, "port", where)
            if uplinks and (uplinks[0].switch, uplinks[0].port) != (switch, port):
                self.fail(f"{where}.uplinks[0]", "is not the host's own switch and port")
            hosts.append(
                Host(
                    i,
                    self.text(entry, "name", where),
                    switch,
                    port,
                    self.speed(entry, "speed_gbps", where),
                    self.speed(entry, "pacing_gbps", where, required=False),
                    tuple(uplinks),
                )
            )
        return hosts

    def layers(self, fabric: Fabric) -> list[LayerRecord]:
        layers = []
        link_count = len(fabric.links)
        entries = self.items(self.data, "layers", "")
        if not entries:
            self.fail("layers", "empty (a compiled fabric has at least one layer)")
        for i, entry in enumerate(entries):
            where = f"layers[{i}]"
            entry = self.obj(entry, where)
            number = self.integer(entry, "id", where)
            if number != i + 1:
                self.fail(_join(where, "id"), f"is {number}, expected {i + 1} (layers count 1..)")
            members = self.items(entry, "links", where)
            links = self._ascending_ids(members, f"{where}.links", link_count)
            rank = entry.get("up_down_rank")
            if rank is not None:
                ranks = self.items(entry, "up_down_rank", where)
                if len(ranks) != fabric.nr:
                    self.fail(
                        f"{where}.up_down_rank",
                        f"has {len(ranks)} entries for {fabric.nr} switches",
                    )
                rank = tuple(self.bounded(r, f"{where}.up_down_rank", None, None) for r in ranks)
            free = entry.get("deadlock_free")
            if free is not None and not isinstance(free, bool):
                self.fail(
                    f"{where}.deadlock_free", f"expected true or false, found a {_kind(free)}"
                )
            layers.append(
                LayerRecord(
                    number,
                    self.text(entry, "algorithm", where),
                    links,
                    self.boolean(entry, "ecmp", where, default=False),
                    rank,
                    free,
                    self.integer(entry, "completed_links", where, default=0, low=0),
                )
            )
        return layers

    def _ascending_ids(self, values: list[Any], where: str, count: int) -> np.ndarray:
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            bad = next(v for v in values if not isinstance(v, int) or isinstance(v, bool))
            self.fail(where, f"expected link indices, found a JSON {_kind(bad)}")
        ids = np.asarray(values, dtype=np.int64)
        if ids.size and (ids.min() < 0 or ids.max() >= count):
            wrong = int(ids[(ids < 0) | (ids >= count)][0])
            self.fail(where, f"link {wrong} is out of range (the fabric has {count} links)")
        if ids.size > 1 and not (np.diff(ids) > 0).all():
            self.fail(where, "link indices are not in ascending order without repeats")
        return ids

    def addresses(self, fabric: Fabric, layer_count: int) -> AddressRecords | None:
        plan = self.data.get("addressing")
        if plan is None:
            return None
        plan = self.obj(plan, "addressing")
        encoding = self.text(plan, "encoding", "addressing")
        if encoding not in ("prefix", "vlan"):
            self.fail("addressing.encoding", f"{encoding!r} is not prefix or vlan")
        family = self.text(plan, "family", "addressing", default="ipv4")
        if family not in FAMILIES_OF:
            self.fail("addressing.family", f"{family!r} is not {', '.join(FAMILIES_OF)}")
        families = FAMILIES_OF[family]
        numbers, locals_ = self._switch_numbers(plan, fabric)
        places, macs = self._host_places(plan, fabric, encoding == "vlan")
        tables = {f: self._family(plan, f, fabric, layer_count, encoding, places) for f in families}
        vlans = []
        if encoding == "vlan":
            entries = self.items(plan, "vlans", "addressing")
            if len(entries) != layer_count:
                self.fail("addressing.vlans", f"has {len(entries)} entries, expected {layer_count}")
            for k, v in enumerate(entries):
                v = self.obj(v, f"addressing.vlans[{k}]")
                vlans.append(self.integer(v, "vlan", f"addressing.vlans[{k}]", low=1, high=4094))
        spec = self.obj(self.data.get("addressing_spec", {}), "addressing_spec")
        pools = {}
        for key in sorted(k for k in spec if "_pool_" in k):
            pools[key] = self.text(spec, key, "addressing_spec")
        return AddressRecords(
            encoding,
            family,
            tables.get("v4"),
            tables.get("v6"),
            numbers,
            locals_,
            places,
            macs,
            vlans,
            pools,
        )

    def _switch_entries(self, plan: dict[str, Any], fabric: Fabric) -> list[dict[str, Any]]:
        entries = self.items(plan, "switches", "addressing")
        if len(entries) != fabric.nr:
            self.fail("addressing.switches", f"has {len(entries)} entries for {fabric.nr} switches")
        checked = []
        for i, entry in enumerate(entries):
            where = f"addressing.switches[{i}]"
            entry = self.obj(entry, where)
            name = self.text(entry, "name", where)
            if name != fabric.switches[i].name:
                self.fail(f"{where}.name", f"is {name!r}, expected {fabric.switches[i].name!r}")
            checked.append(entry)
        return checked

    def _switch_numbers(
        self, plan: dict[str, Any], fabric: Fabric
    ) -> tuple[list[int], list[int | None]]:
        numbers: list[int] = []
        locals_: list[int | None] = []
        for i, entry in enumerate(self._switch_entries(plan, fabric)):
            where = f"addressing.switches[{i}]"
            numbers.append(self.integer(entry, "number", where, default=i, low=0))
            local = entry.get("local")
            locals_.append(None if local is None else self.bounded(local, where, 0, None))
        return numbers, locals_

    def _host_places(
        self, plan: dict[str, Any], fabric: Fabric, vlan: bool
    ) -> tuple[list[tuple[int, int]], list[str]]:
        entries = self.items(plan, "hosts", "addressing")
        if len(entries) != len(fabric.hosts):
            self.fail(
                "addressing.hosts", f"has {len(entries)} entries for {len(fabric.hosts)} hosts"
            )
        places: list[tuple[int, int]] | None = None
        macs = []
        for i, entry in enumerate(entries):
            where = f"addressing.hosts[{i}]"
            entry = self.obj(entry, where)
            name = self.text(entry, "name", where)
            if name != fabric.hosts[i].name:
                self.fail(f"{where}.name", f"is {name!r}, expected {fabric.hosts[i].name!r}")
            addresses = self.items(entry, "addresses", where)
            found = _places_quickly(addresses) if places is not None else None
            if found is None:  # the first host, or one whose entries need a closer look
                found = []
                for k, address in enumerate(addresses):
                    at = f"{where}.addresses[{k}]"
                    address = self.obj(address, at)
                    found.append(
                        (
                            self.integer(address, "plane", at, default=0, low=0),
                            self.integer(address, "layer", at, low=1),
                        )
                    )
            if places is None:
                places = found
            elif found != places:
                self.fail(f"{where}.addresses", "lists other planes or layers than hosts[0]")
            if vlan:
                macs.append(self.text(entry, "mac", where))
        return places or [], macs

    def _family(
        self,
        plan: dict[str, Any],
        family: str,
        fabric: Fabric,
        layer_count: int,
        encoding: str,
        places: list[tuple[int, int]],
    ) -> FamilyAddresses:
        loopbacks = []
        subnets: list[list[str]] = [[] for _ in range(layer_count)]
        gateways: list[list[str]] = [[] for _ in range(layer_count)]
        for i, entry in enumerate(self._switch_entries(plan, fabric)):
            where = f"addressing.switches[{i}]"
            loopbacks.append(self.text(entry, f"loopback_{family}", where))
            rows = self.items(entry, "subnets", where)
            if len(rows) != layer_count:
                self.fail(f"{where}.subnets", f"has {len(rows)} entries for {layer_count} layers")
            for layer, row in enumerate(rows):
                at = f"{where}.subnets[{layer}]"
                row = self.obj(row, at)
                subnets[layer].append(self.text(row, family, at))
                if encoding == "prefix":
                    gateways[layer].append(self.text(row, f"gateway_{family}", at))
        links = []
        entries = self.items(plan, "links", "addressing")
        if len(entries) != len(fabric.links):
            self.fail(
                "addressing.links", f"has {len(entries)} entries for {len(fabric.links)} links"
            )
        for i, entry in enumerate(entries):
            where = f"addressing.links[{i}]"
            entry = self.obj(entry, where)
            self.index(entry, where, i)
            links.append(
                (self.text(entry, f"a_{family}", where), self.text(entry, f"b_{family}", where))
            )
        hosts = []
        for i, entry in enumerate(plan["hosts"]):
            texts = [address.get(family) for address in entry["addresses"]]
            if not all(isinstance(t, str) for t in texts):
                k = next(k for k, t in enumerate(texts) if not isinstance(t, str))
                self.fail(
                    f"addressing.hosts[{i}].addresses[{k}].{family}",
                    f"expected a string, found a JSON {_kind(texts[k])}",
                )
            hosts.append(texts)
        return FamilyAddresses(
            loopbacks, subnets, gateways if encoding == "prefix" else None, links, hosts
        )


def _places_quickly(addresses: list[Any]) -> list[tuple[int, int]] | None:
    """Each address's (plane, layer) when every entry is well formed, else None. A fabric's
    plan holds 10^5 host addresses: checked one field at a time they would cost seconds, and
    after the first host they only need to equal the first host's places."""
    try:
        found = [(a.get("plane", 0), a["layer"]) for a in addresses]
    except (AttributeError, KeyError, TypeError):
        return None
    if any(type(p) is not int or type(layer) is not int for p, layer in found):
        return None
    return found


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _read_tables(
    npz: Path, raw: bytes, size: tuple[int, int], with_backup: bool
) -> dict[str, np.ndarray]:
    """routing.npz's tables, each checked (dtype, shape, ids) before it is read whole: a
    damaged header cannot make the reader allocate what the fabric does not need."""
    layers, nr = size
    shape = (layers, nr, nr)
    wanted = ["dist", "next_hop", *(["backup"] if with_backup else [])]
    tables = {}
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            members = set(archive.namelist())
            for name in wanted:
                if f"{name}.npy" not in members:
                    raise UserErrors.single(
                        str(npz), name, "missing (every compiled output has this table)", DAMAGED
                    )
                tables[name] = _read_table(npz, archive, name, shape)
    except (OSError, zipfile.BadZipFile, ValueError, EOFError, zlib.error) as exc:
        raise UserErrors.single(
            str(npz), "", f"not a readable routing table: {exc}", DAMAGED
        ) from None
    dist = tables["dist"]
    diagonal = np.arange(nr)
    if (dist[:, diagonal, diagonal] != 0).any():
        raise UserErrors.single(str(npz), "dist", "a switch is not 0 hops from itself", DAMAGED)
    for name in wanted[1:]:
        table = tables[name]
        outside = (table < -1) | (table >= nr)
        if outside.any():
            layer, s, t = (int(x) for x in np.argwhere(outside)[0])
            raise UserErrors.single(
                str(npz),
                name,
                f"[{layer}, {s}, {t}] = {int(table[layer, s, t])} is not a switch "
                f"(the fabric has {nr}; -1 means none)",
                DAMAGED,
            )
    return tables


def _check_hops(
    npz: Path, tables: dict[str, np.ndarray], fabric: Fabric, layers: list[LayerRecord]
) -> None:
    """Every next hop (and backup) is a neighbour of its switch over the layer's links: the
    stages walk these tables along the fabric's cables and look each step's cable up."""
    nr = fabric.nr
    ends = np.array([(k.a, k.b) for k in fabric.links], dtype=np.int64).reshape(-1, 2)
    rows = np.arange(nr, dtype=np.int64)[:, np.newaxis] * nr
    columns = np.arange(nr)[np.newaxis, :]
    for number, layer in enumerate(layers):
        kept = ends[layer.links]
        adjacent = np.zeros(nr * nr, dtype=bool)
        adjacent[kept[:, 0] * nr + kept[:, 1]] = True
        adjacent[kept[:, 1] * nr + kept[:, 0]] = True
        for name in ("next_hop", "backup"):
            if name not in tables:
                continue
            hops = tables[name][number]
            stray = (hops >= 0) & ~adjacent[rows + np.maximum(hops, 0)]
            if stray.any():
                s, t = (int(x) for x in np.argwhere(stray)[0])
                hop = int(hops[s, t])
                names = fabric.switches
                raise UserErrors.single(
                    str(npz),
                    name,
                    f"[{number}, {s}, {t}] = {hop}: {names[s].name} has no link to "
                    f"{names[hop].name} in layer {layer.number}",
                    DAMAGED,
                )
        _check_distances(npz, tables, fabric, number, columns)


def _check_distances(
    npz: Path, tables: dict[str, np.ndarray], fabric: Fabric, number: int, columns: np.ndarray
) -> None:
    """A route where the distance is finite and only there, and each next hop nearer to the
    destination than its switch: so every walk along next hops arrives, in at most the
    distance's steps (a table that sends a packet uphill would loop a simulation forever)."""
    dist, hops = tables["dist"][number], tables["next_hop"][number]
    routed = hops >= 0
    off_diagonal = ~np.eye(fabric.nr, dtype=bool)
    unmatched = off_diagonal & (routed != (dist != UNREACHABLE))
    uphill = routed & (dist[np.maximum(hops, 0), columns] >= dist)
    names = fabric.switches
    for wrong in (unmatched, uphill):
        if not wrong.any():
            continue
        s, t = (int(x) for x in np.argwhere(wrong)[0])
        hop, away = int(hops[s, t]), int(dist[s, t])
        pair = f"[{number}, {s}, {t}] ({names[s].name} to {names[t].name})"
        if wrong is uphill:
            ahead = int(dist[hop, t])
            problem = (
                f"next hop {names[hop].name} is {ahead} hops from {names[t].name}, "
                f"no nearer than {names[s].name} ({away})"
            )
        elif hop >= 0:
            problem = f"a next hop ({names[hop].name}) but no distance ({UNREACHABLE})"
        else:
            problem = f"no next hop but a distance of {away}"
        raise UserErrors.single(str(npz), "next_hop", f"{pair}: {problem}", DAMAGED)


def _read_table(
    npz: Path, archive: zipfile.ZipFile, name: str, shape: tuple[int, int, int]
) -> np.ndarray:
    expected = TABLES[name]
    with archive.open(f"{name}.npy") as header:
        version = np.lib.format.read_magic(header)
        if version == (1, 0):
            found_shape, _fortran, dtype = np.lib.format.read_array_header_1_0(header)
        else:
            found_shape, _fortran, dtype = np.lib.format.read_array_header_2_0(header)
    if dtype != expected:
        raise UserErrors.single(
            str(npz),
            name,
            f"dtype {dtype}, expected {expected} (the tables compile writes)",
            DAMAGED,
        )
    if tuple(found_shape) != shape:
        raise UserErrors.single(
            str(npz),
            name,
            f"shape {tuple(found_shape)}, the fabric needs {shape} (layers, switches, switches)",
            DAMAGED,
        )
    with archive.open(f"{name}.npy") as member:
        table = np.lib.format.read_array(member, allow_pickle=False)
    return np.ascontiguousarray(table)


def _check_checksums(directory: Path, contents: dict[str, bytes]) -> None:
    """The files against the checksums compile recorded. An output written before checksums
    were recorded has none (and its marker lists none): its checks end with the structure."""
    path = directory / CHECKSUMS
    listed = output_manifest(directory) or set()
    if not _exists(path):
        if CHECKSUMS in listed:
            raise UserErrors.single(
                str(path), "", "missing (listed in the output's marker)", DAMAGED
            )
        return
    recorded: dict[str, str] = {}
    text = _read_bytes(path).decode("utf-8", errors="replace")
    for number, line in enumerate(text.splitlines(), 1):
        match = _DIGEST_LINE.match(line)
        if match is None:
            raise UserErrors.single(
                str(path), "", "not a sha256sum line (`HEX  FILE`)", DAMAGED, line=number
            )
        recorded[match.group(2)] = match.group(1)
    for name in CHECKSUMMED:
        if name not in recorded:
            raise UserErrors.single(str(path), "", f"records no checksum of {name}", DAMAGED)
        if sha256_hex(contents[name]) != recorded[name]:
            raise UserErrors.single(
                str(directory / name),
                "",
                f"its sha256 differs from the one compile recorded in {CHECKSUMS}: "
                "the file was changed or damaged after compile",
                DAMAGED,
            )
