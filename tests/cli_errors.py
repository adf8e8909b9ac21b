"""What a CLI run printed as errors, in the form the golden `.expected` files hold."""

from __future__ import annotations

from click.testing import Result


def printed_errors(result: Result) -> str:
    """The `error: ` lines of stderr without their prefix, one per line."""
    return "".join(
        f"{line.removeprefix('error: ')}\n"
        for line in result.stderr.splitlines()
        if line.startswith("error: ")
    )
