"""The inventory schema: what a user may write, with types, ranges and safe-name rules.

Names reach rendered configs verbatim, so they are restricted to a character set that cannot
start a new config line, quote, comment or escape in any target syntax.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    field_validator,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from fatpaths_cfg.inventory.layer_algorithms import LAYER_ALGORITHM_NAMES
from fatpaths_cfg.inventory.rules import ENDPOINT, SAFE_NAME, SAFE_PORT, parse_speed_gbps
from fatpaths_cfg.platforms import DEFAULT_PLATFORM, PLATFORMS

# P-Net (CoNEXT'22) attaches a host to at most 8 parallel planes.
MAX_PLANES = 8

if TYPE_CHECKING:
    LayerAlgorithmName = str
else:
    # A Literal built from the registry: pydantic's error message and the JSON Schema's enum
    # list exactly the algorithms that exist.
    LayerAlgorithmName = Literal[LAYER_ALGORITHM_NAMES]


def _registered_platform(value: str) -> str:
    # Checked against the registry at validation time, not frozen into a Literal at import:
    # a platform registered later (a plugin, a test's throwaway one) is accepted as well.
    if value not in PLATFORMS:
        choices = ", ".join(repr(name) for name in PLATFORMS)
        raise ValueError(f"Input should be one of {choices}, got {value!r}")
    return value


class _PlatformChoices:
    """The JSON Schema's enum: the registered platforms when the schema is generated."""

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        schema["enum"] = list(PLATFORMS)
        return schema


PlatformName = Annotated[str, AfterValidator(_registered_platform), _PlatformChoices]
Name = Annotated[str, Field(pattern=SAFE_NAME)]
PortName = Annotated[str, Field(pattern=SAFE_PORT)]


def _ip_address_text(value: str) -> str:
    ipaddress.ip_address(value)  # ValueError names the bad value
    return value


# An IPv4 or IPv6 address, kept as the text the user wrote (it reaches configs verbatim).
IPAddressText = Annotated[str, AfterValidator(_ip_address_text)]


def _ip_network_text(value: str) -> str:
    ipaddress.ip_network(value)  # ValueError names the bad value
    return value


# An IPv4 or IPv6 network (a management pool of the inventory or of a devices file).
IPNetworkText = Annotated[str, AfterValidator(_ip_network_text)]


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Defaults(StrictModel):
    platform: PlatformName = DEFAULT_PLATFORM
    link_speed: str | int | float = "100G"
    host_speed: str | int | float | None = None
    # Pace host traffic to this rate (tc on each host's uplink): the half-rate rule that lets
    # adaptive or flowlet re-routing settle on a rearrangeable Clos (docs/convergence.md).
    host_flow_rate: str | int | float | None = None
    port_prefix: Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z/_-]{0,24}$")] = "Ethernet"

    @field_validator("link_speed", "host_speed", "host_flow_rate")
    @classmethod
    def _speed(cls, value: str | int | float | None) -> str | int | float | None:
        if value is not None:
            parse_speed_gbps(value)
        return value


class SwitchSpec(StrictModel):
    name: Name
    platform: PlatformName | None = None
    ports: Annotated[int, Field(ge=1, le=1024)] | list[PortName] | None = None
    mgmt: IPAddressText | None = None
    role: Name | None = None
    # The parallel dataplane (0-based); without it, inferred from the host uplinks' order.
    plane: Annotated[int, Field(ge=0, le=MAX_PLANES - 1)] | None = None


def _check_endpoint(value: str) -> str:
    if not ENDPOINT.match(value):
        raise ValueError(f"{value!r} is not SWITCH:PORT (e.g. sw1:Ethernet1, safe characters only)")
    return value


class LinkSpec(StrictModel):
    a: str
    b: str
    speed: str | int | float | None = None

    @field_validator("a", "b")
    @classmethod
    def _endpoint(cls, value: str) -> str:
        return _check_endpoint(value)

    @field_validator("speed")
    @classmethod
    def _speed(cls, value: str | int | float | None) -> str | int | float | None:
        if value is not None:
            parse_speed_gbps(value)
        return value


