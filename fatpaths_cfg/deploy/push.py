"""Deploy a compiled output to its switches: per switch open, check ports, load, diff, commit,
read the routing tables back, and roll back on any difference. One switch failing never stops
the others. Every status is what the device was read back to hold, not what was sent."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from fatpaths_cfg.compiled import LoadedCompiled, load_compiled
from fatpaths_cfg.deploy.cabling import (
    CablingProblem,
    Neighbours,
    compare_cabling,
    expected_neighbours,
    seen_neighbours,
)
from fatpaths_cfg.deploy.devices import Credentials, DeviceAccess, DeviceBook
from fatpaths_cfg.deploy.state import RouteCheck, RouteTable, drift_problem
from fatpaths_cfg.errors import ErrorCollector, UserError, UserErrors
from fatpaths_cfg.fabric import Switch
from fatpaths_cfg.platforms import PLATFORMS, resolve
from fatpaths_cfg.platforms.descriptor import Deploy

__all__ = [
    "Credentials",
    "DeployOptions",
    "DeployReport",
    "DeployTarget",
    "SwitchResult",
    "check_cabling",
    "confirm",
    "deploy",
    "driver_class",
    "plan_targets",
]

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class DeployOptions:
    dry_run: bool = False
    commit: bool = True
    # Seconds after which the switches roll themselves back unless confirmed (None: no timer).
    revert_in: int | None = None
    timeout: int = 30
    verify_timeout: float = 15.0
    known_hosts: Path | None = None


@dataclass(frozen=True)
class DeployTarget:
    name: str
    platform: str
    access: DeviceAccess
    config: Path
    ports: tuple[str, ...]  # every port of the switch
    cabled: tuple[str, ...]  # ports the fabric uses: each must exist before a commit
    routes: RouteTable | None  # the compiled routes, None where no reader exists
    neighbours: Neighbours

    @property
    def mgmt(self) -> str:
        return self.access.address


@dataclass
class SwitchResult:
    name: str
    platform: str
    mgmt: str
    # unchanged | committed | pending | confirmed | diff | staged | failed | rolled back
    status: str = "failed"
    diff: str = ""
    routes: str = "-"
    detail: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status not in ("failed", "rolled back", "miscabled")


@dataclass
class DeployReport:
    results: list[SwitchResult] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # switches without a mgmt address
    cabling: list[CablingProblem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results) and not self.cabling


# Works from a clone (editable install) and from a package index alike.
DEPLOY_EXTRA_HINT = (
    "install the deploy extra: pip install -e '.[deploy]' in a fatpaths clone, "
    "or pip install 'fatpaths-cfg[deploy]' from a package index"
)


def driver_class(platform: str) -> type[Any]:
    """The NAPALM driver of a platform; a platform without one is a user error."""
    try:
        from napalm import get_network_driver
        from napalm.base.exceptions import ModuleImportError
    except ImportError as exc:
        raise UserErrors.single(
            "deploy", "", f"NAPALM cannot be imported ({exc})", DEPLOY_EXTRA_HINT
        ) from None
    deploy = _deploy_of(platform)
    if deploy is None:
        raise UserErrors.single(
            "deploy", "platform", f"platform {platform!r} cannot be deployed", _deployable()
        )
    if ":" in deploy.driver:
        own: type[Any] = resolve(deploy.driver)
        return own
    try:
        driver: type[Any] = get_network_driver(deploy.driver)
        return driver
    except ModuleImportError:
        raise UserErrors.single(
            "deploy", "platform", f"no NAPALM driver for platform {platform!r}", deploy.hint
        ) from None


def _deploy_of(platform: str) -> Deploy | None:
    return PLATFORMS[platform].deploy if platform in PLATFORMS else None


def _deployable() -> str:
    return ", ".join(name for name, p in PLATFORMS.items() if p.deploy is not None)


def missing_drivers(targets: list[DeployTarget]) -> list[UserError]:
    """Every platform's driver, checked once before any switch is touched, so a missing one is
    one message, not one per switch."""
    errors: list[UserError] = []
    for platform in sorted({t.platform for t in targets}):
        try:
            driver_class(platform)
        except UserErrors as exc:
            errors += exc.errors
    return errors


def plan_targets(
    out: Path, limit: list[str] | None, book: DeviceBook
) -> tuple[list[DeployTarget], list[str]]:
    """Targets and skipped switch names; every problem of the input is reported at once."""
    compiled = load_compiled(out)
    switches = {s.name: s for s in compiled.fabric.switches}
    errors = ErrorCollector()
    fabric_file = str(out / "fabric.json")
    for name in limit or []:
        if name not in switches:
            errors.add("--limit", 0, name, "unknown switch", f"one of {', '.join(switches)}")
    for name in book.unknown_names(set(switches)):
        where = book.source.file if book.source else "--devices"
        line = book.source.line_of(("devices", name)) if book.source else 0
        errors.add(
            where,
            line,
            f"devices.{name}",
            "not a switch of this fabric",
            f"one of {', '.join(switches)}",
        )
    chosen = [switches[n] for n in limit if n in switches] if limit else list(switches.values())
    skipped, targets = [], []
    for switch in chosen:
        target = _target(compiled, switch, book, out, errors)
        if target is None and not errors.errors:
            if limit:
                errors.add(
                    fabric_file,
                    0,
                    f"switches.{switch.name}.mgmt",
                    "no management address",
                    "set `mgmt:` for the switch in the "
                    "inventory and recompile, or give it in a --devices file",
                )
            skipped.append(switch.name)
        elif target is not None:
            targets.append(target)
    if not targets and not errors.errors:
        errors.add(
            fabric_file,
            0,
            "switches",
            "no switch has a management address",
            "set `mgmt:` in the inventory and recompile, or give a --devices file",
        )
    errors.errors += missing_drivers(targets)
    errors.raise_if_any()
    return targets, skipped


def _target(
    compiled: LoadedCompiled,
    switch: Switch,
    book: DeviceBook,
    out: Path,
    errors: ErrorCollector,
) -> DeployTarget | None:
    name, platform = switch.name, switch.platform
    fabric_file = str(out / "fabric.json")
    access = book.access(name, switch.index, switch.mgmt, errors)
    if access is None:
        return None
    deploy = _deploy_of(platform)
    if deploy is None:
        errors.add(
            fabric_file,
            0,
            f"switches.{name}.platform",
            f"platform {platform!r} cannot be deployed",
            _deployable(),
        )
        return None
    config = out / "configs" / platform / deploy.candidate.format(switch=name)
    if not config.exists():
        errors.add(
            str(config),
            0,
            "",
            f"no compiled {platform} config for {name}",
            f"fatpaths compile INVENTORY -o {out} --platform {platform}",
        )
        return None
    return DeployTarget(
        name,
        platform,
        access,
        config,
        switch.ports,
        used_ports(compiled, name),
        expected_routes(platform, config),
        expected_neighbours(compiled, name),
    )


def used_ports(compiled: LoadedCompiled, name: str) -> tuple[str, ...]:
    """Ports the compiled fabric cables: each must exist on the device before a commit."""
    fabric = compiled.fabric
    me = fabric.switch_index[name]
    ports: set[str] = set()
    for link in fabric.links:
        ports.update(
            port for end, port in ((link.a, link.a_port), (link.b, link.b_port)) if end == me
        )
    ports.update(h.port for h in fabric.hosts if h.switch == me)
    return tuple(sorted(ports))


def expected_routes(platform: str, config: Path) -> RouteTable | None:
    deploy = _deploy_of(platform)
    if deploy is None or deploy.routes is None:
        return None
    read: Callable[[Path], RouteTable] = resolve(deploy.routes)
    return read(config)


def driver_for(target: DeployTarget, options: DeployOptions) -> Any:
    credentials = target.access.credentials
    optional: dict[str, Any] = {"port": target.access.port}
    deploy = _deploy_of(target.platform)
    if deploy is not None and deploy.ssh:
        extra = {"key_file": credentials.key_file, "known_hosts": options.known_hosts}
        optional.update({k: str(v) for k, v in extra.items() if v is not None})
        optional.update(target.access.paths)
        optional["fabric_ports"] = target.ports
    cls = driver_class(target.platform)
    return cls(
        target.access.host,
        credentials.username,
        credentials.password or "",
        options.timeout,
        optional,
    )


def on_device(
    target: DeployTarget,
    options: DeployOptions,
    work: Callable[[Any, SwitchResult], None],
) -> SwitchResult:
    """Open the switch, run `work`, close; any device error fails this switch only."""
    result = SwitchResult(target.name, target.platform, target.mgmt)
    started = time.monotonic()
    driver = driver_for(target, options)
    try:
        driver.open()
    except Exception as exc:  # any driver's connect error: the switch failed, not the run
        result.detail = f"connect: {exc}"
        return result
    try:
        work(driver, result)
    except Exception as exc:  # a device error must not stop the other switches
        result.status, result.detail = "failed", f"{type(exc).__name__}: {exc}"
    finally:
        driver.close()
        result.seconds = round(time.monotonic() - started, 1)
    return result


def deploy_switch(target: DeployTarget, options: DeployOptions) -> SwitchResult:
    return on_device(
        target, options, lambda driver, result: _load_commit_verify(driver, target, options, result)
    )


def _load_commit_verify(
    driver: Any, target: DeployTarget, options: DeployOptions, result: SwitchResult
) -> None:
    missing = sorted(set(target.cabled) - set(driver.get_interfaces()))
    if missing:
        result.detail = f"cabling: no port {', '.join(missing)} on the device"
        return
    try:
        driver.load_replace_candidate(filename=str(target.config))
    except Exception as exc:
        result.detail = f"candidate rejected: {exc}"
        return
    result.diff = driver.compare_config()
    if options.dry_run or (not options.commit and not result.diff):
        driver.discard_config()
        result.status = "diff" if result.diff else "unchanged"
        return
    if not options.commit:
        result.status = "staged"
        return
    if not result.diff:
        driver.discard_config()
        problem = verify_device(driver, target, options, result)
        result.status, result.detail = ("failed", problem) if problem else ("unchanged", "")
        return
    try:
        driver.commit_config(revert_in=options.revert_in)
    except Exception as exc:
        refused = type(exc).__name__ == "CommitRefused"
        result.status = "failed" if refused else "rolled back"
        result.detail = f"commit: {exc}"
        return
    problem = verify_device(driver, target, options, result)
    if not problem:
        result.status = "pending" if options.revert_in else "committed"
        if options.revert_in:
            result.detail = (
                f"reverts itself in {options.revert_in} s unless confirmed "
                "(fatpaths deploy OUT --confirm-commit)"
            )
        return
    roll_back(driver, result, problem)


def roll_back(driver: Any, result: SwitchResult, problem: str) -> None:
    try:
        driver.rollback()
    except Exception as exc:
        result.status = "failed"
        result.detail = f"{problem}; ROLLBACK NOT VERIFIED: {exc}"
        return
    result.status = "rolled back"
    result.detail = f"{problem} (saved running state restored and read back)"


def verify_device(
    driver: Any, target: DeployTarget, options: DeployOptions, result: SwitchResult
) -> str:
    """'' when the device's RIB and FIB hold exactly the compiled routes (prefix and next hops)
    and its running state equals the installed files; else what differs."""
    if target.routes is None or not hasattr(driver, "get_route_tables"):
        result.detail = "routes not read back (no reader for this platform)"
        return ""
    deadline = time.monotonic() + options.verify_timeout
    while True:
        # zebra installs routes asynchronously after the reload returns.
        checks = read_route_checks(driver, target.routes)
        result.routes = f"{min(c.matching for c in checks)}/{len(target.routes)}"
        if all(c.ok for c in checks) or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    problems = [c.describe() for c in checks if not c.ok]
    drift = driver.installed_drift()
    if drift:
        problems.append(drift_problem(drift))
    return "; ".join(problems)


def read_route_checks(driver: Any, expected: RouteTable) -> list[RouteCheck]:
    rib, fib = driver.get_route_tables()
    checks = [] if rib is None else [RouteCheck("rib", expected, rib)]
    return [*checks, RouteCheck("fib", expected, fib)]


def _parallel(items: Iterable[T], work: Callable[[T], R], parallel: int) -> list[R]:
    # Threads wait on SSH round trips, so more workers than cores still help; the bound keeps
    # a 1000-switch fabric from opening 1000 sessions at once.
    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        return list(pool.map(work, items))


def check_cabling(
    targets: list[DeployTarget], options: DeployOptions, parallel: int
) -> tuple[list[SwitchResult], list[CablingProblem]]:
    problems: list[CablingProblem] = []

    def one(target: DeployTarget) -> SwitchResult:
        def work(driver: Any, result: SwitchResult) -> None:
            seen = seen_neighbours(driver.get_lldp_neighbors())
            found = compare_cabling(target.name, target.ports, target.neighbours, seen)
            problems.extend(found)
            result.status = "miscabled" if found else "cabled"
            result.detail = f"{len(seen)} LLDP neighbours, {len(found)} problems"

        return on_device(target, options, work)

    results = _parallel(targets, one, parallel)
    return results, sorted(problems)


def deploy(
    out: Path,
    limit: list[str] | None,
    book: DeviceBook,
    options: DeployOptions,
    parallel: int = 4,
    on_result: Callable[[SwitchResult], None] | None = None,
    cabling_first: bool = False,
    on_targets: Callable[[list[DeployTarget]], None] | None = None,
) -> DeployReport:
    targets, skipped = plan_targets(out, limit, book)
    if on_targets is not None:
        on_targets(targets)
    report = DeployReport(skipped=skipped)
    if cabling_first:
        results, report.cabling = check_cabling(targets, options, parallel)
        if report.cabling or not all(r.status == "cabled" for r in results):
            # Nothing is pushed onto a fabric wired otherwise than compiled.
            report.results = results
            return report

    def one(target: DeployTarget) -> SwitchResult:
        result = deploy_switch(target, options)
        if on_result is not None:
            on_result(result)
        return result

    report.results = _parallel(targets, one, parallel)
    return report


def confirm(
    out: Path,
    limit: list[str] | None,
    book: DeviceBook,
    options: DeployOptions,
    parallel: int = 4,
) -> DeployReport:
    """Confirm a `--confirm SECONDS` commit: each switch's revert timer is stopped, and read
    back as stopped."""
    targets, skipped = plan_targets(out, limit, book)

    def work(driver: Any, result: SwitchResult) -> None:
        driver.confirm_commit()
        if driver.has_pending_commit():
            result.status, result.detail = "failed", "the revert timer is still armed"
        else:
            result.status = "confirmed"

    results = _parallel(targets, lambda t: on_device(t, options, work), parallel)
    return DeployReport(results, skipped)
