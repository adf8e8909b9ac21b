"""Deploy a compiled output to its switches: per switch open, check cabling, load, diff,
commit, verify, and roll back on any failure. One switch failing never stops the others."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fatpaths_cfg.compiled import LoadedCompiled, load_compiled
from fatpaths_cfg.errors import ErrorCollector, UserErrors

# Per platform: which compiled file (or folder) is the candidate, and which NAPALM driver.
CONFIG_PATHS: dict[str, str] = {
    "frr": "configs/frr/{name}",
    "eos": "configs/eos/{name}.cfg",
    "sonic": "configs/sonic/{name}/config_db.json",
}
ROUTE_LINE = re.compile(r"^ipv?6? route (\S+) ", re.MULTILINE)


@dataclass(frozen=True)
class Credentials:
    username: str
    password: str | None = None
    key_file: Path | None = None


@dataclass(frozen=True)
class DeployOptions:
    port: int = 22
    dry_run: bool = False
    commit: bool = True
    timeout: int = 30
    verify_timeout: float = 15.0
    known_hosts: Path | None = None
    # Device paths of the frr driver (see FrrDriver); None keeps the driver's default.
    frr_dir: str | None = None
    state_dir: str | None = None
    vty_socket: str | None = None


@dataclass(frozen=True)
class DeployTarget:
    name: str
    platform: str
    mgmt: str
    config: Path
    ports: tuple[str, ...]
    # Static route prefixes the device must hold after the commit (None: not verifiable).
    routes: frozenset[str] | None


@dataclass
class SwitchResult:
    name: str
    platform: str
    mgmt: str
    status: str = "failed"  # unchanged | committed | diff | staged | failed | rolled back
    diff: str = ""
    routes: str = "-"
    detail: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status not in ("failed", "rolled back")


@dataclass
class DeployReport:
    results: list[SwitchResult] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # switches without a mgmt address

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)


def driver_class(platform: str) -> type[Any]:
    """The NAPALM driver of a platform; a platform without one is a user error."""
    try:
        from napalm import get_network_driver
        from napalm.base.exceptions import ModuleImportError
    except ImportError:
        raise UserErrors.single(
            "deploy", "", "NAPALM is not installed", "pip install 'fatpaths-cfg[deploy]'"
        ) from None
    if platform == "frr":
        from fatpaths_cfg.deploy.frr_driver import FrrDriver

        return FrrDriver
    if platform == "linux":
        raise UserErrors.single(
            "deploy", "platform", "linux switches cannot be deployed yet (no driver)",
            "run the compiled configs/linux/<switch>.sh on the box, or use the frr platform",
        )
    try:
        driver: type[Any] = get_network_driver(platform)
        return driver
    except ModuleImportError:
        hint = "pip install napalm-sonic" if platform == "sonic" else "install its NAPALM driver"
        raise UserErrors.single(
            "deploy", "platform", f"no NAPALM driver for platform {platform!r}", hint
        ) from None


def plan_targets(out: Path, limit: list[str] | None) -> tuple[list[DeployTarget], list[str]]:
    """Targets and skipped switch names; every problem of the input is reported at once."""
    compiled = load_compiled(out)
    switches = {s["name"]: s for s in compiled.data["switches"]}
    errors = ErrorCollector()
    fabric_file = str(out / "fabric.json")
    for name in limit or []:
        if name not in switches:
            errors.add("--limit", 0, name, "unknown switch", f"one of {', '.join(switches)}")
    chosen = [switches[n] for n in limit if n in switches] if limit else list(switches.values())
    skipped = [] if limit else [s["name"] for s in chosen if not s.get("mgmt")]
    targets = []
    for switch in chosen:
        name, platform = switch["name"], switch["platform"]
        if not switch.get("mgmt"):
            if limit:
                errors.add(fabric_file, 0, f"switches.{name}.mgmt", "no management address",
                           "set `mgmt:` for the switch in the inventory and recompile")
            continue
        if platform not in CONFIG_PATHS and platform != "linux":
            errors.add(fabric_file, 0, f"switches.{name}.platform",
                       f"platform {platform!r} cannot be deployed", "frr, eos or sonic")
            continue
        try:
            driver_class(platform)
        except UserErrors as exc:
            errors.errors.extend(
                type(e)(e.file, e.line, f"switches.{name}.platform", e.message, e.hint)
                for e in exc.errors
            )
            continue
        config = out / CONFIG_PATHS[platform].format(name=name)
        if not config.exists():
            errors.add(str(config), 0, "", f"no compiled {platform} config for {name}",
                       f"fatpaths compile INVENTORY -o {out} --platform {platform}")
            continue
        targets.append(DeployTarget(name, platform, switch["mgmt"], config,
                                    used_ports(compiled, name), expected_routes(platform, config)))
    if not targets and not errors.errors:
        errors.add(fabric_file, 0, "switches", "no switch has a management address",
                   "set `mgmt:` for the switches in the inventory and recompile")
    errors.raise_if_any()
    return targets, skipped


def used_ports(compiled: LoadedCompiled, name: str) -> tuple[str, ...]:
    """Ports the compiled fabric cables: each must exist on the device before a commit."""
    ports: set[str] = set()
    for link in compiled.data["links"]:
        for end in (link["a"], link["b"]):
            if end["switch"] == name:
                ports.add(end["port"])
    ports.update(h["port"] for h in compiled.data["hosts"] if h["switch"] == name)
    return tuple(sorted(ports))


def expected_routes(platform: str, config: Path) -> frozenset[str] | None:
    if platform != "frr":
        return None
    return frozenset(ROUTE_LINE.findall((config / "frr.conf").read_text(encoding="utf-8")))


def driver_for(target: DeployTarget, credentials: Credentials, options: DeployOptions) -> Any:
    optional: dict[str, Any] = {"port": options.port}
    if target.platform == "frr":
        extra = {
            "key_file": credentials.key_file,
            "known_hosts": options.known_hosts,
            "frr_dir": options.frr_dir,
            "state_dir": options.state_dir,
            "vty_socket": options.vty_socket,
        }
        optional.update({k: str(v) for k, v in extra.items() if v is not None})
    cls = driver_class(target.platform)
    return cls(target.mgmt, credentials.username, credentials.password or "", options.timeout,
               optional)


def deploy_switch(
    target: DeployTarget, credentials: Credentials, options: DeployOptions
) -> SwitchResult:
    result = SwitchResult(target.name, target.platform, target.mgmt)
    started = time.monotonic()
    driver = driver_for(target, credentials, options)
    try:
        driver.open()
    except Exception as exc:  # any driver's connect error: the switch failed, not the run
        result.detail = f"connect: {exc}"
        return result
    try:
        _load_commit_verify(driver, target, options, result)
    except Exception as exc:  # a device error must not stop the other switches
        result.status, result.detail = "failed", f"{type(exc).__name__}: {exc}"
    finally:
        driver.close()
        result.seconds = round(time.monotonic() - started, 1)
    return result


def _load_commit_verify(
    driver: Any, target: DeployTarget, options: DeployOptions, result: SwitchResult
) -> None:
    missing = sorted(set(target.ports) - set(driver.get_interfaces()))
    if missing:
        result.detail = f"cabling: no port {', '.join(missing)} on the device"
        return
    try:
        driver.load_replace_candidate(filename=str(target.config))
    except Exception as exc:
        result.detail = f"candidate rejected: {exc}"
        return
    result.diff = driver.compare_config()
    if options.dry_run:
        driver.discard_config()
        result.status = "diff" if result.diff else "unchanged"
        return
    if not options.commit:
        result.status = "staged" if result.diff else "unchanged"
        return
    if not result.diff:
        driver.discard_config()
        result.status = "unchanged"
        problem = verify_routes(driver, target, options, result)
        if problem:
            result.status, result.detail = "failed", problem
        return
    try:
        driver.commit_config()
    except Exception as exc:
        result.status, result.detail = "rolled back", f"commit: {exc}"
        return
    problem = verify_routes(driver, target, options, result)
    if not problem:
        result.status = "committed"
        return
    driver.rollback()
    result.status, result.detail = "rolled back", problem


def verify_routes(
    driver: Any, target: DeployTarget, options: DeployOptions, result: SwitchResult
) -> str:
    """'' when the device holds exactly the compiled static routes, else what differs."""
    if target.routes is None or not hasattr(driver, "installed_static_routes"):
        return ""
    deadline = time.monotonic() + options.verify_timeout
    while True:
        # zebra installs routes asynchronously after the reload returns.
        installed = driver.installed_static_routes()
        result.routes = f"{len(installed & target.routes)}/{len(target.routes)}"
        if installed == target.routes:
            return ""
        if time.monotonic() > deadline:
            missing, extra = target.routes - installed, installed - target.routes
            return (f"verify: {len(missing)} compiled routes not installed "
                    f"({', '.join(sorted(missing)[:3])}), {len(extra)} unexpected")
        time.sleep(0.2)


def deploy(
    out: Path,
    limit: list[str] | None,
    credentials: Credentials,
    options: DeployOptions,
    parallel: int = 4,
    on_result: Callable[[SwitchResult], None] | None = None,
) -> DeployReport:
    targets, skipped = plan_targets(out, limit)
    report = DeployReport(skipped=skipped)

    def one(target: DeployTarget) -> SwitchResult:
        result = deploy_switch(target, credentials, options)
        if on_result is not None:
            on_result(result)
        return result

    # Threads wait on SSH round trips, so more workers than cores still help.
    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        report.results = list(pool.map(one, targets))
    return report
