"""The compiled fabric: what compile builds (`CompiledFabric`, the IR), the typed view every
later stage reads (`LoadedCompiled`), and reading that view back from an output directory."""

from typing import TYPE_CHECKING

from fatpaths_cfg.compiled.read import CHECKSUMMED, CHECKSUMS, load_compiled
from fatpaths_cfg.compiled.schema import EARLIER_SCHEMAS, SCHEMA
from fatpaths_cfg.compiled.view import (
    AddressRecords,
    FamilyAddresses,
    LayerRecord,
    LoadedCompiled,
    view_of,
)

if TYPE_CHECKING:
    from fatpaths_cfg.compiled.ir import CompiledFabric


def __getattr__(name: str) -> object:
    # The IR imports the compiler's models (addressing, layers, routing); a command that only
    # reads a compiled directory back (simulate, verify, analyze) never loads them.
    if name == "CompiledFabric":
        from fatpaths_cfg.compiled.ir import CompiledFabric

        return CompiledFabric
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
