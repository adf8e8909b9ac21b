"""Ordered deploy: OLD -> NEW in the plan's loop-free rounds (`fatpaths deploy NEW --from OLD`).

Each round's route changes go to every switch it touches at once (frr: incremental vtysh
commands, linux: `ip route replace`), every switch is read back, each touched switch must hold
exactly the round's routes, and the read-back tables of the whole fabric are walked: only then
does the next round start. A failure undoes the rounds in reverse (every state passed through is
one the plan proved) and the fabric is walked again; `hold` keeps the last verified round. At
the end every switch gets its compiled files: installed without a reload where the switch already
runs them (the routes went in round by round), committed whole where it runs anything else; the
running state is read back against the files and the fabric is walked once more.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fatpaths_cfg.deploy.devices import DeviceBook
from fatpaths_cfg.deploy.linux_box import CommitRefused
from fatpaths_cfg.deploy.live import Addressing, live_fabric, route_lines, table_of
from fatpaths_cfg.deploy.push import (
    DeployOptions,
    DeployReport,
    DeployTarget,
    SwitchResult,
    driver_for,
    plan_targets,
)
from fatpaths_cfg.deploy.state import RouteLine, RouteTable, drift_problem
from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.plan.rounds import CLEANUP, Round, StateProof, walk_state
from fatpaths_cfg.plan.run import Plan, make_plan
from fatpaths_cfg.plan.view import RouteView
from fatpaths_cfg.platforms import PLATFORMS

# Switches a round pushes to and reads back at once (see _Fabric.pool).
WIDE = 16
EXIT_ROLLED_BACK = 1
EXIT_ROLLBACK_UNVERIFIED = 3


@dataclass(frozen=True)
class ReadBack:
    """One switch's tables as read back: the FIB, and zebra's RIB where it has a routing
    daemon (None on platforms without one)."""

    fib: RouteTable
    rib: RouteTable | None


# switch -> its read-back, or None when it could not be read (a failure, never an empty table)
ReadBacks = dict[str, ReadBack | None]


@dataclass
class RoundResult:
    number: int
    kind: str
    undo: bool
    switches: list[str]
    failed: dict[str, str] = field(default_factory=dict)  # switch -> why
    proof: StateProof | None = None  # the walk of the whole fabric, read back after the round
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failed and self.proof is not None and self.proof.ok


@dataclass
class OrderedReport:
    plan: Plan
    rounds: list[RoundResult] = field(default_factory=list)
    final: DeployReport | None = None
    outcome: str = ""  # committed | rolled back | held | rollback not verified | not verified
    state: str = ""  # the state the fabric was read back in
    exit_code: int = 0


def _lines_of(view: RouteView, layer: int, switch: str, dest: str, hop: str) -> list[RouteLine]:
    here = view.index
    written = (
        view.route_line(family, layer, here[switch], here[dest], here[hop])
        for family in view.families
    )
    return [line for line in written if line is not None]


def ordered_platforms() -> list[str]:
    """Platforms whose driver changes single routes (`Deploy.rounds`); the others replace
    whole configs only."""
    return [name for name, p in PLATFORMS.items() if p.deploy is not None and p.deploy.rounds]


def check_ordered_platforms(platforms: set[str]) -> None:
    ordered = ordered_platforms()
    refused = sorted(p for p in platforms if p not in ordered)
    if refused:
        raise UserErrors.single(
            "--from",
            "",
            f"platform {', '.join(refused)} cannot change single routes, so it cannot be "
            "deployed in rounds",
            f"ordered deploy supports {', '.join(ordered)}; deploy the others without --from",
        )


class _Fabric:
    """Open drivers of every switch, and the tables the rounds expect of them."""

    def __init__(
        self,
        plan: Plan,
        old: RouteView,
        new: RouteView,
        targets: list[DeployTarget],
        options: DeployOptions,
        parallel: int,
    ) -> None:
        self.plan, self.old, self.new = plan, old, new
        self.update = plan.update
        self.names = self.update.names
        self.targets = {t.name: t for t in targets}
        self.options, self.parallel = options, parallel
        self.drivers: dict[str, Any] = {}
        self.book = Addressing.of(self.names, new, old)
        # The plan's own union tables: what it proved is what the read-back is held to.
        self.cables = self.update.cables
        self.old_hops = self.update.old_hops
        self.new_hops = self.update.new_hops
        self.both = (self.old_hops >= 0) & (self.new_hops >= 0)
        # Read-backs taken as each switch finished staging / installing its files.
        self.first_tables: ReadBacks = {}
        self.last_tables: ReadBacks = {}

    def pool(self, work: Callable[[str], Any], names: list[str]) -> list[Any]:
        # Every session is open already and each step is one short command on it: a round goes
        # to up to WIDE switches at once (or --parallel, if that is higher).
        with ThreadPoolExecutor(max_workers=max(1, self.parallel, WIDE)) as pool:
            return list(pool.map(work, names))

    def open(self) -> dict[str, str]:
        """Connect to every switch and stage its compiled files: a file the device rejects
        refuses the deploy before any route moves, and the last step only installs them."""
        failed: dict[str, str] = {}

        def one(name: str) -> None:
            target = self.targets[name]
            driver = driver_for(target, self.options)
            try:
                driver.open()
            except Exception as exc:  # any driver's connect error fails this switch
                failed[name] = f"connect: {exc}"
                return
            self.drivers[name] = driver
            try:
                # OLD read back in the same round trip: staging moves no route.
                rib, fib = driver.stage_candidate(filename=str(target.config))
                self.first_tables[name] = ReadBack(fib, rib)
            except Exception as exc:  # the device refuses NEW's files: nothing may move
                failed[name] = f"candidate rejected: {exc}"

        self.first_tables.clear()
        self.pool(one, sorted(self.targets))
        return failed

    def close(self) -> None:
        for driver in self.drivers.values():
            # Closing a dead session must not hide the deploy's outcome.
            with contextlib.suppress(Exception):
                if getattr(driver, "_candidate_loaded", False):
                    driver.discard_config()  # a deploy that stopped leaves nothing staged
                driver.close()

    def expected(self, state: np.ndarray, name: str) -> RouteTable:
        """What `name` holds in `state`: routes already moved written as NEW writes them, the
        others as OLD does (they differ only where addresses changed)."""
        applied = state != self.old_hops
        moved = route_lines((self.new, self.old), self.names, np.where(applied, state, -1), name)
        kept = route_lines((self.old, self.new), self.names, np.where(applied, -1, state), name)
        return table_of({**kept, **moved})

    def read_one(self, name: str, tables: ReadBacks) -> None:
        """`name`'s read-back into `tables`."""
        try:
            rib, fib = self.drivers[name].get_route_tables()
            tables[name] = ReadBack(fib, rib)
        except Exception:  # an unreadable switch is a failure, never an empty table
            tables[name] = None

    def read(self, names: list[str]) -> ReadBacks:
        tables: ReadBacks = {}
        self.pool(lambda name: self.read_one(name, tables), names)
        return tables

    def settle(
        self,
        state: np.ndarray,
        touched: list[str],
        final_state: bool = False,
        tables: ReadBacks | None = None,
    ) -> tuple[dict[str, str], StateProof]:
        """Hold the touched switches to `state` (zebra installs asynchronously: those that
        differ are read again, up to verify_timeout), then walk the whole fabric. `tables` are
        read-backs taken already (a round reads while it pushes); every other switch is read."""
        deadline = time.monotonic() + self.options.verify_timeout
        present = [n for n in self.names if n in self.drivers]
        wanted = {name: self.expected(state, name) for name in touched}
        if tables is None:
            tables = self.read([n for n in touched if n in self.drivers])
        while True:
            problems = {}
            for name in touched:
                problem = _table_problem(wanted[name], tables.get(name))
                if problem:
                    problems[name] = problem
            # A switch that matched holds its routes: only the others are read again.
            again = [n for n in problems if n in self.drivers]
            if not again or time.monotonic() > deadline:
                break
            time.sleep(0.3)
            tables.update(self.read(again))
        tables.update(self.read([n for n in present if n not in tables]))
        fib_tables = {n: read.fib if (read := tables.get(n)) else None for n in present}
        live = live_fabric(self.book, fib_tables)
        # While rounds run, every route OLD and NEW share must hold; at the end, NEW's.
        expected = (self.new_hops >= 0) if final_state else self.both.copy()
        unread = [self.names.index(n) for n in live.unread]
        expected[:, unread, :] = False
        proof = walk_state(live.hops, self.cables, expected, self.names)
        for name, lines in live.strays.items():
            problems.setdefault(name, f"routes no compile has: {', '.join(lines[:3])}")
        return problems, proof

    def commit_files(self) -> DeployReport:
        """After the last round: every switch gets its compiled files, on the sessions the rounds
        opened. A switch that runs them already (its routes went in round by round) has them
        installed without a reload; one that runs anything else gets a whole commit. Either way
        the running state is then read back against the installed files."""
        report = DeployReport()

        def one(name: str) -> SwitchResult:
            target = self.targets[name]
            result = SwitchResult(name, target.platform, target.mgmt)
            started = time.monotonic()
            driver = self.drivers.get(name)
            if driver is None:
                result.detail = "not connected"
                return result
            try:
                try:
                    # Running state read and equal to the files, files read back after, and
                    # the routes as they run then (no other switch's step changes them).
                    rib, fib = driver.install_candidate()
                    self.last_tables[name] = ReadBack(fib, rib)
                    result.status, result.detail = "committed", "installed without a reload"
                except CommitRefused as refused:
                    driver.commit_config()
                    drift = driver.installed_drift()
                    result.status = "failed" if drift else "committed"
                    result.detail = (
                        drift_problem(drift) if drift else f"committed with a reload: {refused}"
                    )
            except Exception as exc:  # the device refused or could not be read: this switch failed
                result.detail = f"{type(exc).__name__}: {exc}"
            result.seconds = round(time.monotonic() - started, 1)
            if name not in self.last_tables:
                self.read_one(name, self.last_tables)  # read now, not after every switch
            return result

        self.last_tables.clear()
        report.results = self.pool(one, sorted(self.targets))
        return report

    def changes(self, steps_round: Round, undo: bool) -> dict[str, str]:
        """One round's steps (or their inverse) as a shell command per switch it touches."""
        by_switch: dict[str, tuple[list[RouteLine], list[RouteLine]]] = {}
        for step in steps_round.steps:
            if step.switch not in self.targets:
                continue  # a switch leaving the fabric keeps its routes; its cables go away
            add, remove = by_switch.setdefault(step.switch, ([], []))
            layer = step.layer - 1
            new_lines = (
                _lines_of(self.new, layer, step.switch, step.destination, step.new)
                if step.new is not None
                else []
            )
            old_lines = (
                _lines_of(self.old, layer, step.switch, step.destination, step.old)
                if step.old is not None
                else []
            )
            if undo:
                add.extend(old_lines)
                remove.extend(new_lines)
            else:
                add.extend(new_lines)
                remove.extend(old_lines)
        # Each platform's driver writes its own make-before-break command; a switch with no
        # session fails the round as "not connected" before any command would be sent.
        return {
            name: self.drivers[name].route_change_command(add, remove)
            if name in self.drivers
            else ""
            for name, (add, remove) in by_switch.items()
        }

    def push(self, steps_round: Round, undo: bool) -> tuple[dict[str, str], ReadBacks]:
        """Apply one round on every switch it touches and read each back in the same round
        trip; the switches it does not touch are read meanwhile (nothing changes them)."""
        commands = self.changes(steps_round, undo)
        failed = {name: "not connected" for name in commands if name not in self.drivers}
        tables: ReadBacks = {}

        def one(name: str) -> None:
            command = commands.get(name)
            try:
                results, rib, fib = self.drivers[name].change_then_read(
                    {"routes": command} if command else {}
                )
            except Exception as exc:  # unreadable, or the push is unknown: a failure either way
                tables[name] = None
                if command:
                    failed[name] = f"{type(exc).__name__}: {exc}"
                return
            tables[name] = ReadBack(fib, rib)
            pushed = results.get("routes")
            if pushed is not None and pushed.status != 0:
                # vtysh -f exits 2 on any line it refuses (it goes on with the rest): the switch
                # failed this round, and the read-back shows where it stands.
                failed[name] = f"the round's routes: {pushed.message()}"

        present = [n for n in self.names if n in self.drivers]
        # The pushes start first; the other switches' reads fill the pool after them.
        self.pool(one, sorted(present, key=lambda n: n not in commands))
        return failed, tables


