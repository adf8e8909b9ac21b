"""The sweep file: which fabrics, routing points, seeds and tasks to run, expanded into tasks.

Each task is a plain, JSON-ready payload (the inventory as validated data, the full routing
block, the seed and the task's own parameters), so that a worker on another machine computes
it from the payload alone, and its key is a hash of exactly that payload.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from fatpaths_cfg.analysis.throughput import SCHEMES
from fatpaths_cfg.analysis.traffic import PATTERNS as ANALYSIS_PATTERNS
from fatpaths_cfg.errors import ErrorCollector, UserError, UserErrors
from fatpaths_cfg.fabric import Fabric, build_fabric
from fatpaths_cfg.inventory.load import LoadedInventory, validate_inventory, validation_errors
from fatpaths_cfg.inventory.paths import PathKey, format_path
from fatpaths_cfg.inventory.schema import SAFE_NAME, GenerateSpec, LayerAlgorithmName, RoutingSpec
from fatpaths_cfg.inventory.yaml_source import SourceMap, load_yaml
from fatpaths_cfg.sim.run import LOAD_BALANCING, TRANSPORTS
from fatpaths_cfg.sim.workloads import PATTERNS as SIM_PATTERNS
from fatpaths_cfg.sim.workloads import parse_bytes, parse_duration_ps
from fatpaths_cfg.support.memory import available_memory, cpu_time, gib
from fatpaths_cfg.support.scheme_names import SINGLE_PATH, current_name

# Part of every task key: a change in what a task computes must not reuse old rows.
TASK_VERSION = "fatpaths.sweep-task/1"

# Schemes that route on the full network's minimal paths whatever the layers are: the analysis'
# `single-path` and `ecmp` walk layer 1 (always the whole network), the simulator's baselines route
# on the full network. Their tasks run once per fabric, seed and task, on one layer.
LAYER_INDEPENDENT = {
    "analyze": frozenset({SINGLE_PATH, "ecmp"}),
    "simulate": frozenset({SINGLE_PATH, "ecmp", "letflow", "spray"}),
}
# The routing keys such a scheme ignores.
LAYER_FIELDS = ("layers", "rho", "algorithm", "paths_per_layer", "max_resamples")


def layer_independent(kind: str, params: dict[str, Any]) -> bool:
    scheme = params["scheme"] if kind == "analyze" else params["lb"]
    return scheme in LAYER_INDEPENDENT[kind]


Name = Annotated[str, Field(pattern=SAFE_NAME)]
Seed = Annotated[int, Field(ge=0, le=2**63 - 1)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _renamed(values: str | list[str]) -> str | list[str]:
    """A scheme's old name read as its new one (support/scheme_names.py)."""
    if isinstance(values, list):
        return [current_name(v) for v in values]
    return current_name(values)


def _check_names(values: str | list[str], known: tuple[str, ...], what: str) -> str | list[str]:
    unknown = [v for v in _listed(values) if v not in known]
    if unknown:
        raise ValueError(f"unknown {what} {unknown[0]!r} (one of {', '.join(known)})")
    if isinstance(values, list) and not values:
        raise ValueError(f"give at least one {what}")
    return values


class TopologyEntry(_Strict):
    inventory: str | None = None
    generate: GenerateSpec | None = None
    name: Name | None = None

    @model_validator(mode="after")
    def _one_source(self) -> TopologyEntry:
        if (self.inventory is None) == (self.generate is None):
            raise ValueError("give either `inventory: FILE` or `generate: {kind: ..., ...}`")
        return self


class RoutingPoint(_Strict):
    """Routing keys a sweep may set; unset keys keep the inventory's value."""

    layers: int | None = None
    rho: Annotated[float, Field(strict=False)] | None = None
    algorithm: LayerAlgorithmName | None = None
    ecmp_within_layer: bool | None = None
    acyclic: bool | None = None
    paths_per_layer: int | None = None
    max_resamples: int | None = None


class RoutingGrid(_Strict):
    # An empty axis would multiply the grid down to no point at all: a sweep that runs nothing.
    layers: Annotated[list[int], Field(min_length=1)] | None = None
    rho: Annotated[list[Annotated[float, Field(strict=False)]], Field(min_length=1)] | None = None
    algorithm: Annotated[list[LayerAlgorithmName], Field(min_length=1)] | None = None
    ecmp_within_layer: Annotated[list[bool], Field(min_length=1)] | None = None
    acyclic: Annotated[list[bool], Field(min_length=1)] | None = None


