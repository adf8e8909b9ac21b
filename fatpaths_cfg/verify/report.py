"""The verify report: what was checked and what failed, as JSON (for CI) and markdown (for
people). Both list every check, passed or not, so that a green run says what it covered."""

from __future__ import annotations

from typing import Any

from fatpaths_cfg.verify.run import VerifyReport

REPORT_SCHEMA = "fatpaths.verify/1"
# A CI log is read by people: past this many findings per platform the rest are in the JSON.
MARKDOWN_FINDINGS = 50


def report_json(report: VerifyReport) -> dict[str, Any]:
    return {
        "schema": REPORT_SCHEMA,
        "fabric": report.fabric,
        "directory": str(report.directory),
        "ok": report.ok,
        "forwarding": [
            {
                "platform": check.platform,
                "ok": check.ok,
                "routes": check.routes,
                "walks": check.walks,
                "tables": check.tables,
                "host_addresses": check.host_addresses,
                "seconds": {k: round(v, 3) for k, v in check.seconds.items()},
                "findings": [f.to_json() for f in check.findings],
                # Only when the configs hold backup routes, so other reports keep their bytes.
                **({"backups": check.backups.to_json()} if check.backups is not None else {}),
            }
            for check in report.checks
        ],
        "deadlock": [d.to_json() for d in report.deadlock],
        "pfc": None if report.pfc is None else report.pfc.to_json(),
        "require_lossless": report.require_lossless,
        "batfish": None if report.batfish is None else report.batfish.to_json(),
        "seconds": {k: round(v, 3) for k, v in report.seconds.items()},
    }


def report_markdown(report: VerifyReport) -> str:
    verdict = "PASS" if report.ok else "FAIL"
    lines = [f"# fatpaths verify: {report.fabric}: {verdict}", ""]
    lines += ["## Forwarding (rendered configs read back and walked)", ""]
    lines += [
        "| platform | routes | walks | host addresses | findings |",
        "|---|---:|---:|---:|---:|",
    ]
    for check in report.checks:
        lines.append(
            f"| {check.platform} | {check.routes} | {check.walks} | {check.host_addresses} | "
            f"{len(check.findings)} |"
        )
    lines += [
        "",
        "Checked for every (layer, source switch, destination switch): a route exists, its next "
        "hop is a neighbour over a link of the layer, the path reaches the destination subnet "
        "without loop or black hole along a shortest path of the layer (up*/down* order kept "
        "in acyclic layers; layer 1 minimal in the fabric); every address of `fabric.json` "
        "(links, loopbacks, gateways, hosts) is configured where the plan puts it.",
        "",
    ]
    for check in report.checks:
        if check.backups is not None:
            lines += [
                f"Backup routes on {check.platform}: each is a loop-free alternate of its layer "
                "(dist(N, t) < dist(N, s) + dist(s, t)) and, with any one cable of a layer down "
                f"and its primaries withdrawn, no walk loops. {check.backups}.",
                "",
            ]
    for check in report.checks:
        if check.findings:
            lines += [f"### Findings on {check.platform}", ""]
            for finding in check.findings[:MARKDOWN_FINDINGS]:
                lines.append(f"- `{finding.location}` **{finding.kind}**: {finding.message}")
            hidden = len(check.findings) - MARKDOWN_FINDINGS
            if hidden > 0:
                lines.append(f"- ... and {hidden} more (see report.json)")
            lines.append("")
    lines += ["## Deadlock (channel dependency graph per layer)", ""]
    lines += ["| layer | dependencies | cycle-free | cycle (witness) |", "|---:|---:|---|---|"]
    for layer in report.deadlock:
        witness = " ".join(layer.cycle[:8]) + (" ..." if len(layer.cycle) > 8 else "")
        lines.append(
            f"| {layer.layer} | {layer.dependencies} | {'yes' if layer.cycle_free else 'no'} | "
            f"{witness} |"
        )
    lines.append("")
    if report.pfc is not None:
        pfc = report.pfc
        lines += [f"## PFC classes (at most {pfc.max_classes} lossless)", ""]
        if pfc.classes is not None:
            for cls in pfc.classes:
                layers = ", ".join(map(str, cls.layers))
                lines.append(f"- priority {cls.priority}: layers {layers}")
            lines.append(f"\nEvery class's combined dependency graph is acyclic ({pfc.method}).")
        else:
            lines.append(f"No assignment: {pfc.reason}.")
        lines.append("")
    if report.batfish is not None:
        lines += report.batfish.markdown()
    return "\n".join(lines) + "\n"
