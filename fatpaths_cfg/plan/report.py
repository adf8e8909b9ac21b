"""A plan laid out for review: a terminal table, markdown for a pull request, JSON, JUnit.

Every format is a pure function of the plan (no times, no paths of this machine), so the same
inputs give the same bytes.
"""

from __future__ import annotations

from typing import Any
from xml.sax.saxutils import escape, quoteattr

from fatpaths_cfg.plan.change import Change, LayerChange, SwitchChange
from fatpaths_cfg.plan.rounds import Round
from fatpaths_cfg.plan.run import Plan

PLAN_SCHEMA = "fatpaths.plan/1"
# Switches and cables listed in full in the markdown details; the JSON always has all.
MARKDOWN_ROWS = 50


def plan_json(plan: Plan) -> dict[str, Any]:
    change = plan.change
    return {
        "schema": PLAN_SCHEMA,
        "old": plan.old,
        "new": plan.new,
        "new_is_inventory": plan.new_is_inventory,
        "fabric": change.new,
        "families": change.families,
        "summary": summary_json(change),
        "verdict": {
            "checked": plan.verdict.checked,
            "ok": plan.verdict.ok,
            "findings": plan.verdict.finding_count,
            "first_findings": plan.verdict.findings,
            "platforms": plan.verdict.platforms,
        },
        "rounds": [r.to_json() for r in plan.update.rounds],
        "cables_added": change.cables_added,
        "cables_removed": change.cables_removed,
        "layers": [layer.to_json() for layer in change.layers],
        "switches": [s.to_json() for s in change.switches if s.status != "same"],
    }


def summary_json(change: Change) -> dict[str, Any]:
    return {
        "switches_changed": len(change.switches_changed),
        "switches_added": change.switches_added,
        "switches_removed": change.switches_removed,
        "switches": len(change.switches),
        "routes_changed": change.routes_changed,
        "routes_must_change": change.routes_must_change,
        "churn_ratio": round(change.churn_ratio, 4),
        "layer_links_changed": change.layer_links_changed,
        "host_pairs_working_layers_changed": change.host_pairs_working_layers_changed,
        "host_pairs": change.host_pairs,
    }


def _verdict_line(plan: Plan) -> str:
    verdict = plan.verdict
    if not verdict.checked:
        return "forwarding check on NEW: not run"
    if verdict.ok:
        return f"forwarding check on NEW: ok ({', '.join(verdict.platforms)})"
    return f"forwarding check on NEW: FAILED, {verdict.finding_count} finding(s)"


def _summary_lines(plan: Plan) -> list[str]:
    change = plan.change
    lines = [
        f"plan {change.new}: {plan.old} -> {plan.new}",
        f"switches: {len(change.switches_changed)} of {len(change.switches)} change"
        + (f" (+{len(change.switches_added)} added" if change.switches_added else "")
        + (f", -{len(change.switches_removed)} removed)" if change.switches_removed else "")
        + (")" if change.switches_added and not change.switches_removed else ""),
        f"cables: +{len(change.cables_added)} -{len(change.cables_removed)}",
        f"routes: {change.routes_changed} change, {change.routes_must_change} must "
        f"(churn ratio {change.churn_ratio:.3f})",
        f"host pairs whose working layers change: {change.host_pairs_working_layers_changed} "
        f"of {change.host_pairs}",
        _verdict_line(plan),
        _rounds_line(plan),
    ]
    return lines


def _rounds_line(plan: Plan) -> str:
    rounds = plan.update.rounds
    failed = plan.update.failed_round()
    if failed is not None and failed.proof is not None:
        return (
            f"update rounds: {len(rounds)}, NOT loop-free: after round {failed.number} "
            f"({failed.kind}) {failed.proof.loops} loops, {failed.proof.blackholes} "
            f"blackholes; {failed.proof.witness}"
        )
    walked = sum(r.proof.walked for r in rounds if r.proof is not None)
    return (
        f"update rounds: {len(rounds)}, every state walked ({walked} walks): 0 loops, 0 blackholes"
    )


def _round_cells(update_round: Round) -> list[str]:
    proof = update_round.proof
    return [
        str(update_round.number),
        update_round.kind,
        str(len(update_round.steps)),
        str(len(update_round.switches)),
        "-" if proof is None else f"{proof.loops} / {proof.blackholes}",
    ]


ROUND_HEADER = ["round", "kind", "routes", "switches", "loops / blackholes after"]


def _stats(layer: LayerChange, side: str) -> str:
    stats = layer.before if side == "before" else layer.after
    if stats is None:
        return "-"
    connected = "" if stats.connected else " DISCONNECTED"
    return f"{stats.links} links, diam {stats.diameter}, mean {stats.mean_path:.3f}{connected}"


def _switch_cells(switch: SwitchChange) -> list[str]:
    added, removed, changed, must = switch.route_totals
    return [
        switch.name,
        switch.status,
        str(added),
        str(removed),
        str(changed),
        str(must),
        f"+{len(switch.interfaces_added)} -{len(switch.interfaces_removed)}",
    ]