class AnalyzeTask(_Strict):
    traffic: str | list[str] = "permutation"
    scheme: str | list[str] = "fatpaths"
    pairs: Annotated[int, Field(ge=1, le=100_000)] = 200

    @field_validator("traffic")
    @classmethod
    def _traffic(cls, value: str | list[str]) -> str | list[str]:
        return _check_names(value, ANALYSIS_PATTERNS, "traffic pattern")

    @field_validator("scheme")
    @classmethod
    def _scheme(cls, value: str | list[str]) -> str | list[str]:
        return _check_names(_renamed(value), SCHEMES, "routing scheme")


class _SimulateDefaults(_Strict):
    """The settings every simulate task records (with a sweep's own defaults); any other
    simulate setting (SimOptions) may be given too, a value or a list to sweep over."""

    workload: str | list[str] = "permutation"
    size: str | list[str] = "64KiB"
    lb: str | list[str] = "fatpaths"
    transport: str | list[str] = "ndp"
    arrival_rate: Annotated[float, Field(gt=0, strict=False)] | None = None
    duration: str | None = None

    @field_validator("workload")
    @classmethod
    def _workload(cls, value: str | list[str]) -> str | list[str]:
        return _check_names(value, SIM_PATTERNS, "workload")

    @field_validator("lb")
    @classmethod
    def _lb(cls, value: str | list[str]) -> str | list[str]:
        return _check_names(_renamed(value), LOAD_BALANCING, "load balancing")

    @field_validator("transport")
    @classmethod
    def _transport(cls, value: str | list[str]) -> str | list[str]:
        return _check_names(value, TRANSPORTS, "transport")

    @model_validator(mode="before")
    @classmethod
    def _profile_size(cls, data: Any) -> Any:
        """Without a size, a profile's sizes (as `simulate --profile` takes them), else the
        sweep's default: a default here that always won made `profile: fatpaths-sc20` run
        64 KiB flows."""
        if not isinstance(data, dict) or "size" in data or data.get("profile") is None:
            return data
        from fatpaths_cfg.sim.profiles import resolve_profile

        try:
            preset = resolve_profile(str(data["profile"]), str(data.get("transport", "ndp")))
        except ValueError:
            return data  # the profile is checked with the run
        return {**data, "size": preset.size} if preset.size else data

    @field_validator("size")
    @classmethod
    def _size(cls, value: str | list[str]) -> str | list[str]:
        from fatpaths_cfg.sim.workloads import SIZE_DISTRIBUTIONS

        if isinstance(value, list) and not value:
            raise ValueError("give at least one size")
        for size in _listed(value):
            if size not in SIZE_DISTRIBUTIONS:
                parse_bytes(size)
        return value

    @field_validator("duration")
    @classmethod
    def _duration(cls, value: str | None) -> str | None:
        if value is not None:
            parse_duration_ps(value)
        return value

    @model_validator(mode="after")
    def _poisson_needs_duration(self) -> _SimulateDefaults:
        if self.arrival_rate is not None and self.duration is None:
            raise ValueError("arrival_rate (Poisson arrivals) needs a duration, e.g. 1ms")
        return self

    @model_validator(mode="after")
    def _runs(self) -> _SimulateDefaults:
        """Every combination must be a run `fatpaths simulate` would accept."""
        from fatpaths_cfg.sim.options import SimOptions, check_run

        for params in _combinations(self.settings()):
            try:
                check_run(SimOptions(**params))
            except UserErrors as exc:
                raise ValueError(str(exc)) from None
        return self

    def settings(self) -> dict[str, Any]:
        """The settings this task records: its defaults and every setting given."""
        given = self.model_fields_set
        return {
            name: value
            for name, value in self.model_dump().items()
            if name in _SimulateDefaults.model_fields or name in given
        }


def _combinations(values: dict[str, Any]) -> list[dict[str, Any]]:
    """One parameter set per combination of the list-valued settings."""
    keys = list(values)
    return [
        dict(zip(keys, combo, strict=True))
        for combo in itertools.product(*(_listed(values[k]) for k in keys))
    ]


