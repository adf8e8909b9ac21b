"""`dumps_json` writes exactly what `json.dumps(indent=2, ensure_ascii=False)` writes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fatpaths_cfg.support.output import dumps_json

CASES: list[Any] = [
    {},
    [],
    "x",
    3,
    None,
    {"a": [1, 2.5, True, None, 'é"\n\\', {"b": {}}, []], "c": {"d": (1, 2)}},
    {1: 2, False: 3, None: 4, 2.5: 5},
    [float("nan"), float("inf"), -0.0, 10**30],
    {"\u2028": "\x00\t", "nested": [[[{"deep": [1]}]]]},
]


@pytest.mark.parametrize("value", CASES)
def test_matches_the_json_module(value: Any) -> None:
    assert dumps_json(value) == json.dumps(value, indent=2, ensure_ascii=False) + "\n"