def _table_problem(want: RouteTable, read: ReadBack | None) -> str | None:
    """How a switch's read-back FIB (and RIB, where it has a routing daemon) misses `want`."""
    if read is None:
        return "could not be read back"
    for kind, got in (("fib", read.fib), ("rib", read.rib)):
        if got is None or dict(got) == want:
            continue  # a platform with no routing daemon has no RIB
        missing = sorted(set(want.items()) - set(got.items()))
        extra = sorted(set(got.items()) - set(want.items()))
        return f"{kind}: {len(missing)} routes missing, {len(extra)} not expected" + (
            f" (first missing {missing[0][0]})" if missing else ""
        )
    return None


def ordered_deploy(
    old: Path,
    new: Path,
    book: DeviceBook,
    options: DeployOptions,
    parallel: int = 4,
    on_failure: str = "rollback",
    on_round: Callable[[RoundResult], None] | None = None,
    before_round: Callable[[int], None] | None = None,
) -> OrderedReport:
    """OLD -> NEW in proven rounds; see the module's docstring. `before_round(k)` runs before
    round k is pushed (tests fail a switch there)."""
    from fatpaths_cfg.plan.run import read_view

    plan = make_plan(old, new, keep_layers=False, check=True)
    report = OrderedReport(plan)
    if not plan.ok:
        report.outcome, report.state, report.exit_code = "refused", "OLD (nothing pushed)", 1
        return report
    old_view, new_view = read_view(old, "OLD"), read_view(new, "NEW")
    check_ordered_platforms({s.platform for s in new_view.compiled.fabric.switches})
    targets, skipped = plan_targets(new, None, book)
    if skipped:
        raise UserErrors.single(
            "--devices",
            "",
            f"no access to {', '.join(skipped)}",
            "an ordered deploy changes every switch a round touches: give every switch",
        )
    fabric = _Fabric(plan, old_view, new_view, targets, options, parallel)
    try:
        return _run(fabric, report, on_failure, on_round, before_round)
    finally:
        fabric.close()


