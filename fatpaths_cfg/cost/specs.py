"""Generator specs on the command line: `slimfly:q=19`, `fattree:k=28,oversubscription=2`."""

from __future__ import annotations

from dataclasses import dataclass

from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.topologies import GeneratedTopology, TopologyParameterError, generate


@dataclass(frozen=True)
class GeneratorSpec:
    kind: str
    params: dict[str, int | float]

    @property
    def text(self) -> str:
        return f"{self.kind}:" + ",".join(f"{k}={v}" for k, v in self.params.items())

    @property
    def name(self) -> str:
        return "-".join([self.kind, *(f"{k}{v}" for k, v in self.params.items())])


def _number(text: str) -> int | float:
    return float(text) if any(c in text for c in ".eE") else int(text)


def parse_spec(text: str, flag: str) -> GeneratorSpec:
    """`KIND:NAME=VALUE,...` -> a spec; a malformed one is a user error naming the flag."""
    kind, _, rest = text.partition(":")
    params: dict[str, int | float] = {}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, sep, value = item.partition("=")
        try:
            params[key.strip()] = _number(value.strip())
        except ValueError:
            sep = ""
        if not sep or not key.strip():
            raise UserErrors.single(
                flag,
                text,
                f"{item!r} is not NAME=NUMBER",
                "e.g. slimfly:q=19 or fattree:k=28,oversubscription=2",
            )
    return GeneratorSpec(kind.strip(), params)


def build_spec(spec: GeneratorSpec, seed: int, flag: str) -> GeneratedTopology:
    try:
        return generate(spec.kind, spec.params, seed)
    except TopologyParameterError as exc:
        raise UserErrors.single(flag, spec.text, exc.message, exc.hint) from None
