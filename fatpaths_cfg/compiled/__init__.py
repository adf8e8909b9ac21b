"""The compiled fabric: what compile builds (`CompiledFabric`, the IR), the typed view every
later stage reads (`LoadedCompiled`), and reading that view back from an output directory."""

from fatpaths_cfg.compiled.ir import EARLIER_SCHEMAS, SCHEMA, CompiledFabric
from fatpaths_cfg.compiled.read import CHECKSUMMED, CHECKSUMS, load_compiled
from fatpaths_cfg.compiled.view import (
    AddressRecords,
    FamilyAddresses,
    LayerRecord,
    LoadedCompiled,
    view_of,
)

__all__ = [
    "CHECKSUMMED",
    "CHECKSUMS",
    "EARLIER_SCHEMAS",
    "SCHEMA",
    "AddressRecords",
    "CompiledFabric",
    "FamilyAddresses",
    "LayerRecord",
    "LoadedCompiled",
    "load_compiled",
    "view_of",
]