def _simulate_task() -> type[_SimulateDefaults]:
    """The `simulate:` block: the defaults above plus every other setting a sweep may set
    (`SWEEP_SETTINGS`), each a value or a list, bounded as the command line bounds it."""
    from typing import get_type_hints

    from pydantic import create_model

    from fatpaths_cfg.sim.options import SWEEP_SETTINGS, SimOptions, setting_fields

    hints = get_type_hints(SimOptions)
    extra: dict[str, Any] = {}
    for item in setting_fields():
        if item.name not in SWEEP_SETTINGS or item.name in _SimulateDefaults.model_fields:
            continue
        kind = hints[item.name]
        bounds = {"ge": item.metadata["min"], "le": item.metadata["max"]}
        one: Any = Annotated[kind, Field(strict=False, **bounds)]
        extra[item.name] = (one | list[one] | None, None)
    return create_model("SimulateTask", __base__=_SimulateDefaults, **extra)


SimulateTask = _simulate_task()


class TaskEntry(_Strict):
    analyze: AnalyzeTask | None = None
    simulate: SimulateTask | None = None  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _one_kind(self) -> TaskEntry:
        if (self.analyze is None) == (self.simulate is None):
            raise ValueError("each task is either `analyze: {...}` or `simulate: {...}`")
        return self


class SweepSpec(_Strict):
    sweep: Name
    description: str | None = None
    topologies: Annotated[list[TopologyEntry], Field(min_length=1)]
    routing: RoutingPoint = RoutingPoint()
    grid: RoutingGrid | None = None
    points: Annotated[list[RoutingPoint], Field(min_length=1)] | None = None
    seeds: Annotated[list[Seed], Field(min_length=1)] = [1]
    tasks: Annotated[list[TaskEntry], Field(min_length=1)]


@dataclass(frozen=True)
class Topology:
    """One fabric of the sweep, as workers receive it."""

    name: str
    source: str
    file: str
    inventory: dict[str, Any]
    switches: int
    hosts: int
    links: int


@dataclass(frozen=True)
class SweepTask:
    key: str
    payload: dict[str, Any]


@dataclass(frozen=True)
class SweepPlan:
    name: str
    file: Path
    topologies: list[Topology]
    tasks: list[SweepTask]


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def task_key(payload: dict[str, Any]) -> str:
    """Hash of everything the task computes from (not its sweep name or display fields)."""
    identity = {
        "version": TASK_VERSION,
        "inventory": payload["topology"]["inventory"],
        "routing": payload["routing"],
        "task": payload["task"],
        "params": payload["params"],
    }
    return hashlib.sha256(canonical_json(identity).encode()).hexdigest()[:20]


# Measured: planning 8,000 tasks of a generated Slim Fly q=5 held 2.3 kB a task and took
# 1 ms a task; a task of an inventory also holds a copy of the inventory.
PLANNED_TASK_BYTES = 2300
PLANNED_TASK_SECONDS = 1e-3
# Share of the memory available now that planning a sweep may use.
PLAN_MEMORY_SHARE = 0.5


def planned_tasks(spec: SweepSpec) -> tuple[int, str]:
    """The tasks a sweep file asks for, counted without building one, and how."""
    if spec.grid is not None:
        axes = spec.grid.model_dump(exclude_none=True).values()
        points = math.prod(len(axis) for axis in axes) + len(spec.points or [])
    else:
        points = len(spec.points or []) or 1
    params = 0
    for entry in spec.tasks:
        block = entry.analyze or entry.simulate
        assert block is not None
        params += math.prod(len(_listed(value)) for value in block.model_dump().values())
    factors = (len(spec.topologies), points, len(spec.seeds), params)
    total = math.prod(factors)
    how = " x ".join(
        f"{count:,} {what}{'s' if count != 1 else ''}"
        for count, what in zip(
            factors, ("topology", "routing point", "seed", "task variant"), strict=True
        )
    )
    return total, how.replace("topologys", "topologies")


