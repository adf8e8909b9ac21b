"""How `topo cost` shows its figures: one table column per network, and Figure 10's bars."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.table import Table

from fatpaths_cfg.support.console import make_table

COST_PARTS = ("routers", "copper", "fiber")


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return "-" if value is None else str(value)


def cost_table(bills: list[dict[str, Any]]) -> Table:
    priced = all("cost" in bill for bill in bills)
    currency = bills[0].get("prices", {}).get("currency", "") if priced else ""
    table = make_table("what the fabric costs" if priced else "what the fabric is made of")
    table.add_column("figure")
    for bill in bills:
        table.add_column(str(bill["network"]), justify="right")

    def row(label: str, pick: Any) -> None:
        table.add_row(label, *(_cell(pick(bill)) for bill in bills))

    row("hosts (N)", lambda b: b["hosts"])
    row("switches", lambda b: b["switches"])
    row(
        "switches by ports",
        lambda b: ", ".join(f"{c}x{k}" for k, c in b["switches_by_ports"].items()),
    )
    row("ports used", lambda b: b["ports"]["used"])
    row("ports installed", lambda b: b["ports"]["installed"])
    row("ports used per endpoint", lambda b: b["ports"]["used_per_endpoint"])
    row("switch-switch cables", lambda b: b["cables"]["switch_switch"])
    row("host cables", lambda b: b["cables"]["host"])
    row("cables per endpoint", lambda b: b["cables"]["per_endpoint"])
    row("switch cable metres", lambda b: b["cables"]["switch_switch_length_m"]["total"])
    row("longest switch cable m", lambda b: b["cables"]["switch_switch_length_m"]["max"])
    row("racks (rows)", lambda b: f"{b['layout']['racks']} ({b['layout']['rows']})")
    if priced:
        row(
            "switch models bought",
            lambda b: ", ".join(f"{m['count']}x{m['radix']}p" for m in b["switch_models"]),
        )
        row("ports bought per endpoint", lambda b: b["ports"]["bought_per_endpoint"])
        row(
            "copper / fiber cables",
            lambda b: f"{b['cables']['copper']:,} / {b['cables']['fiber']:,}",
        )
        for part in (*COST_PARTS, "total"):
            row(f"{part} ({currency})", lambda b, p=part: b["cost"][p])
        for part in (*COST_PARTS, "total"):
            row(f"{part} per endpoint", lambda b, p=part: b["cost_per_endpoint"][p])
    return table


def plot_cost(bills: list[dict[str, Any]], caption: str, path: Path) -> None:
    """Stacked bars of cost per endpoint (routers, copper, fiber), one per network, as the
    FatPaths paper's Figure 10; the caption says what was run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [str(b["network"]) for b in bills]
    currency = bills[0]["prices"]["currency"]
    fig, ax = plt.subplots(figsize=(max(4.0, 1.3 * len(bills) + 2), 4.2))
    bottom = [0.0] * len(bills)
    for part, colour in zip(COST_PARTS, ("#4c72b0", "#dd8452", "#55a868"), strict=True):
        values = [float(b["cost_per_endpoint"][part]) for b in bills]
        ax.bar(names, values, bottom=bottom, label=part, color=colour)
        bottom = [a + v for a, v in zip(bottom, values, strict=True)]
    for i, total in enumerate(bottom):
        ax.annotate(f"{total:,.0f}", (i, total), ha="center", va="bottom", fontsize=8)
    ax.set_ylabel(f"cost per endpoint ({currency})")
    ax.set_ylim(0, max(bottom, default=1.0) * 1.2 or 1.0)
    ax.legend(loc="upper left", fontsize=8, ncol=3)
    ax.tick_params(axis="x", labelrotation=20, labelsize=8)
    fig.text(0.01, 0.01, caption, fontsize=6, ha="left", va="bottom", wrap=True)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)


def match_table(document: dict[str, Any]) -> Any:
    from fatpaths_cfg.support.console import make_table

    records = document["configurations"]
    priced = any("cost_per_endpoint" in r for r in records)
    table = make_table(
        f"configurations for {document['hosts']:,} hosts within {document['tolerance']:.0%}"
    )
    columns = [
        "kind", "configuration", "N", "switches", "radix", "k'", "p", "ports/N", "cables/N",
        "diameter",
    ]  # fmt: skip
    if priced:
        columns.append(f"cost/N ({records[0]['currency']})")
    columns.append("note")
    for column in columns:
        table.add_column(
            column, justify="left" if column in ("kind", "configuration", "note") else "right"
        )
    for r in records:
        cells = [
            r["kind"], r["configuration"], f"{r['hosts']:,}", f"{r['switches']:,}", str(r["radix"]),
            str(r["network_radix"]), str(r["hosts_per_switch"]), f"{r['ports_per_endpoint']:.2f}",
            f"{r['cables_per_endpoint']:.2f}", "-" if r["diameter"] is None else str(r["diameter"]),
        ]  # fmt: skip
        if priced:
            cells.append(f"{r['cost_per_endpoint']:,.0f}")
        cells.append(r["note"])
        table.add_row(*cells)
    return table
