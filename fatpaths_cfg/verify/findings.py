"""What the forwarding checker finds: the kinds of fault, one finding each, and a platform's
result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fatpaths_cfg.verify.deadlock import LayerRoutes
from fatpaths_cfg.verify.model import Location

NO_HOP = -1
UNREACHABLE = 255

# Route faults, most telling first: a route is reported once, under its first fault.
UNKNOWN_PREFIX = "unknown-prefix"
CROSS_PLANE = "cross-plane"
BAD_NEXT_HOP = "bad-next-hop"
OWN_SUBNET = "route-to-own-subnet"
OUTSIDE_LAYER = "outside-layer"
NOT_SHORTEST = "not-shortest"
UP_DOWN_TURN = "up-down-violation"
DIFFERS = "differs-from-fabric-json"
MISSING_ROUTE = "missing-route"
MISSING_ADDRESS = "missing-address"
UNEXPECTED_ADDRESS = "unexpected-address"
MISSING_HOST_ADDRESS = "missing-host-address"
DUPLICATE_ADDRESS = "duplicate-address"
HOST_ON_LINK = "host-address-is-link-address"
MISSING_CONFIG = "missing-config"
UNPARSED = "unparsed-line"
LAYER_ONE_NOT_MINIMAL = "layer-1-not-minimal"
# Backup routes (`routing.backup`), read apart from the primaries.
BACKUP_LOOP = "backup-loop"
BACKUP_NOT_LOOP_FREE = "backup-not-loop-free"
BACKUP_DIFFERS = "backup-differs-from-fabric-json"
MISSING_BACKUP = "missing-backup"
ROUTE_FAULTS = (
    UNKNOWN_PREFIX,
    CROSS_PLANE,
    BAD_NEXT_HOP,
    OWN_SUBNET,
    OUTSIDE_LAYER,
    NOT_SHORTEST,
    DIFFERS,
)


@dataclass(frozen=True)
class Finding:
    kind: str
    message: str
    location: Location | None
    layer: int | None = None
    source: str | None = None
    destination: str | None = None
    path: tuple[str, ...] = ()
    walks_broken: int = 0

    def __str__(self) -> str:
        where = f"{self.location}: " if self.location else ""
        return f"{where}{self.kind}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "message": self.message,
            "file": self.location.file if self.location else None,
            "line": self.location.line if self.location else None,
            "layer": self.layer,
            "source": self.source,
            "destination": self.destination,
            "path": list(self.path),
            "walks_broken": self.walks_broken,
        }


@dataclass(frozen=True)
class BackupSummary:
    """The backup routes' check: single-cable failures walked per table (layer, family)."""

    routes: int
    failures: int
    walks: int  # walks a failure touched, over all failures
    dropped: int  # of those, walks that end without a route (the host moves the flow)
    loops: int

    def __str__(self) -> str:
        return (
            f"backups: {self.routes} routes; {self.failures} single-cable failures break "
            f"{self.walks} primary walks: {self.walks - self.dropped - self.loops} saved by a "
            f"backup, "
            f"{self.dropped} dropped, {self.loops} loop(s)"
        )

    def to_json(self) -> dict[str, int]:
        return {
            "routes": self.routes,
            "failures": self.failures,
            "walks": self.walks,
            "dropped": self.dropped,
            "loops": self.loops,
        }


@dataclass
class ForwardingCheck:
    platform: str
    findings: list[Finding] = field(default_factory=list)
    walks: int = 0
    routes: int = 0
    tables: int = 0
    host_addresses: int = 0
    seconds: dict[str, float] = field(default_factory=dict)
    # Every route that names a neighbour, sound or not (a faulty route still forwards, so it
    # still makes packets wait), with its layer.
    forwarding: LayerRoutes | None = None
    # What check_forwarding's `derive` computed from `forwarding`.
    derived: Any = None
    backups: BackupSummary | None = None  # when the configs hold backup routes

    @property
    def ok(self) -> bool:
        return not self.findings


# A host route a switch needs: (switch, port, address without prefix length).
HostRouteKey = tuple[str, str, str | None]