SWITCH_HEADER = ["switch", "status", "added", "removed", "changed", "must", "interfaces"]
LAYER_HEADER = ["layer", "links in", "links out", "before", "after"]


def _layer_cells(layer: LayerChange) -> list[str]:
    return [
        str(layer.number),
        str(len(layer.links_in)),
        str(len(layer.links_out)),
        _stats(layer, "before"),
        _stats(layer, "after"),
    ]


def plan_text(plan: Plan) -> str:
    """The plan as plain lines: a summary, then one line per layer and per changed switch."""
    lines = _summary_lines(plan)
    for cable in plan.change.cables_added:
        lines.append(f"cable added: {cable}")
    for cable in plan.change.cables_removed:
        lines.append(f"cable removed: {cable}")
    for layer in plan.change.layers:
        cells = _layer_cells(layer)
        lines.append(
            f"layer {cells[0]}: +{cells[1]} -{cells[2]} links; before {cells[3]}; after {cells[4]}"
        )
    for update_round in plan.update.rounds:
        cells = _round_cells(update_round)
        lines.append(
            f"round {cells[0]} ({cells[1]}): {cells[2]} routes on {cells[3]} switches; "
            f"after it {cells[4]} loops / blackholes"
        )
    for switch in plan.change.switches:
        if switch.status == "same":
            continue
        added, removed, changed, must = switch.route_totals
        lines.append(
            f"switch {switch.name}: {switch.status}; routes +{added} -{removed} ~{changed} "
            f"(must {must}); interfaces +{len(switch.interfaces_added)} "
            f"-{len(switch.interfaces_removed)}"
        )
    lines.extend(f"finding: {f}" for f in plan.verdict.findings)
    return "\n".join(lines) + "\n"


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out.extend("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows)
    return out


def plan_markdown(plan: Plan) -> str:
    """One screen as a pull-request comment; the per-switch and per-cable detail folded."""
    change = plan.change
    verdict = plan.verdict
    mark = "✅" if plan.ok else "❌"
    lines = [f"### {mark} fatpaths plan: {change.new}", ""]
    lines += [f"- {line}" for line in _summary_lines(plan)[1:]]
    lines += ["", *_md_table(LAYER_HEADER, [_layer_cells(layer) for layer in change.layers])]
    rounds = [_round_cells(r) for r in plan.update.rounds]
    lines += ["", f"<details><summary>{len(rounds)} update rounds</summary>", ""]
    lines += [*_md_table(ROUND_HEADER, rounds), "", "</details>"]
    changed = [s for s in change.switches if s.status != "same"]
    if changed:
        lines += ["", f"<details><summary>{len(changed)} switches change</summary>", ""]
        rows = [_switch_cells(s) for s in changed[:MARKDOWN_ROWS]]
        lines += _md_table(SWITCH_HEADER, rows)
        if len(changed) > MARKDOWN_ROWS:
            lines.append(f"\n... and {len(changed) - MARKDOWN_ROWS} more (see the JSON plan)")
        lines += ["", "</details>"]
    cables = [f"+ {c}" for c in change.cables_added] + [f"- {c}" for c in change.cables_removed]
    if cables:
        lines += ["", f"<details><summary>{len(cables)} cables change</summary>", "", "```diff"]
        lines += cables[:MARKDOWN_ROWS]
        lines += ["```", "", "</details>"]
    if verdict.findings:
        lines += ["", "<details><summary>forwarding findings</summary>", "", "```"]
        lines += verdict.findings
        lines += ["```", "", "</details>"]
    return "\n".join(lines) + "\n"


def plan_junit(plan: Plan) -> str:
    """JUnit XML: one test for NEW's forwarding check and one per layer (connected)."""
    cases: list[tuple[str, str | None]] = []
    verdict = plan.verdict
    if verdict.checked:
        failure = None if verdict.ok else "\n".join(verdict.findings)
        cases.append(("forwarding check on NEW", failure))
    for update_round in plan.update.rounds:
        proof = update_round.proof
        failure = None
        if proof is not None and not proof.ok:
            failure = f"{proof.loops} loops, {proof.blackholes} blackholes: {proof.witness}"
        cases.append((f"state after round {update_round.number} is loop-free", failure))
    for layer in plan.change.layers:
        after = layer.after
        if after is None:
            continue
        failure = None if after.connected else f"layer {layer.number} does not connect every pair"
        cases.append((f"layer {layer.number} connects every pair", failure))
    failures = sum(1 for _, failure in cases if failure is not None)
    name = quoteattr(f"fatpaths plan {plan.change.new}")
    out = [
        '<?xml version="1.0" encoding="utf-8"?>',
        f'<testsuite name={name} tests="{len(cases)}" failures="{failures}">',
    ]
    for case, failure in cases:
        if failure is None:
            out.append(f'  <testcase classname="fatpaths.plan" name={quoteattr(case)}/>')
        else:
            out.append(f'  <testcase classname="fatpaths.plan" name={quoteattr(case)}>')
            out.append(f'    <failure message="failed">{escape(failure)}</failure>')
            out.append("  </testcase>")
    out.append("</testsuite>")
    return "\n".join(out) + "\n"
