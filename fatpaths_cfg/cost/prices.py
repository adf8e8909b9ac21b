"""The price file: switch models by radix and speed, cables by type and length, optics per end,
and the physical layout the cable lengths come from. Loaded through the inventory's YAML
loader, so every problem is reported with its file, line and field."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from fatpaths_cfg.errors import UserError, UserErrors
from fatpaths_cfg.inventory.load import validation_errors
from fatpaths_cfg.inventory.paths import format_path
from fatpaths_cfg.inventory.rules import parse_speed_gbps
from fatpaths_cfg.inventory.yaml_source import SourceMap, load_yaml

Price = Annotated[float, Field(ge=0, strict=False, allow_inf_nan=False)]
Metres = Annotated[float, Field(gt=0, strict=False, allow_inf_nan=False)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class SwitchModel(_Strict):
    """A switch one can buy: `radix` ports of `speed` each, at `price`."""

    radix: Annotated[int, Field(ge=1, le=4096)]
    speed: str | int | float
    price: Price

    @field_validator("speed")
    @classmethod
    def _speed(cls, value: str | int | float) -> str | int | float:
        parse_speed_gbps(value)
        return value

    @property
    def speed_gbps(self) -> float:
        return parse_speed_gbps(self.speed)


class CopperCable(_Strict):
    """Direct-attach copper: `fixed + per_m * length`, usable up to `max_length_m`."""

    max_length_m: Metres
    fixed: Price
    per_m: Price


class FiberCable(_Strict):
    """Optical fiber: `fixed + per_m * length`, plus `optics_per_end` at each end."""

    fixed: Price
    per_m: Price


class Cables(_Strict):
    copper: CopperCable
    fiber: FiberCable


class Layout(_Strict):
    """Racks and rows (defaults in the model's docs): each switch sits in a rack with its hosts,
    a generator's groups fill consecutive racks, racks stand in rows."""

    rack_units: Annotated[int, Field(ge=1)] = 42
    switch_units: Annotated[int, Field(ge=1)] = 1
    host_units: Annotated[int, Field(ge=0)] = 1
    racks_per_row: Annotated[int, Field(ge=1)] | None = None
    rack_width_m: Metres = 0.6
    row_pitch_m: Metres = 2.4
    intra_rack_m: Metres = 1.0
    host_cable_m: Metres = 2.0
    slack_m: Annotated[float, Field(ge=0, strict=False, allow_inf_nan=False)] = 2.0


class PriceSpec(_Strict):
    prices: Annotated[str, Field(min_length=1)]
    source: Annotated[str, Field(min_length=1)]
    date: Annotated[dt.date, Field(strict=False)]
    currency: Annotated[str, Field(min_length=1)] = "USD"
    switches: Annotated[list[SwitchModel], Field(min_length=1)]
    cables: Cables
    optics_per_end: Price
    layout: Layout = Layout()


@dataclass(frozen=True)
class PriceFile:
    path: Path
    spec: PriceSpec
    source: SourceMap

    def line_of(self, *path: str | int) -> int:
        return self.source.line_of(path)

    def switch_for(self, ports: int, speed_gbps: float) -> SwitchModel | None:
        """The cheapest model of this speed with at least `ports` ports (ties: fewer ports)."""
        fits = [
            m
            for m in self.spec.switches
            if m.radix >= ports and abs(m.speed_gbps - speed_gbps) < 1e-9
        ]
        return min(fits, key=lambda m: (m.price, m.radix), default=None)

    def missing_switch(self, ports: int, speed_gbps: float, network: str) -> UserError:
        """The located error for a switch no model fits."""
        listed = sorted(
            m.radix for m in self.spec.switches if abs(m.speed_gbps - speed_gbps) < 1e-9
        )
        have = (
            f"models at {speed_gbps:g}G have {', '.join(map(str, listed))} ports"
            if listed
            else f"no model at {speed_gbps:g}G"
        )
        return UserError(
            str(self.path),
            self.line_of("switches"),
            "switches",
            f"no switch of {speed_gbps:g}G with at least {ports} ports, which {network} needs",
            f"{have}; add `- {{radix: {ports}, speed: {speed_gbps:g}G, price: ...}}` or larger",
        )


def load_prices(path: Path) -> PriceFile:
    """Read and validate a price file; every problem is a located user error."""
    data, source = load_yaml(path)
    if not isinstance(data, dict):
        raise UserErrors.single(
            source.file, "", "a price file must be a mapping", "start with `prices: NAME`", line=1
        )
    try:
        spec = PriceSpec.model_validate(data)
    except ValidationError as exc:
        raise UserErrors(validation_errors(exc, data, source, PriceSpec)) from None
    _check_models(spec, data, source)
    return PriceFile(path, spec, source)


def _check_models(spec: PriceSpec, data: Any, source: SourceMap) -> None:
    """Two models of the same radix and speed would make the price depend on their order."""
    seen: dict[tuple[int, float], int] = {}
    errors = []
    for i, model in enumerate(spec.switches):
        key = (model.radix, model.speed_gbps)
        if key in seen:
            where = ("switches", i)
            errors.append(
                UserError(
                    source.file,
                    source.line_of(where),
                    format_path(where),
                    f"a second model of {model.radix} ports at {model.speed_gbps:g}G",
                    f"the first is switches[{seen[key]}]; keep one price per radix and speed",
                )
            )
        seen.setdefault(key, i)
    if errors:
        raise UserErrors(errors)
