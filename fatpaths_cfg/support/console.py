"""The consoles the CLI prints through: styled for a terminal, plain lines for a log.

Output that goes to a file or a pipe is read with grep and diff, so there a result line must
stay one line and nothing may print blank lines that only made sense on a screen.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from rich.console import Console, ConsoleDimensions
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    # Imported where drawn: a command that draws no progress display or rule (a simulation
    # run from a script) does not import them.
    from rich.align import AlignMethod
    from rich.progress import Progress, ProgressColumn
    from rich.style import Style
    from rich.text import TextType

# Wide enough that no result line or table row of ours is ever folded, small enough that
# rich's layout arithmetic stays cheap.
LOG_WIDTH = 10_000
# What rich's emoji codes (`:smiley:`, `:smiley-text:`) need at least: two colons with no
# blank between them.
MAY_HOLD_EMOJI = re.compile(r":\S*?:").search
# A rule spans the console; in a log a screen's width of it is enough to see the break.
LOG_RULE_WIDTH = 80


class LogFriendlyConsole(Console):
    """A rich Console that, when not writing to a terminal, never wraps; and that does not
    highlight what it cannot colour.

    rich takes the width of whichever standard stream is a terminal (or 80 columns), so
    `fatpaths ... | tee log` would fold lines at the width of the window it ran in (or of
    $COLUMNS). A width given to the constructor is kept.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._width_given = kwargs.get("width") is not None

    @property
    def size(self) -> ConsoleDimensions:
        measured = super().size
        if self.is_terminal or self._width_given:
            return measured
        return ConsoleDimensions(LOG_WIDTH, measured.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size

    def render_str(self, text: str, **options: Any) -> Text:
        # Without colours highlighting changes no byte of the output, and its first use
        # compiles regular expressions that cost a short command more than printing its table.
        if self.color_system is None:
            options["highlight"] = False
        # Text with no `:code:` has no emoji to replace; looking for them imports rich's table
        # of 3,600 emoji names.
        if not MAY_HOLD_EMOJI(text):
            options["emoji"] = False
        return super().render_str(text, **options)

    def rule(
        self,
        title: TextType = "",
        *,
        characters: str = "─",
        style: str | Style = "rule.line",
        align: AlignMethod = "center",
    ) -> None:
        from rich.rule import Rule

        rule = Rule(title=title, characters=characters, style=style, align=align)
        self.print(rule, width=None if self.is_terminal else LOG_RULE_WIDTH)


def make_console(*, stderr: bool = False) -> Console:
    """The one way the package makes a Console (stdout, or stderr for progress and errors)."""
    return LogFriendlyConsole(stderr=stderr, soft_wrap=False)


def make_progress(*columns: str | ProgressColumn, console: Console) -> Progress:
    """A transient progress display, shown on a terminal only.

    Off a terminal rich draws nothing while running but prints an empty line when the display
    stops, which would put a blank line at the top of a log.
    """
    from rich.progress import Progress

    return Progress(*columns, console=console, transient=True, disable=not console.is_terminal)


def make_table(title: str) -> Table:
    """A table whose title stays one line: rich wraps a title to the width of the columns."""
    return Table(title=title, min_width=len(title))
