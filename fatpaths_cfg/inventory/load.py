"""Load an inventory into a validated `InventorySpec`, reporting every problem with its line."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from fatpaths_cfg.errors import UserError, UserErrors
from fatpaths_cfg.inventory.paths import PathKey, format_path
from fatpaths_cfg.inventory.schema import SAFE_NAME, SAFE_PORT, InventorySpec
from fatpaths_cfg.inventory.yaml_source import SourceMap, load_yaml
from fatpaths_cfg.support.memory import collector_paused


@dataclass(frozen=True)
class LoadedInventory:
    spec: InventorySpec
    source: SourceMap
    path: Path


def _data_path(data: Any, loc: tuple[Any, ...]) -> PathKey:
    """Keep the parts of a pydantic error location that are real keys or indices of the data.

    Pydantic adds union-member and validator names to locations; those are not the user's.
    """
    path: list[str | int] = []
    current = data
    for part in loc:
        if isinstance(current, dict) and isinstance(part, str):
            path.append(part)
            current = current.get(part)
        elif isinstance(current, list) and isinstance(part, int):
            path.append(part)
            current = current[part] if 0 <= part < len(current) else None
    return tuple(path)


def _allowed_keys(model: type[BaseModel], path: PathKey) -> list[str]:
    """The valid keys at the mapping that holds `path`'s last element."""
    fields = model.model_fields
    current: type[BaseModel] | None = model
    for part in path[:-1]:
        if isinstance(part, int) or current is None:
            continue
        field = fields.get(part)
        if field is None:
            return []
        annotation = field.annotation
        inner = getattr(annotation, "__args__", (annotation,))
        current = next((a for a in inner if isinstance(a, type) and issubclass(a, BaseModel)), None)
        fields = current.model_fields if current else {}
    return sorted(fields)


def _describe(
    error: dict[str, Any], path: PathKey, model: type[BaseModel] = InventorySpec
) -> tuple[str, str]:
    kind = error["type"]
    given = error.get("input")
    if kind == "extra_forbidden":
        valid = _allowed_keys(model, path)
        return "unknown key", ("valid keys: " + ", ".join(valid)) if valid else ""
    if kind == "missing":
        return "required field is missing", ""
    if kind == "string_pattern_mismatch":
        pattern = error.get("ctx", {}).get("pattern", "")
        if pattern == SAFE_NAME:
            return (
                f"{given!r} is not a safe name",
                "letters, digits, '-' and '_', starting with a letter, at most 63 characters",
            )
        if pattern == SAFE_PORT:
            return (
                f"{given!r} is not a safe port name",
                "letters, digits, '/', '.', '-' and '_', starting with a letter",
            )
        return f"{given!r} does not match {pattern}", ""
    message = str(error["msg"])
    if message.startswith("Value error, "):
        message = message[len("Value error, ") :]
    if given is not None and not isinstance(given, dict | list) and kind != "value_error":
        message = f"{message}, got {given!r}"
    return message, ""


def _merge_union_branches(
    located: list[tuple[PathKey, dict[str, Any]]],
) -> list[tuple[PathKey, list[dict[str, Any]]]]:
    """One entry per path. A field typed `A | B` fails once per branch; the user needs one line.

    A branch that failed deeper (inside a list, say) is the informative one, so a type error at
    a path that is a prefix of another error's path is dropped.
    """
    grouped: dict[PathKey, list[dict[str, Any]]] = {}
    for path, error in located:
        grouped.setdefault(path, []).append(error)
    paths = list(grouped)
    result = []
    for path in paths:
        deeper = any(other[: len(path)] == path and len(other) > len(path) for other in paths)
        errors = grouped[path]
        if deeper and all(e["type"].endswith("_type") for e in errors):
            continue
        result.append((path, errors))
    return result


def validation_errors(
    exc: ValidationError, data: Any, source: SourceMap, model: type[BaseModel] = InventorySpec
) -> list[UserError]:
    located = [(_data_path(data, tuple(e["loc"])), dict(e)) for e in exc.errors()]
    errors = []
    for path, group in _merge_union_branches(located):
        if len(group) > 1 and all(e["type"].endswith("_type") for e in group):
            expected = " or ".join(str(e["msg"]).removeprefix("Input should be ") for e in group)
            message, hint = f"should be {expected}, got {group[0].get('input')!r}", ""
        else:
            message, hint = _describe(group[0], path, model)
        errors.append(
            UserError(source.file, source.line_of(path), format_path(path), message, hint)
        )
    return errors


def load_inventory(path: Path) -> LoadedInventory:
    with collector_paused():
        data, source = load_yaml(path)
        return validate_inventory(data, source, path)


def validate_inventory(data: Any, source: SourceMap, path: Path) -> LoadedInventory:
    """Parsed inventory data (with its source lines) -> a validated inventory."""
    if not isinstance(data, dict):
        raise UserErrors.single(
            source.file,
            "",
            "the inventory must be a mapping of keys",
            "start with `fabric: NAME`",
            line=1,
        )
    try:
        spec = InventorySpec.model_validate(data)
    except ValidationError as exc:
        raise UserErrors(validation_errors(exc, data, source)) from None
    return LoadedInventory(spec, source, path)
