"""The `fatpaths verify` command: exit 0 when the rendered configs forward every layer
correctly, 1 when the fabric is wrong, 2 when the input is (see commands.run_or_exit)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from fatpaths_cfg.cli.common import run_or_exit
from fatpaths_cfg.platforms import PLATFORMS
from fatpaths_cfg.support.output import OutputTree, check_output_target
from fatpaths_cfg.verify.pfc import DEFAULT_LOSSLESS_CLASSES
from fatpaths_cfg.verify.report import report_json, report_markdown
from fatpaths_cfg.verify.run import VerifyReport, verify_output

EXIT_FABRIC_WRONG = 1
REPORT_FILES = frozenset({"report.json", "report.md"})
# Lines of findings printed to the terminal; the report files hold all of them.
PRINTED_FINDINGS = 20


def _summary(report: VerifyReport) -> None:
    for check in report.checks:
        status = "ok" if check.ok else f"{len(check.findings)} finding(s)"
        seconds = sum(check.seconds.values())
        print(
            f"{check.platform}: {check.routes} routes, {check.walks} walks, "
            f"{check.host_addresses} host addresses in {seconds:.1f}s: {status}"
        )
        if check.backups is not None:
            print(f"  {check.backups}")
        for finding in check.findings[:PRINTED_FINDINGS]:
            print(f"  {finding}", file=sys.stderr)
        if len(check.findings) > PRINTED_FINDINGS:
            print(f"  ... {len(check.findings) - PRINTED_FINDINGS} more", file=sys.stderr)
    free = [d.layer for d in report.deadlock if d.cycle_free]
    # Deadlock and PFC classes matter only on lossless (PFC) fabrics; say so, or a reader of a
    # lossy fabric takes "none" for a failure next to PASS.
    print(
        f"deadlock (lossless fabrics only): cycle-free layers {free or 'none'} of "
        f"{len(report.deadlock)}"
    )
    pfc = report.pfc
    if pfc is not None and pfc.classes is not None:
        plan = "; ".join(f"priority {c.priority}: layers {list(c.layers)}" for c in pfc.classes)
        print(f"pfc: {plan}")
    elif pfc is not None:
        print(f"pfc (lossless fabrics only): no lossless assignment: {pfc.reason}")
    if report.batfish is not None:
        print(report.batfish.summary())


PLATFORM_HELP = (
    f"Platform to verify, repeatable ({', '.join(PLATFORMS)}; default: every rendered one)."
)


def verify_command(
    out: Path = typer.Argument(..., help="A compiled output directory (fatpaths compile -o)."),
    platform: list[str] = typer.Option(
        [],
        "--platform",
        help=PLATFORM_HELP,
    ),
    lossless_classes: int = typer.Option(
        DEFAULT_LOSSLESS_CLASSES,
        "--lossless-classes",
        min=1,
        max=8,
        help="PFC priorities that may be lossless when assigning layers to classes.",
    ),
    require_lossless: bool = typer.Option(
        False, "--require-lossless", help="Fail when no deadlock-free PFC assignment exists."
    ),
    batfish: str | None = typer.Option(
        None, "--batfish", help="Batfish server host: also check OUT/batfish/ there."
    ),
    report_dir: Path | None = typer.Option(
        None, "--report", help="Directory for report.json / report.md (default: OUT/verify)."
    ),
    force: bool = typer.Option(
        False, "--force", help="Replace the --report directory even if fatpaths did not write it."
    ),
    live: bool = typer.Option(
        False,
        "--live",
        help="Read every switch's forwarding table (read-only, over SSH as deploy does) and walk "
        "the fabric as it runs; report drift per switch and every loop and blackhole.",
    ),
    devices: Path | None = typer.Option(
        None, "--devices", help="With --live: the devices file (see `fatpaths deploy`)."
    ),
    known_hosts: Path | None = typer.Option(
        None, "--known-hosts", help="With --live: extra known_hosts file."
    ),
    compare: list[Path] = typer.Option(
        [],
        "--compare",
        help="With --live: another compiled output; each switch is said to match it or not.",
    ),
    parallel: int = typer.Option(
        4, "--parallel", min=1, help="With --live: switches read at once."
    ),
) -> None:
    """Prove that the rendered configs forward every layer correctly.

    Also says which layers can be lossless (PFC classes without a buffer dependency cycle)."""
    if live:
        _verify_live(out, devices, known_hosts, compare, parallel)
        return
    platforms = [p for item in platform for p in item.split(",") if p]
    target = report_dir or out / "verify"
    # OUT/verify is fatpaths' own place; reports written there before output markers existed
    # are replaced, and nothing else in it is.
    unmarked = REPORT_FILES if report_dir is None else frozenset()
    run_or_exit(lambda: check_output_target(target, "verify", [out], force, unmarked))
    report = run_or_exit(
        lambda: verify_output(out, platforms or None, lossless_classes, require_lossless)
    )
    if batfish:
        from fatpaths_cfg.verify.batfish import check_with_batfish

        report.batfish = run_or_exit(lambda: check_with_batfish(out, batfish))
    tree = OutputTree("verify")
    tree.add_json("report.json", report_json(report))
    tree.add_text("report.md", report_markdown(report))
    run_or_exit(lambda: tree.commit(target, [out], force, unmarked))
    _summary(report)
    print(f"{'PASS' if report.ok else 'FAIL'}: report in {target}")
    if not report.ok:
        raise typer.Exit(EXIT_FABRIC_WRONG)


def _verify_live(
    out: Path, devices: Path | None, known_hosts: Path | None, compare: list[Path], parallel: int
) -> None:
    from fatpaths_cfg.deploy.devices import Access, load_device_book
    from fatpaths_cfg.deploy.live import verify_live
    from fatpaths_cfg.deploy.push import DeployOptions

    book = run_or_exit(lambda: load_device_book(devices, Access()))
    options = DeployOptions(known_hosts=known_hosts)
    report = run_or_exit(lambda: verify_live(out, book, options, parallel, compare))
    for reading in report.switches:
        matches = ", ".join(reading.matches) or "no compile given"
        if reading.status == "failed":
            print(f"{reading.name}: FAILED to read: {reading.detail}")
        elif reading.status == "drift":
            print(
                f"{reading.name}: drift: {reading.missing} routes missing, {reading.extra} "
                f"not compiled; matches {matches}"
            )
        else:
            print(f"{reading.name}: matches {matches}")
        for line in report.strays.get(reading.name, [])[:PRINTED_FINDINGS]:
            print(f"  stray route {line}")
    for line in report.problems[:PRINTED_FINDINGS]:
        print(f"  {line}")
    if len(report.problems) > PRINTED_FINDINGS:
        print(f"  ... {len(report.problems) - PRINTED_FINDINGS} more")
    proof = report.proof
    print(
        f"{'PASS' if report.ok else 'FAIL'}: live fabric walked ({proof.walked} walks): "
        f"{proof.loops} loops, {proof.blackholes} blackholes"
    )
    if not report.ok:
        raise typer.Exit(EXIT_FABRIC_WRONG)


def add_commands(app: typer.Typer) -> None:
    app.command("verify", short_help="Prove the configs forward every layer.")(verify_command)
