"""The `fatpaths` command: a thin shell over `fatpaths_cfg.api`.

Each feature area contributes its commands through an `add_commands(app)` function so that the
command line stays one flat, discoverable tree.
"""

from __future__ import annotations

import typer

from fatpaths_cfg import __version__


def _version(value: bool) -> None:
    if value:
        typer.echo(f"fatpaths {__version__}")
        raise typer.Exit(0)


def build_app() -> typer.Typer:
    from fatpaths_cfg import commands

    app = typer.Typer(
        name="fatpaths",
        help="Compile FatPaths layered routing for low-diameter Ethernet fabrics.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )

    @app.callback()
    def _root(
        version: bool = typer.Option(
            False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ) -> None:
        """FatPaths layered routing compiler."""

    commands.add_commands(app)
    return app


def main() -> None:
    build_app()()


if __name__ == "__main__":
    main()