class HostSpec(StrictModel):
    """A host cabled into one plane (`uplink`) or into every plane (`uplinks`, one each)."""

    name: Name
    uplink: str | None = None
    uplinks: Annotated[list[str], Field(min_length=1, max_length=MAX_PLANES)] | None = None

    @field_validator("uplink")
    @classmethod
    def _endpoint(cls, value: str | None) -> str | None:
        return None if value is None else _check_endpoint(value)

    @field_validator("uplinks")
    @classmethod
    def _endpoints(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else [_check_endpoint(v) for v in value]

    @model_validator(mode="after")
    def _one_form(self) -> HostSpec:
        if (self.uplink is None) == (self.uplinks is None):
            raise ValueError(
                "give exactly one of `uplink: SWITCH:PORT` (one plane) or "
                "`uplinks: [SWITCH:PORT, ...]` (one per plane)"
            )
        return self

    @property
    def endpoints(self) -> list[str]:
        return [self.uplink] if self.uplink is not None else list(self.uplinks or [])


class GenerateSpec(BaseModel):
    """`kind` plus that kind's parameters (checked against the generator's own table)."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)
    kind: str

    def parameters(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class RoutingSpec(StrictModel):
    layers: Annotated[int, Field(ge=1, le=64)] = 4
    rho: Annotated[float, Field(gt=0.0, le=1.0, strict=False)] = 0.6
    algorithm: LayerAlgorithmName = "random"
    seed: Annotated[int, Field(ge=0, le=2**63 - 1)] = 1
    ecmp_within_layer: bool = False
    acyclic: bool = False
    paths_per_layer: Annotated[int, Field(ge=1)] | None = None
    # Unused since layers are completed by name instead of redrawn (schema fatpaths.fabric/2);
    # still accepted, so inventories written before load unchanged.
    max_resamples: Annotated[int, Field(ge=1, le=10_000)] = 100
    # PAST's non-minimal variant: each destination's tree grows from a random switch.
    past_random_root: bool = False
    # `lfa`: per (switch, layer, destination) a floating static route through a loop-free
    # alternate of the same layer, taken when the primary's cable goes down (OPERATIONS.md 3).
    backup: Literal["none", "lfa"] = "none"

    @model_validator(mode="after")
    def _compatible(self) -> RoutingSpec:
        if self.ecmp_within_layer and self.acyclic:
            raise ValueError(
                "ecmp_within_layer and acyclic cannot both be on: equal-cost alternatives of an "
                "up*/down* route may turn down->up and break deadlock freedom"
            )
        if self.backup != "none" and self.ecmp_within_layer:
            raise ValueError(
                "backup and ecmp_within_layer cannot both be on: with equal-cost next hops the "
                "other members already carry a failed one's traffic"
            )
        if self.backup != "none" and self.acyclic:
            raise ValueError(
                "backup and acyclic cannot both be on: a loop-free alternate may turn an "
                "up*/down* path up again and break deadlock freedom"
            )
        return self


class AddressingSpec(StrictModel):
    encoding: Literal["prefix", "vlan"] = "prefix"
    family: Literal["ipv4", "ipv6", "dual"] = "ipv4"
    host_pool_v4: str = "10.0.0.0/8"
    link_pool_v4: str = "172.16.0.0/12"
    loopback_pool_v4: str = "192.168.0.0/16"
    host_pool_v6: str = "fd00:fa7::/48"
    link_pool_v6: str = "fd00:fa7:1::/48"
    loopback_pool_v6: str = "fd00:fa7:2::/48"
    vlan_base: Annotated[int, Field(ge=1, le=4094)] = 100

    @field_validator("host_pool_v4", "link_pool_v4", "loopback_pool_v4")
    @classmethod
    def _v4(cls, value: str) -> str:
        ipaddress.IPv4Network(value)
        return value

    @field_validator("host_pool_v6", "link_pool_v6", "loopback_pool_v6")
    @classmethod
    def _v6(cls, value: str) -> str:
        ipaddress.IPv6Network(value)
        return value


class MgmtSpec(StrictModel):
    """Management addresses of switches that do not give their own `mgmt:` (generated
    fabrics have no per-switch entries): a per-switch map first, then the pool, where switch i
    (in fabric order) gets the pool's (i+1)-th host address."""

    pool: IPNetworkText | None = None
    addresses: dict[Name, str] = {}

    @field_validator("addresses")
    @classmethod
    def _addresses(cls, value: dict[str, str]) -> dict[str, str]:
        for address in value.values():
            ipaddress.ip_address(address)
        return value


class InventorySpec(StrictModel):
    fabric: Name
    description: str | None = None
    defaults: Defaults = Defaults()
    switches: list[SwitchSpec] = []
    links: list[LinkSpec] = []
    hosts: list[HostSpec] = []
    generate: GenerateSpec | None = None
    routing: RoutingSpec = RoutingSpec()
    addressing: AddressingSpec = AddressingSpec()
    mgmt: MgmtSpec | None = None

    @model_validator(mode="after")
    def _wiring_or_generator(self) -> InventorySpec:
        if self.generate is not None and (self.switches or self.links or self.hosts):
            raise ValueError(
                "give either explicit wiring (switches/links/hosts) or `generate`, not both"
            )
        if self.generate is None and not self.switches:
            raise ValueError("no switches: give `switches`/`links`/`hosts` or a `generate` block")
        return self
