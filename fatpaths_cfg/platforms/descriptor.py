"""What a platform is, as data: one `Platform` descriptor that every stage reads.

A platform is one package, `fatpaths_cfg/platforms/<name>/`: the descriptor (its `__init__`),
the code only it runs (`render`, `reader`, ...) and its `templates/`. The descriptor holds what
needs no stage directly (capabilities, limits, port naming, containerlab interface names) and
names the code a stage runs for the platform by reference (`"module:attribute"`, imported when
first used), the way `inventory.layer_algorithms` names layer builders: the inventory schema
reads the registry for the platform names, and render reads it too, so a descriptor that
imported its render code (which imports render) or its reader (which imports verify) would put
a stage below the inventory and verify below render (the pipeline layers of pyproject.toml,
checked by `lint-imports`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from fatpaths_cfg.ifnames import kernel_ifname
from fatpaths_cfg.platforms.port_names import PortNaming

# The platform packages: `<name>/` holds a platform's descriptor (its `__init__`), its code and
# its `templates/`, package data of fatpaths_cfg that a wheel installs beside the code.
PACKAGES = Path(__file__).resolve().parent


def default_template_folder(name: str) -> Path:
    """Where the templates of platform `name` are unless its descriptor names a folder."""
    return PACKAGES / name / "templates"


@dataclass(frozen=True)
class SwitchFile:
    """One file the platform writes for every switch, how it is made and how it is read back.

    path:     under `configs/<platform>/`; `{switch}` stands for the switch name.
    template: a Jinja template of the platform's folder (`Platform.templates`), rendered with
              `view` (a `render.base.SwitchView`) ...
    builder:  ... or `"module:function"`, `function(view) -> str`, for files that are
              structured data (JSON) or need more context than the view.
    reader:   `"module:function"`, `function(reader, relative)`, that reads the file back for
              `fatpaths verify` into a `verify.readers.SwitchReader` (routes, addresses, MACs).
    holds:    what the reader finds in the file: "routes" (routes, MACs, trunks), "addresses"
              (interface addresses only) or "both". verify reads the files of a platform
              without "both" in two processes at once: routes for the route checks, addresses
              for the address checks.
    """

    path: str
    reader: str
    template: str | None = None
    builder: str | None = None
    holds: Literal["routes", "addresses", "both"] = "both"

    def at(self, switch: str) -> str:
        return self.path.format(switch=switch)


@dataclass(frozen=True)
class Limits:
    """What one switch holds at most; compile refuses a fabric over a limit."""

    routes: int  # static route entries (prefix, next hop)
    vlans: int
    static_macs: int


@dataclass(frozen=True)
class Snapshot:
    """How Batfish sees the platform's switches.

    folder:  the snapshot folder Batfish reads this platform's own files from (`configs` for
             vendor configs, `sonic_configs` for SONiC device directories); None when Batfish
             cannot read them, and the switch is modelled as `model` instead.
    model:   with no folder: the platform whose files stand in for the switch's.
    shared:  own files (paths as in `SwitchFile.path`) that are valid in the model's device
             folder as they are, so their bytes are reused rather than rendered again.
    """

    folder: str | None
    model: str | None = None
    shared: tuple[str, ...] = ()
    # `"module:function"`, `function(switch, files) -> files`: the own files (bytes, keyed as
    # rendered) as Batfish reads them, e.g. Cumulus' one concatenated file; None: as rendered.
    builder: str | None = None


@dataclass(frozen=True)
class ClabNode:
    """The switch as a containerlab node (`fatpaths lab clab`).

    kind:   the containerlab kind.
    image:  the image's name in `lab.clab.ClabImages` (`frr`, `host`, or the platform's own).
    default_image: the tag of that image unless the user names another; None for the images
            fatpaths builds itself (`frr`, `host`).
    binds:  (own file as in `SwitchFile.path`, path in the container, with `:ro` if read-only).
    exec:   commands run in the node once it is up.
    startup_config: own file the kind loads as its startup config (cEOS), if any.
    ifname: `function(ports, port) -> str`: the name inside the node of a fabric port, given
            the switch's ports in order.
    """

    kind: str
    image: str
    ifname: Callable[[Sequence[str], str], str]
    default_image: str | None = None
    binds: tuple[tuple[str, str], ...] = ()
    exec: tuple[str, ...] = ()
    startup_config: str | None = None


@dataclass(frozen=True)
class NetnsNode:
    """The switch in the namespace lab (`fatpaths lab up`): a setup script run inside its
    namespace, and an frr.conf for FRR daemons when the routes live there (else the script
    installs them)."""

    script: str
    frr_conf: str | None = None


@dataclass(frozen=True)
class Deploy:
    """How `fatpaths deploy` pushes the platform.

    candidate: the compiled file or folder (as in `SwitchFile.path`) loaded as the candidate.
    driver:    a NAPALM driver name (`eos`), or `"module:Class"` for a driver of fatpaths'.
    hint:      what to install when the driver is missing.
    ssh:       the driver is one of fatpaths' SSH drivers: it takes the key file, known hosts,
               the device book's remote paths (state_dir, frr_dir, vty_socket, lldp_socket) and
               the fabric's ports as optional arguments.
    routes:    `"module:function"`, `function(candidate path) -> deploy.state.RouteTable`: the
               compiled routes, compared with what the device reads back; None: not compared.
    rounds:    the driver changes single routes, so `deploy --from` can move the platform in
               loop-free rounds: it has `route_change_command(add, remove) -> str`, the shell
               command that adds `add` and then removes `remove` (deploy.state.RouteLine
               lists), each state in between one the plan proved. False: whole configs only.
    """

    candidate: str
    driver: str
    hint: str = "install its NAPALM driver"
    ssh: bool = False
    routes: str | None = None
    rounds: bool = False


@dataclass(frozen=True)
class Platform:
    """One target OS: everything compile, verify, Batfish, the labs and deploy need to know.

    name:      the inventory's `platform:` value and the `configs/<name>/` folder.
    summary:   one line for help texts.
    files:     what it writes per switch, in order (see `SwitchFile`).
    encodings: layer encodings it forwards (`prefix`: routes per layer prefix; `vlan`: a VLAN
               per layer with static MAC entries).
    families:  address families it routes (`ipv4`, `ipv6`).
    ecmp:      it installs several next hops per prefix (`routing.ecmp_within_layer`).
    floating:  it holds a floating static route (a higher administrative distance) that takes
               over when the primary's interface goes down (`routing.backup`).
    limits:    per-switch table sizes (see `Limits`).
    kernel:    it forwards in the Linux kernel: its files name ports by `fatpaths_cfg.ifnames`'
               kernel rule and hold a route per host (verify reads both back).
    snapshot:  how Batfish reads it (see `Snapshot`).
    clab:      its containerlab node (see `ClabNode`), None if containerlab cannot run it.
    netns:     its node in the namespace lab, None if that lab cannot run it.
    deploy:    how it is deployed, None if it cannot be.
    port_names: how its configs name inventory ports (a `PortNaming`), None: as they are.
    templates: the folder of its templates, `fatpaths_cfg/platforms/<name>/templates/` unless
               given; templates name each other by platform (`{% include "frr/routes.j2" %}`).
    """

    name: str
    summary: str
    files: tuple[SwitchFile, ...]
    encodings: tuple[str, ...]
    limits: Limits
    snapshot: Snapshot
    clab: ClabNode | None = None
    families: tuple[str, ...] = ("ipv4", "ipv6")
    ecmp: bool = True
    floating: bool = True
    kernel: bool = False
    netns: NetnsNode | None = None
    deploy: Deploy | None = None
    templates: Path | None = None
    # The NOS knows only its own port names (`swp7`, `et-0/0/7`), so its files, its Batfish
    # wiring and its readers rename inventory ports by this rule; None: they keep their names.
    port_names: PortNaming | None = None

    @property
    def template_folder(self) -> Path:
        return self.templates if self.templates is not None else default_template_folder(self.name)

    def paths(self, switch: str) -> tuple[str, ...]:
        """A switch's files, relative to `configs/<name>/`."""
        return tuple(file.at(switch) for file in self.files)


@cache
def resolve(reference: str) -> Any:
    """`"package.module:attribute"` -> the attribute (imported on first use)."""
    module, _, attribute = reference.partition(":")
    target: Any = importlib.import_module(module)
    for part in attribute.split("."):
        target = getattr(target, part)
    return target


# Where stage code lives, for the references of the descriptors.
READERS = "fatpaths_cfg.verify.readers"
# Where containerlab nodes find the scripts bound into them.
CLAB_ROOT = "/fatpaths"
# The FRR routes file of every platform that runs FRR from the shared frr.conf template.
FRR_CONF = SwitchFile(
    "{switch}/frr.conf", f"{READERS}:read_frr_routes", template="frr.conf.j2", holds="routes"
)


def kernel_port_name(ports: Sequence[str], port: str) -> str:
    """The Linux kernel's name of a port (frr and linux switches, the labs)."""
    return kernel_ifname(port)
