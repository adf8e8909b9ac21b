"""User-facing errors: collected, located (file, line, field) and printed together."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

# A generated inventory with one systematic mistake can produce a million errors; past a few
# dozen, more lines bury the first cause instead of helping to find it.
MAX_PRINTED_ERRORS = 50


@dataclass(frozen=True, order=True)
class UserError:
    """One problem in the user's input, formatted as `FILE:LINE: path.to.field: message (hint)`."""

    file: str
    line: int
    field: str
    message: str
    hint: str = ""

    def __str__(self) -> str:
        location = f"{self.file}:{self.line}" if self.line > 0 else self.file
        if not location:
            # A problem that names its own place (`--size 3XB: ...`) is printed as it is.
            text = f"{self.field}: {self.message}" if self.field else self.message
        else:
            text = (
                f"{location}: {self.field}: {self.message}"
                if self.field
                else (f"{location}: {self.message}")
            )
        return f"{text} ({self.hint})" if self.hint else text


class UserErrors(Exception):
    """Raised at a stage boundary when the input had one or more problems."""

    def __init__(self, errors: list[UserError]) -> None:
        self.errors = sorted(set(errors), key=lambda e: (e.file, e.line, e.field, e.message))
        super().__init__("\n".join(str(e) for e in self.errors))

    @classmethod
    def single(
        cls, file: str | Path, field: str, message: str, hint: str = "", line: int = 0
    ) -> UserErrors:
        return cls([UserError(str(file), line, field, message, hint)])


class ErrorCollector:
    """Accumulates errors during a stage so that all of them are reported at once."""

    def __init__(self) -> None:
        self.errors: list[UserError] = []

    def add(self, file: str, line: int, field: str, message: str, hint: str = "") -> None:
        self.errors.append(UserError(file, line, field, message, hint))

    def raise_if_any(self) -> None:
        if self.errors:
            raise UserErrors(self.errors)


def printed_lines(errors: Sequence[UserError], limit: int = MAX_PRINTED_ERRORS) -> list[str]:
    """The `error: ...` lines to print: the first `limit` errors, then a count of the rest."""
    lines = [f"error: {error}" for error in errors[:limit]]
    rest = len(errors) - limit
    if rest > 0:
        lines.append(f"error: {rest:,} more errors not shown (the first {limit} are above)")
    return lines
