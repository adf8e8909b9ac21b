"""The platform registry: every platform fatpaths renders, verifies, labs and deploys.

Each package of this one is one platform, `<name>/`: its `Platform` descriptor (see
`descriptor`) in its `__init__`, the code only it runs (`render`, `reader`) and its
`templates/`. The stages look platforms up here and nowhere else: the inventory schema's
`platform` choices, the `--platform` options, the render, verify, Batfish, lab and deploy
stages. A new platform is one package here, its name in the list below, and its goldens.
"""

from __future__ import annotations

from fatpaths_cfg.platforms import cumulus, eos, frr, junos, linux, nxos, sonic
from fatpaths_cfg.platforms.descriptor import Platform, SwitchFile, resolve

__all__ = ["DEFAULT_PLATFORM", "PLATFORMS", "Platform", "SwitchFile", "resolve"]

# In the order help texts, the JSON Schema enum and verify reports list them.
PLATFORMS: dict[str, Platform] = {
    module.PLATFORM.name: module.PLATFORM
    for module in (frr, sonic, eos, linux, cumulus, junos, nxos)
}

# What a switch is when the inventory names no platform (what the namespace lab runs).
DEFAULT_PLATFORM = "frr"
