"""The type stub `_native.pyi` describes the extension module as built: the same functions,
classes, methods, properties and constants, with the same parameter names and the same
optional ones."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

import pytest

from fatpaths_cfg import _native

STUB = Path(_native.__file__).with_name("_native.pyi")
# What the built module exports (the stub cannot declare `__all__` for itself).
EXPORTED: list[str] = vars(_native)["__all__"]

# A parameter as (name, has a default); `self` is left out.
Params = tuple[tuple[str, bool], ...]


def _stub_params(node: ast.FunctionDef) -> Params:
    args = node.args
    positional = args.posonlyargs + args.args
    first_default = len(positional) - len(args.defaults)
    params = [(a.arg, i >= first_default) for i, a in enumerate(positional)]
    params += [
        (a.arg, d is not None) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
    ]
    return tuple(p for p in params if p[0] != "self")


def _is_property(node: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "property" for d in node.decorator_list)


def _stub() -> dict[str, Any]:
    """Top-level names of the stub: functions map to their parameters, classes to a dict of
    members (methods to parameters, properties to "property")."""
    names: dict[str, Any] = {}
    for node in ast.parse(STUB.read_text()).body:
        if isinstance(node, ast.FunctionDef):
            names[node.name] = _stub_params(node)
        elif isinstance(node, ast.ClassDef):
            members: dict[str, Any] = {}
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    members[item.name] = "property" if _is_property(item) else _stub_params(item)
            names[node.name] = members
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = "constant"
    return names


def _runtime_params(obj: object) -> Params:
    signature = inspect.signature(obj)  # type: ignore[arg-type]
    return tuple(
        (p.name, p.default is not inspect.Parameter.empty)
        for p in signature.parameters.values()
        if p.name != "self"
    )


def _runtime() -> dict[str, Any]:
    names: dict[str, Any] = {}
    for name in EXPORTED:
        obj = getattr(_native, name)
        if inspect.isclass(obj):
            members: dict[str, Any] = {"__init__": _runtime_params(obj)}
            for member, value in vars(obj).items():
                if inspect.isgetsetdescriptor(value):
                    members[member] = "property"
                elif not member.startswith("_"):
                    members[member] = _runtime_params(value)
            names[name] = members
        elif callable(obj):
            names[name] = _runtime_params(obj)
        else:
            names[name] = "constant"
    return names


def test_stub_lists_what_the_module_exports() -> None:
    assert sorted(_stub()) == sorted(EXPORTED)


@pytest.mark.parametrize("name", sorted(EXPORTED))
def test_stub_signatures_match_the_module(name: str) -> None:
    stub = _stub()
    assert name in stub, f"{name} is missing from {STUB.name}"
    assert stub[name] == _runtime()[name]


def test_the_module_says_how_it_was_built() -> None:
    # "pgo" after `.ci/pgo_build.py`, "plain" from `pip install -e .` or cargo alone.
    assert _native.BUILD in {"plain", "pgo"}