def _run(
    fabric: _Fabric,
    report: OrderedReport,
    on_failure: str,
    on_round: Callable[[RoundResult], None] | None,
    before_round: Callable[[int], None] | None,
) -> OrderedReport:
    began = time.monotonic()
    failed = fabric.open()
    rounds = fabric.update.rounds
    states = [fabric.old_hops, *fabric.update.states]
    start = RoundResult(-1, "stage NEW, read OLD", False, sorted(fabric.targets), failed)
    problems, start.proof = fabric.settle(
        states[0], sorted(fabric.drivers), tables=fabric.first_tables
    )
    start.failed.update(problems)
    start.seconds = round(time.monotonic() - began, 1)
    report.rounds.append(start)
    if on_round:
        on_round(start)
    if not start.ok:
        report.outcome, report.state, report.exit_code = "refused", "OLD (nothing pushed)", 1
        return report
    for index, update_round in enumerate(rounds):
        if before_round:
            before_round(update_round.number)
        result = _apply(fabric, update_round, states[index + 1], undo=False)
        report.rounds.append(result)
        if on_round:
            on_round(result)
        if result.ok:
            continue
        # Undo: the failed round first (partly applied), then every verified one, in reverse.
        last = index if on_failure == "hold" else 0
        verified = True
        for back in range(index, last - 1, -1):
            undo = _apply(fabric, rounds[back], states[back], undo=True)
            report.rounds.append(undo)
            if on_round:
                on_round(undo)
            verified = verified and undo.ok
        if not verified:
            report.outcome = "rollback not verified"
            report.state = "unknown: read back differs from every proven state"
            report.exit_code = EXIT_ROLLBACK_UNVERIFIED
        elif on_failure == "hold":
            report.outcome = "held"
            report.state = f"after round {rounds[index - 1].number}" if index else "OLD"
            report.exit_code = EXIT_ROLLED_BACK
        else:
            report.outcome, report.state = "rolled back", "OLD"
            report.exit_code = EXIT_ROLLED_BACK
        return report
    # Every route is where NEW has it: the files go in.
    started = time.monotonic()
    report.final = fabric.commit_files()
    final = RoundResult(rounds[-1].number + 1, "commit files", False, sorted(fabric.targets))
    problems, final.proof = fabric.settle(
        states[-1], sorted(fabric.drivers), final_state=True, tables=fabric.last_tables
    )
    final.failed = problems | {r.name: r.detail for r in report.final.results if not r.ok}
    final.seconds = round(time.monotonic() - started, 1)
    report.rounds.append(final)
    if on_round:
        on_round(final)
    if final.ok:
        report.outcome, report.state, report.exit_code = "committed", "NEW", 0
    else:
        report.outcome, report.state, report.exit_code = "not verified", "NEW routes", 1
    return report


def _apply(fabric: _Fabric, update_round: Round, state: np.ndarray, undo: bool) -> RoundResult:
    started = time.monotonic()
    result = RoundResult(update_round.number, update_round.kind, undo, update_round.switches)
    result.failed, tables = fabric.push(update_round, undo)
    touched = [n for n in update_round.switches if n in fabric.drivers]
    final = update_round.kind == CLEANUP and not undo
    problems, result.proof = fabric.settle(state, touched, final_state=final, tables=tables)
    result.failed.update(problems)
    result.seconds = round(time.monotonic() - started, 1)
    return result
