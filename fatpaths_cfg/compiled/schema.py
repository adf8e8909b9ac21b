"""The versions of `fabric.json`: the one compile writes, and those a reader accepts.

Kept apart from the IR (`ir.py`), which imports the compiler's models (addressing, layers,
routing): reading a compiled directory back needs only these names.
"""

from __future__ import annotations

# 2: switches, hosts and ports in name order, links in the order of their ends, layers and
# tie-breaks drawn from names (a fabric compiled under 1 sees its random layers re-rolled once).
SCHEMA = "fatpaths.fabric/2"

# Versions of fabric.json whose names, cables, layers and tables read alike: what looks back at
# an earlier output (`plan`, `compile --keep-layers`) accepts both, so an upgrade can be
# reviewed and kept small.
EARLIER_SCHEMAS = ("fatpaths.fabric/1", SCHEMA)
