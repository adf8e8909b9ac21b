"""`fatpaths plan OLD NEW`: read both sides, compare them, and check NEW's forwarding."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from fatpaths_cfg.compiled import EARLIER_SCHEMAS, load_compiled, view_of
from fatpaths_cfg.errors import UserErrors

if TYPE_CHECKING:
    from fatpaths_cfg.compiled import CompiledFabric
    from fatpaths_cfg.plan.keep import EarlierCompile
from fatpaths_cfg.plan.change import Change, compare
from fatpaths_cfg.plan.rounds import UpdatePlan, update_rounds
from fatpaths_cfg.plan.view import RouteView

MAX_FINDINGS = 20


@dataclass
class Verdict:
    """The forwarding checker's verdict on NEW (`fatpaths verify`'s checks, Batfish aside)."""

    checked: bool
    ok: bool = True
    findings: list[str] = field(default_factory=list)  # the first MAX_FINDINGS
    finding_count: int = 0
    platforms: list[str] = field(default_factory=list)


@dataclass
class Plan:
    old: str  # as given on the command line
    new: str
    new_is_inventory: bool
    change: Change
    verdict: Verdict
    update: UpdatePlan  # the loop-free rounds from OLD to NEW, each state proven

    @property
    def ok(self) -> bool:
        return self.verdict.ok and self.update.proven


def read_view(directory: Path, role: str) -> RouteView:
    """A compiled output (schema 1 or 2) as a RouteView; a located UserError when it is not
    one or is damaged."""
    hint = "give the output directory of `fatpaths compile`" + (
        " or, as NEW, an inventory" if role == "NEW" else ""
    )
    return RouteView(load_compiled(directory, role, hint, EARLIER_SCHEMAS))


def _verdict(directory: Path) -> Verdict:
    from fatpaths_cfg.verify.run import verify_output

    report = verify_output(directory)
    findings = [
        f"{check.platform}: {finding}" for check in report.checks for finding in check.findings
    ]
    return Verdict(
        True,
        report.ok,
        findings[:MAX_FINDINGS],
        len(findings),
        [check.platform for check in report.checks],
    )


# NEW given as an inventory: compile it (with OLD's layers kept, or not) and write the compile
# into a directory; the API's stages, passed in by the command (the plan stage sits below them).
CompileNew = Callable[[Path, "EarlierCompile | None"], "CompiledFabric"]
WriteNew = Callable[["CompiledFabric", Path, Path], object]


def make_plan(
    old: Path,
    new: Path,
    keep_layers: bool = False,
    check: bool = True,
    progress: Callable[[str], None] = lambda _: None,
    compile_new: CompileNew | None = None,
    write_new: WriteNew | None = None,
) -> Plan:
    """What going from OLD (a compiled output) to NEW (an output, or an inventory compiled now
    by `compile_new`) changes, with the forwarding checker's verdict on NEW."""
    progress("reading OLD")
    old_view = read_view(old, "OLD")
    if new.is_dir():
        progress("reading NEW")
        new_view = read_view(new, "NEW")
        change = _checked_compare(old, new, old_view, new_view)
        progress("ordering and proving the update rounds")
        update = update_rounds(old_view, new_view)
        progress("checking NEW's forwarding")
        verdict = _verdict(new) if check else Verdict(False)
        return Plan(str(old), str(new), False, change, verdict, update)
    from fatpaths_cfg.plan.keep import read_earlier

    if compile_new is None or write_new is None:
        raise UserErrors.single(str(new), "NEW", "not a compiled output directory")
    progress("compiling NEW")
    earlier = read_earlier(old) if keep_layers else None
    compiled = compile_new(new, earlier)
    new_view = RouteView(view_of(compiled))
    change = _checked_compare(old, new, old_view, new_view)
    progress("ordering and proving the update rounds")
    update = update_rounds(old_view, new_view)
    verdict = Verdict(False)
    if check:
        progress("rendering and checking NEW")
        with tempfile.TemporaryDirectory(prefix="fatpaths-plan-") as scratch:
            target = Path(scratch) / "new"
            write_new(compiled, new, target)
            verdict = _verdict(target)
    return Plan(str(old), str(new), True, change, verdict, update)


def _checked_compare(old: Path, new: Path, old_view: RouteView, new_view: RouteView) -> Change:
    if old_view.name != new_view.name:
        raise UserErrors.single(
            str(new),
            "name",
            f"is fabric {new_view.name!r}, OLD ({old}) is {old_view.name!r}",
            "plan compares two compiles of the same fabric",
        )
    return compare(old_view, new_view)
