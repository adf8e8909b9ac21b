"""Backup routes: floating routes that forward once the primary's cable is down, each a loop-free
alternate, none looping with any one cable of a layer down."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

import numpy as np

from fatpaths_cfg import _native
from fatpaths_cfg.failure_walks import FailureWalks, replay_failed, walk_failures
from fatpaths_cfg.verify.context import Room, RouteArrays, int32_columns, resolve
from fatpaths_cfg.verify.findings import (
    BACKUP_DIFFERS,
    BACKUP_LOOP,
    BACKUP_NOT_LOOP_FREE,
    BAD_NEXT_HOP,
    MISSING_BACKUP,
    OUTSIDE_LAYER,
    UNKNOWN_PREFIX,
    BackupSummary,
    Finding,
)
from fatpaths_cfg.verify.model import Location


class BackupChecks(Room):
    """Backup routes, each alone and under every single-cable failure."""

    def check_backups(self, r: RouteArrays) -> None:
        """Each backup line is a loop-free alternate of fabric.json's layer, and with any one
        cable of a layer down (its primaries withdrawn, the backups in their place) no walk
        loops."""
        loaded, parsed = self.loaded, self.parsed
        if self.index.encoding == "vlan" or (not len(parsed.backups) and loaded.backup is None):
            return
        started = time.perf_counter()
        block = parsed.backups.interned()
        b = int32_columns(resolve(block, self.index, self.nr))

        def text(row: int) -> str:
            prefix = block.prefix_names[block.prefix[row]]
            return f"{prefix} via {block.hop_names[block.next_hop[row]]} (backup)"

        sound = self.backup_faults(b, text)
        hop, row = self.ctx.primary_tables(r)
        hop_link = np.where(row >= 0, r.link[np.maximum(row, 0)], -1)
        fields = [np.where(sound, column, -1).astype(np.int32) for column in (b.table, b.hop)]
        backup, backup_row = _native.primary_tables(
            fields[0], b.switch, b.dest, fields[1], self.ctx.table_count, self.nr
        )
        backup_link = np.where(backup_row >= 0, b.link[np.maximum(backup_row, 0)], -1)
        self.check_compiled_backups(backup, backup_row, b, text)
        for table in range(self.ctx.table_count):
            layer = self.index.layer_of_table(table) - 1
            assert self.layer_links is not None  # backups exist only with layers
            links = np.flatnonzero(self.layer_links[layer])
            walks = walk_failures(
                hop[table],
                hop_link[table],
                backup[table],
                backup_link[table],
                links,
                self.routed_pairs,
            )
            self.report_backup_loops(
                table, walks, (hop[table], hop_link[table], backup[table], backup_link[table])
            )
            self.ctx.backup_walks.append(walks)
        self.ctx.result.backups = BackupSummary(
            len(b.table),
            sum(w.failures for w in self.ctx.backup_walks),
            sum(w.walks for w in self.ctx.backup_walks),
            sum(w.dropped for w in self.ctx.backup_walks),
            sum(len(w.loops) for w in self.ctx.backup_walks),
        )
        self.ctx.result.seconds["backups"] = time.perf_counter() - started

    def backup_faults(self, b: RouteArrays, text: Callable[[int], str]) -> np.ndarray:
        """Per backup line: sound, or reported here (its prefix, next hop, layer or the
        loop-free inequality dist(N, t) < dist(N, s) + dist(s, t) is wrong)."""
        sound = np.ones(len(b.table), dtype=bool)
        for row in range(len(b.table)):
            table, s, t, n = (int(a[row]) for a in (b.table, b.switch, b.dest, b.hop))
            layer = self.index.layer_of_table(table) if table >= 0 else 0
            where = self.parsed.location(int(b.file[row]), int(b.line[row]))
            source = self.names[s]
            kind, why = "", ""
            if table < 0:
                kind, why = UNKNOWN_PREFIX, f"{source}: route {text(row)}: no layer subnet"
            elif n < 0:
                kind = BAD_NEXT_HOP
                why = f"{source}: route {text(row)}: next hop is not a neighbour's link address"
            elif self.layer_links is not None and not self.layer_links[layer - 1, b.link[row]]:
                kind = OUTSIDE_LAYER
                why = (
                    f"layer {layer}: {source} route {text(row)}: link {int(b.link[row])} "
                    f"({source}-{self.names[n]}) is not in the layer"
                )
            else:
                dist = self.ctx.dist[layer - 1].astype(np.int64)
                if not dist[n, t] < dist[n, s] + dist[s, t]:
                    kind = BACKUP_NOT_LOOP_FREE
                    why = (
                        f"layer {layer}: {source} -> {self.names[t]} route {text(row)}: "
                        f"{self.names[n]} is {dist[n, t]} hop(s) from {self.names[t]}, not "
                        f"fewer than {dist[n, s]} + {dist[s, t]} through {source}"
                    )
            if kind:
                sound[row] = kind == BACKUP_NOT_LOOP_FREE  # still forwards: the walk shows how
                self.ctx.add(Finding(kind, why, where, layer or None, source, self.names[t]))
        return sound

    def check_compiled_backups(
        self,
        backup: np.ndarray,
        backup_row: np.ndarray,
        b: RouteArrays,
        text: Callable[[int], str],
    ) -> None:
        """The backups read against fabric.json's (routing.npz `backup`): each one there, and
        the same alternate."""
        compiled = self.loaded.backup
        if compiled is None:
            return
        for table in range(self.ctx.table_count):
            want = compiled[self.index.layer_of_table(table) - 1]
            have, rows = backup[table], backup_row[table]
            for s, t in zip(*np.nonzero((want >= 0) & (rows < 0)), strict=True):
                if self.names[s] not in self.parsed.switch_file:
                    continue  # the whole config is missing, reported once as such
                prefix = self.index.subnet_of.get((table, int(t)), f"subnet of {self.names[t]}")
                self.ctx.add(
                    Finding(
                        MISSING_BACKUP,
                        f"{self.index.table_name(table)}: {self.names[s]} has no backup route "
                        f"to {prefix} ({self.names[t]}) via {self.names[want[s, t]]}",
                        self.ctx.switch_location(int(s)),
                        self.index.layer_of_table(table),
                        self.names[s],
                        self.names[t],
                    )
                )
            for s, t in zip(*np.nonzero((rows >= 0) & (have != want)), strict=True):
                row = int(rows[s, t])
                expected = self.names[want[s, t]] if want[s, t] >= 0 else "no backup"
                self.ctx.add(
                    Finding(
                        BACKUP_DIFFERS,
                        f"{self.index.table_name(table)}: {self.names[s]} -> {self.names[t]} "
                        f"route {text(row)}: fabric.json says {expected}",
                        self.parsed.location(int(b.file[row]), int(b.line[row])),
                        self.index.layer_of_table(table),
                        self.names[s],
                        self.names[t],
                    )
                )

    def report_backup_loops(
        self,
        table: int,
        walks: FailureWalks,
        tables: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    ) -> None:
        """One finding per backup that leads a walk into a loop, at its line, with the failed
        cable and an example path."""
        fabric = self.fabric
        examples: dict[tuple[int, int], tuple[int, list[int]]] = {}
        counts: Counter[tuple[int, int]] = Counter()
        for link, s, t in walks.loops:
            path, used = replay_failed(*tables, link, s, t)
            at = used[0] if used else s
            counts[(at, t)] += 1
            if (at, t) not in examples or s == at:
                examples[(at, t)] = (link, path)
        for (at, t), (link, path) in sorted(examples.items()):
            cable = fabric.links[link]
            names = tuple(self.names[p] for p in path)
            self.ctx.add(
                Finding(
                    BACKUP_LOOP,
                    f"{self.index.table_name(table)}: with cable "
                    f"{self.names[cable.a]}:{cable.a_port}-{self.names[cable.b]}:{cable.b_port} "
                    f"down, {self.names[at]}'s backup towards {self.names[t]} loops; "
                    f"{counts[(at, t)]} walk(s) loop, e.g. {' -> '.join(names)}",
                    self.backup_location(table, at, t),
                    self.index.layer_of_table(table),
                    self.names[at],
                    self.names[t],
                    names,
                    counts[(at, t)],
                )
            )

    def backup_location(self, table: int, s: int, t: int) -> Location:
        backups = self.parsed.backups.interned()
        b = resolve(backups, self.index, self.nr)
        match = np.flatnonzero((b.table == table) & (b.switch == s) & (b.dest == t))
        if not len(match):
            return self.ctx.switch_location(s)
        return self.parsed.location(int(b.file[match[0]]), int(b.line[match[0]]))