def check_sweep_size(
    spec: SweepSpec, source: SourceMap, max_tasks: int | None, inventory_bytes: int = 0
) -> None:
    """Refuse, before a task is built, a sweep whose plan alone would not fit in memory."""
    total, how = planned_tasks(spec)
    per_task = PLANNED_TASK_BYTES + inventory_bytes
    cap = (
        max_tasks
        if max_tasks is not None
        else int(available_memory() * PLAN_MEMORY_SHARE // per_task)
    )
    if total <= cap:
        return
    where = ("grid",) if spec.grid is not None else ("tasks",)
    detail = f"{total:,} tasks ({how}) need about {gib(total * per_task)} to plan"
    if max_tasks is None:
        detail += f", {gib(available_memory())} available"
    detail += f", and {cpu_time(total * PLANNED_TASK_SECONDS)} before the first one runs"
    raise UserErrors.single(
        source.file,
        format_path(where),
        detail,
        f"fewer values, or --max-tasks {total} to try anyway",
        line=source.line_of(where),
    )


def load_sweep(path: Path, max_tasks: int | None = None) -> SweepPlan:
    """Read, validate and expand a sweep file; every problem is a located user error."""
    data, source = load_yaml(path)
    if not isinstance(data, dict):
        raise UserErrors.single(
            source.file, "", "a sweep file must be a mapping", "start with `sweep: NAME`", line=1
        )
    try:
        spec = SweepSpec.model_validate(data)
    except ValidationError as exc:
        raise UserErrors(validation_errors(exc, data, source, SweepSpec)) from None
    check_sweep_size(spec, source, max_tasks)
    topologies = _load_topologies(spec, path, source)
    # Each task carries its topology's inventory: counted again once they are known.
    largest = max(len(canonical_json(t.inventory)) for t in topologies)
    check_sweep_size(spec, source, max_tasks, largest)
    points = _routing_points(spec, topologies, source)
    tasks = [
        SweepTask(task_key(payload), payload)
        for payload in _payloads(spec.sweep, topologies, points, spec.seeds, spec.tasks)
    ]
    return SweepPlan(spec.sweep, path, topologies, tasks)


def _load_topologies(spec: SweepSpec, path: Path, source: SourceMap) -> list[Topology]:
    topologies: list[Topology] = []
    errors: list[UserError] = []
    for i, entry in enumerate(spec.topologies):
        try:
            loaded, label, fabric = _load_entry(entry, path, source, ("topologies", i))
        except UserErrors as exc:
            errors.extend(exc.errors)
            continue
        topologies.append(
            Topology(
                entry.name or fabric.name,
                label,
                loaded.source.file,
                loaded.spec.model_dump(mode="json"),
                fabric.nr,
                len(fabric.hosts),
                len(fabric.links),
            )
        )
    if errors:
        raise UserErrors(errors)
    seen: dict[str, int] = {}
    for i, topology in enumerate(topologies):
        if topology.name in seen:
            raise UserErrors.single(
                source.file,
                format_path(("topologies", i)),
                f"fabric name {topology.name!r} already used by topologies[{seen[topology.name]}]",
                "give this entry its own `name:`",
                line=source.line_of(("topologies", i)),
            )
        seen[topology.name] = i
    return topologies


def _load_entry(
    entry: TopologyEntry, path: Path, source: SourceMap, where: PathKey
) -> tuple[LoadedInventory, str, Fabric]:
    if entry.inventory is not None:
        inventory = path.parent / entry.inventory
        if not inventory.is_file():
            raise UserErrors.single(
                source.file,
                format_path((*where, "inventory")),
                f"inventory {entry.inventory!r} not found",
                "paths are relative to the sweep file",
                line=source.line_of((*where, "inventory")),
            )
        data, inventory_source = load_yaml(inventory)
        if isinstance(data, dict) and entry.name is not None:
            data = {**data, "fabric": entry.name}
        loaded = validate_inventory(data, inventory_source, inventory)
        return loaded, entry.inventory, build_fabric(loaded)
    assert entry.generate is not None
    generate = entry.generate.model_dump()
    params = " ".join(f"{k}={v}" for k, v in generate.items() if k != "kind")
    name = entry.name or "-".join(
        [str(generate["kind"]), *(f"{k}{v}" for k, v in generate.items() if k != "kind")]
    )
    # Located in the sweep file: a bad generator parameter points at this entry's line.
    shifted = SourceMap(
        source.file, {key[len(where) :]: line for key, line in _under(source, where).items()}
    )
    data = {"fabric": name, "generate": generate}
    loaded = validate_inventory(data, shifted, path)
    try:
        # Expanding runs the generator: a bad parameter surfaces here, not on a worker.
        fabric = build_fabric(loaded)
    except UserErrors as exc:
        prefix = format_path(where)
        raise UserErrors(
            [replace(e, field=f"{prefix}.{e.field}" if e.field else prefix) for e in exc.errors]
        ) from None
    return loaded, f"generate {generate['kind']} {params}".strip(), fabric


def _under(source: SourceMap, where: PathKey) -> dict[PathKey, int]:
    found = {key: line for key, line in source.lines.items() if key[: len(where)] == where}
    return {**found, where: source.line_of(where)}


@dataclass(frozen=True)
class _Point:
    values: dict[str, Any]
    # Where each value was written, and where the point as a whole was.
    origins: dict[str, PathKey]
    where: PathKey


def _routing_points(spec: SweepSpec, topologies: list[Topology], source: SourceMap) -> list[_Point]:
    fixed = spec.routing.model_dump(exclude_none=True)
    origins: dict[str, PathKey] = {key: ("routing", key) for key in fixed}
    points: list[_Point] = []
    if spec.grid is not None:
        axes = spec.grid.model_dump(exclude_none=True)
        for combo in itertools.product(*(list(enumerate(v)) for v in axes.values())):
            values = {k: value for k, (_, value) in zip(axes, combo, strict=True)}
            at: dict[str, PathKey] = {
                k: ("grid", k, i) for k, (i, _) in zip(axes, combo, strict=True)
            }
            points.append(_Point({**fixed, **values}, {**origins, **at}, ("grid",)))
    for i, point in enumerate(spec.points or []):
        values = point.model_dump(exclude_none=True)
        listed: dict[str, PathKey] = {k: ("points", i, k) for k in values}
        points.append(_Point({**fixed, **values}, {**origins, **listed}, ("points", i)))
    if spec.grid is None and spec.points is None:
        points.append(_Point(fixed, origins, ("routing",)))
    _check_points(points, topologies, source)
    return points


def _check_points(points: list[_Point], topologies: list[Topology], source: SourceMap) -> None:
    """Every point must make a valid routing block over every inventory's own."""
    errors = ErrorCollector()
    for topology in topologies:
        for point in points:
            try:
                RoutingSpec.model_validate({**topology.inventory["routing"], **point.values})
            except ValidationError as exc:
                for error in exc.errors():
                    field = str(error["loc"][0]) if error["loc"] else ""
                    where = point.origins.get(field, point.where)
                    message = str(error["msg"]).removeprefix("Value error, ")
                    errors.add(
                        source.file,
                        source.line_of(where),
                        format_path(where),
                        f"{message}, got {error.get('input')!r}" if field else message,
                    )
    errors.raise_if_any()


def _task_params(entry: TaskEntry) -> list[tuple[str, dict[str, Any]]]:
    """One parameter set per combination of the task's list-valued fields."""
    if entry.simulate is not None:
        return [("simulate", params) for params in _combinations(entry.simulate.settings())]
    assert entry.analyze is not None
    return [("analyze", params) for params in _combinations(entry.analyze.model_dump())]


def _payloads(
    sweep: str,
    topologies: list[Topology],
    points: list[_Point],
    seeds: list[int],
    tasks: list[TaskEntry],
) -> list[dict[str, Any]]:
    expanded = [params for entry in tasks for params in _task_params(entry)]
    payloads: list[dict[str, Any]] = []
    seen: set[str] = set()
    for topology, point, seed, (kind, params) in itertools.product(
        topologies, points, seeds, expanded
    ):
        values = dict(point.values)
        if layer_independent(kind, params):
            # One layer, the whole network: the same task at every layer count and rho.
            values = {k: v for k, v in values.items() if k not in LAYER_FIELDS} | {"layers": 1}
        routing = RoutingSpec.model_validate(
            {**topology.inventory["routing"], **values, "seed": seed}
        ).model_dump(mode="json")
        payload = {
            "sweep": sweep,
            "topology": asdict(topology),
            "routing": routing,
            "task": kind,
            "params": params,
        }
        # Repeated grid values or points would only recompute the same row.
        key = task_key(payload)
        if key not in seen:
            seen.add(key)
            payloads.append(payload)
    return payloads
