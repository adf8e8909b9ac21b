"""Printing a `lab test` report: a row per (family, layer), the broken combinations, fault
tolerance."""

from __future__ import annotations

import itertools

from rich.console import Console
from rich.table import Table

from fatpaths_cfg.lab.plan import LabPlan
from fatpaths_cfg.lab.probe import LabTestReport

MAX_LISTED = 30


def print_report(console: Console, plan: LabPlan, report: LabTestReport) -> None:
    names = [s.name for s in plan.compiled.fabric.switches]
    planes = plan.planes > 1
    unit = "(switch pair, plane, layer)" if planes else "(switch pair, layer)"
    table = Table(title=f"lab test {plan.name}: pings per {unit}, traceroutes")
    columns = ("family", *(("plane",) if planes else ()), "layer", "pairs", "ok", "failed")
    for column in (*columns, "predicted by failed links", "traceroutes ok"):
        table.add_column(column, justify="right")
    for family, plane, layer in itertools.product(
        report.families, range(plan.planes), report.layer_ids
    ):
        key = (family, plane, layer)
        rows = [r for r in report.pings if (r.probe.family, r.probe.plane, r.probe.layer) == key]
        failed = [r for r in rows if not r.ok]
        traces = [t for t in report.traces if (t.probe.family, t.probe.plane, t.probe.layer) == key]
        table.add_row(
            f"IPv{family}",
            *((str(plane),) if planes else ()),
            str(layer),
            str(len(rows)),
            str(len(rows) - len(failed)),
            str(len(failed)),
            str(sum(not r.expected_ok for r in failed)),
            f"{sum(t.ok for t in traces)}/{len(traces)}",
        )
    console.print(table)
    if report.failed_links:
        links = plan.compiled.fabric.links
        console.print(
            "failed links: "
            + ", ".join(
                f"{i} ({names[k.a]}:{k.a_port} - {names[k.b]}:{k.b_port})"
                for i, k in ((i, links[i]) for i in report.failed_links)
            )
        )
    for r in report.failures[:MAX_LISTED]:
        p = r.probe
        why = "crosses a failed link" if not r.expected_ok else "UNEXPECTED"
        where = f"plane {p.plane} " if planes else ""
        console.print(
            f"  broken: {names[p.src_switch]} -> {names[p.dst_switch]} {where}layer {p.layer} "
            f"IPv{p.family} ({p.src.name} {p.src_address} -> {p.dst.name} "
            f"{p.dst_address}): {why}",
            soft_wrap=True,
        )
    if len(report.failures) > MAX_LISTED:
        console.print(f"  ... and {len(report.failures) - MAX_LISTED} more")
    for t in report.trace_failures:
        p = t.probe
        seen = [names[h] if h is not None else "?" for h in t.hops]
        console.print(
            f"  traceroute {p.src.name} -> {p.dst.name} layer {p.layer} IPv{p.family}: hops "
            f"{' '.join(seen)}, compiled {' '.join(names[h] for h in t.expected)}",
            soft_wrap=True,
        )
    if report.pacing:
        shaped = [result for result in report.pacing if result.ok]
        console.print(
            f"host shaping: {len(shaped)}/{len(report.pacing)} hosts shaped to "
            f"{report.pacing[0].wanted_mbit} Mb/s ({report.pacing[0].found})",
            markup=False,
        )
        for result in report.pacing:
            if not result.ok:
                console.print(
                    f"  {result.host}: wanted {result.wanted_mbit} Mb/s, found {result.found}",
                    markup=False,
                )
    if report.low_latency:
        took = sum(check.ok for check in report.low_latency)
        console.print(
            f"low latency: {took}/{len(report.low_latency)} sampled host pairs reach the "
            "destination's fewest-hop plane address from the listed source, in the listed hops",
            soft_wrap=True,
        )
        for check in report.low_latency:
            if not check.ok:
                c = check.choice
                seen = [names[h] if h is not None else "?" for h in check.switches]
                console.print(
                    f"  low latency {c.source.name} -> {c.destination} {c.address}: plane "
                    f"{c.plane}, {c.hops} hops, source {c.source_address} listed; source "
                    f"{check.source_used or '?'} used, hops {' '.join(seen)}",
                    soft_wrap=True,
                    markup=False,
                )
    crossed = report.crossed
    if crossed and report.backups:
        carried = sum(r.ok for r in crossed)
        console.print(
            f"backup routes: {carried}/{len(crossed)} probes whose path crosses a failed link "
            f"answered ({carried / len(crossed):.0%})",
            soft_wrap=True,
        )
    working, pairs = report.pairs_with_a_working_layer(by_host=planes)
    what = "host pairs probed" if planes else "host pairs (by switch pair)"
    console.print(
        f"{what} with at least one working {'plane and layer' if planes else 'layer'}: "
        f"{working}/{pairs}"
        + ("" if working == pairs else "  [bold red]some pairs lost every layer[/]"),
        soft_wrap=True,
    )
    console.print(
        f"{len(report.pings)} pings, {len(report.traces)} traceroutes in {report.seconds} s; "
        f"failures: {len(report.failures)} ({len(report.unexpected)} not explained by "
        f"failed links), traceroute mismatches: {len(report.trace_failures)}",
        soft_wrap=True,
    )
