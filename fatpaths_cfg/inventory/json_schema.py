"""JSON Schema of the inventory format, generated from the pydantic models (for editors)."""

from __future__ import annotations

import json
from typing import Any

from fatpaths_cfg.inventory.field_docs import FIELD_DOCS
from fatpaths_cfg.inventory.schema import InventorySpec
from fatpaths_cfg.topologies import KINDS

SCHEMA_ID = "https://fatpaths.example/inventory.schema.json"
SCHEMA_TITLE = "fatpaths inventory"


def inventory_json_schema() -> dict[str, Any]:
    schema = InventorySpec.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = SCHEMA_TITLE
    for model, fields in FIELD_DOCS.items():
        target = schema if model == "InventorySpec" else schema["$defs"][model]
        for name, text in fields.items():
            target["properties"][name]["description"] = text
    generate = schema.get("$defs", {}).get("GenerateSpec")
    if generate is not None:
        # The generator block's parameters depend on `kind`; list them for completion.
        generate["properties"]["kind"]["enum"] = sorted(KINDS)
        generate["description"] = "Topology generator; parameters per kind: " + "; ".join(
            f"{kind}: {', '.join(p.name for p in specs)}" for kind, specs in sorted(KINDS.items())
        )
    return schema


def inventory_json_schema_text() -> str:
    return json.dumps(inventory_json_schema(), indent=2, sort_keys=True) + "\n"
