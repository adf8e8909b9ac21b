"""`fatpaths lab ...`: up, test, fail, repair, down, clab, mptcp."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import typer

from fatpaths_cfg.cli.common import command_group
from fatpaths_cfg.cli.common import run_or_exit as run_stage_or_exit
from fatpaths_cfg.support.console import make_console

console = make_console()
OUT_ARG = typer.Argument(..., help="Compiled output directory (from `fatpaths compile`).")
T = TypeVar("T")


def run_or_exit(action: Callable[[], T], out: Path | None = None) -> T:
    """A lab stage: user errors exit 2 (as every command's); a wait that ended without what it
    waited for says what and what to do, and exits 1, without a traceback."""
    from fatpaths_cfg.lab.netns import LabWaitError

    try:
        return run_stage_or_exit(action)
    except LabWaitError as exc:
        hint = exc.hint if out is None else re.sub(r"\bOUT\b", str(out), exc.hint)
        print(f"error: {exc}", file=sys.stderr)
        print(f"  hint: {hint}", file=sys.stderr)
        raise typer.Exit(1) from None


def lab_up(
    out: Path = OUT_ARG,
    engine: str = typer.Option(
        "netns",
        "--engine",
        help="netns: namespaces and FRR made by the lab; clab: containerlab deploys "
        "OUT/lab/<fabric>.clab.yml (images from `fatpaths lab image`).",
    ),
    mgmt: bool = typer.Option(
        False,
        "--mgmt",
        help="Also a management network (a namespace of its own), an sshd per switch and "
        "OUT/lab/devices.yaml, for `fatpaths deploy OUT --devices OUT/lab/devices.yaml`.",
    ),
    mgmt_pool: str = typer.Option(
        "198.18.0.0/15",
        "--mgmt-pool",
        help="Management addresses, a /31 (IPv6: /127) per switch; they exist only inside "
        "the lab's namespaces.",
    ),
) -> None:
    """Run the compiled fabric in network namespaces with FRR, or in containerlab (needs root)."""
    from fatpaths_cfg.lab.lifecycle import up

    pool = mgmt_pool if mgmt else None
    with console.status("lab up") as status:
        summary = run_or_exit(
            lambda: up(out, lambda text: status.update(f"lab up: {text}"), engine, pool), out
        )
    figures = ", ".join(f"{k} {v} s" for k, v in summary.timings.items() if k != "total")
    if summary.engine == "clab":
        console.print(
            f"lab up (containerlab): {summary.switches} switches, {summary.hosts} hosts, "
            f"{summary.veths} links, FRR up in {summary.daemons} switches, every compiled "
            f"route installed, in {summary.seconds} s ({figures})"
        )
        return
    console.print(
        f"lab up: {summary.switches} switches, {summary.hosts} hosts, {summary.veths} veth "
        f"pairs, {summary.daemons} FRR daemons in {summary.seconds} s ({figures})"
    )
    if summary.devices is not None:
        console.print(
            f"management: an sshd per switch; deploy with `fatpaths deploy {out} --devices "
            f"{summary.devices}`",
            markup=False,
        )


def lab_test(
    out: Path = OUT_ARG,
    traces: int = typer.Option(8, "--traces", help="Traceroutes per layer."),
    expect_failed_links: bool = typer.Option(
        False,
        "--expect-failed-links",
        help="Exit 0 when every failure is explained by the links `lab fail` set down "
        "(a scripted failure drill); 1 only for a failure they do not explain.",
    ),
) -> None:
    """Ping every (switch, switch, layer) triple, traceroute a sample; non-zero on failure."""
    from fatpaths_cfg.lab.lifecycle import load_up
    from fatpaths_cfg.lab.probe import run_lab_test
    from fatpaths_cfg.lab.report import print_report

    plan, state = run_or_exit(lambda: load_up(out), out)
    with console.status("lab test: pinging"):
        report = run_or_exit(lambda: run_lab_test(plan, state.failed_links, traces), out)
    print_report(console, plan, report)
    if expect_failed_links:
        links = ", ".join(map(str, report.failed_links)) or "none"
        if report.explained:
            console.print(
                f"ok: every failure ({len(report.failures)}) is explained by the failed "
                f"links ({links})",
                markup=False,
            )
            return
        console.print(
            f"FAILED: {len(report.unexpected)} ping failures and "
            f"{len(report.trace_failures)} traceroute mismatches not explained by the failed "
            f"links ({links})",
            style="bold red",
            markup=False,
        )
        raise typer.Exit(1)
    if not report.ok:
        raise typer.Exit(1)


def _one_target(link: str | None, plane: int | None) -> None:
    from fatpaths_cfg.errors import UserErrors

    if (link is None) == (plane is None):
        raise UserErrors.single(
            "fatpaths lab fail",
            "",
            "give either a LINK or --plane P",
            "e.g. `fatpaths lab fail OUT 3` or `fatpaths lab fail OUT --plane 1`",
        )


def lab_fail(
    out: Path = OUT_ARG,
    link: str | None = typer.Argument(
        None, help="Link index, SWITCH:PORT of either end, or SW-SW."
    ),
    plane: int | None = typer.Option(
        None, "--plane", help="Instead of one link, every link of this plane (0-based)."
    ),
) -> None:
    """Set a link down (both ends), or every link of a plane."""
    from fatpaths_cfg.lab.lifecycle import fail, fail_plane

    run_or_exit(lambda: _one_target(link, plane))
    if plane is not None:
        failed = run_or_exit(lambda: fail_plane(out, plane), out)
        console.print(
            f"plane {plane}: {len(failed)} links down; run `fatpaths lab test {out}` to see "
            "what broke",
            markup=False,
        )
        return
    assert link is not None
    ends = run_or_exit(lambda: fail(out, link), out)
    console.print(f"{ends} is down; run `fatpaths lab test {out}` to see what broke", markup=False)


def lab_repair(
    out: Path = OUT_ARG,
    link: str | None = typer.Argument(None, help="Link to repair (default: every failed one)."),
) -> None:
    """Bring failed links back up and wait until their routes are back."""
    from fatpaths_cfg.lab.lifecycle import repair

    repaired = run_or_exit(lambda: repair(out, link), out)
    if not repaired:
        console.print("no failed links: nothing to repair")
    for ends in repaired:
        console.print(f"repaired {ends}: up again, routes back", markup=False)


def lab_down(out: Path = OUT_ARG) -> None:
    """Remove exactly what `lab up` created (also after a crash half-way through)."""
    from fatpaths_cfg.lab.lifecycle import down

    summary = run_or_exit(lambda: down(out), out)
    if summary is None:
        console.print(f"no lab state in {out / 'lab'}: nothing to remove", markup=False)
        return
    if summary.engine == "clab":
        console.print(
            f"lab down (containerlab): containers destroyed, {summary.namespaces} namespace "
            "names detached"
        )
        return
    console.print(
        f"lab down: {summary.namespaces} namespaces deleted, {summary.daemons} daemons "
        f"stopped, {summary.stray_processes} stray processes ended"
    )


def lab_clab(
    out: Path = OUT_ARG,
    frr_image: str = typer.Option("fatpaths/frr:bookworm", help="Image of frr switches."),
    host_image: str = typer.Option("fatpaths/host:bookworm", help="Image of hosts."),
    sonic_image: str = typer.Option("docker-sonic-vs:latest", help="Image of sonic switches."),
    ceos_image: str = typer.Option("ceos:4.32.0F", help="Image of eos switches."),
    force: bool = typer.Option(
        False, "--force", help="Replace the topology even if fatpaths did not write it."
    ),
) -> None:
    """Write OUT/lab/<fabric>.clab.yml, a containerlab topology of the compiled fabric."""
    from fatpaths_cfg.lab.clab import ClabImages, write_clab

    images = ClabImages(frr=frr_image, host=host_image, sonic=sonic_image, ceos=ceos_image)
    path = run_or_exit(lambda: write_clab(out, images, force), out)
    console.print(f"wrote {path}", markup=False)


def lab_image(
    force: bool = typer.Option(False, "--force", help="Rebuild even if the recipe is unchanged."),
    frr_image: str = typer.Option("fatpaths/frr:bookworm", help="Tag of the switch image."),
    host_image: str = typer.Option("fatpaths/host:bookworm", help="Tag of the host image."),
    suite: str = typer.Option("bookworm", help="Debian suite."),
    mirror: str = typer.Option("http://deb.debian.org/debian", help="Debian mirror."),
) -> None:
    """Build the containerlab images from Debian packages (debootstrap + docker import)."""
    from fatpaths_cfg.lab.clab import ClabImages
    from fatpaths_cfg.lab.images import build_images

    images = ClabImages(frr=frr_image, host=host_image)
    with console.status("lab image: debootstrap") as status:
        results = run_or_exit(
            lambda: build_images(
                images, force, suite, mirror, lambda t: status.update(f"lab image: {t}")
            )
        )
    for result in results:
        recipe = result.recipe
        what = f"built in {result.seconds} s" if result.built else "up to date"
        console.print(
            f"{recipe.tag}: {what} (recipe {recipe.digest}; {recipe.suite}: "
            f"{' '.join(recipe.packages)})",
            markup=False,
        )


def lab_mptcp(
    out: Path = OUT_ARG,
    seconds: float = typer.Option(6.0, help="Transfer duration."),
    plane: int | None = typer.Option(
        None,
        "--plane",
        help="Fail this whole plane mid-transfer (default on a multi-plane "
        "fabric: the last plane).",
    ),
) -> None:
    """One MPTCP connection with a subflow per layer (and plane); fail a single-layer link,
    or on a multi-plane fabric a whole plane, mid-transfer."""
    from fatpaths_cfg.lab.mptcp import print_demo, run_demo

    result = run_or_exit(lambda: run_demo(out, seconds, plane), out)
    print_demo(console, result)
    if not result.ok:
        raise typer.Exit(1)


def add_commands(app: typer.Typer) -> None:
    lab = command_group(help="Run a compiled fabric in network namespaces.", no_args_is_help=True)
    lab.command("up", short_help="Run the fabric in namespaces with FRR.")(lab_up)
    lab.command("test", short_help="Ping every switch pair on every layer.")(lab_test)
    lab.command("fail", short_help="Set a link (or a plane) down.")(lab_fail)
    lab.command("repair", short_help="Bring failed links back up.")(lab_repair)
    lab.command("down", short_help="Remove exactly what `lab up` created.")(lab_down)
    lab.command("clab", short_help="Write a containerlab topology.")(lab_clab)
    lab.command("image", short_help="Build the containerlab images.")(lab_image)
    lab.command("mptcp", short_help="Show MPTCP surviving a link failure.")(lab_mptcp)
    app.add_typer(lab, name="lab")
