"""Mutation tests of backup routes (`routing.backup: lfa`): plant a bad backup in a rendered
file and check that verify finds it, with the file and line at fault."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fatpaths_cfg import api
from fatpaths_cfg.compiled import FamilyAddresses, LoadedCompiled, load_compiled
from fatpaths_cfg.inventory.load import load_inventory
from fatpaths_cfg.render.base import BACKUP_DISTANCE
from fatpaths_cfg.verify.checker import check_forwarding
from fatpaths_cfg.verify.findings import (
    BACKUP_DIFFERS,
    BACKUP_LOOP,
    BACKUP_NOT_LOOP_FREE,
    MISSING_BACKUP,
    Finding,
)
from fatpaths_cfg.verify.readers import plan_reading

INVENTORY = Path(__file__).resolve().parent.parent / "inventories" / "slimfly-q5.yaml"
PLATFORMS = ("frr", "eos", "sonic", "cumulus", "junos", "nxos")
ROUTES_FILE = {
    "frr": "configs/frr/{}/frr.conf",
    "eos": "configs/eos/{}.cfg",
    "sonic": "configs/sonic/{}/frr.conf",
    "cumulus": "configs/cumulus/{}/frr.conf",
    "junos": "configs/junos/{}.set",
    "nxos": "configs/nxos/{}.cfg",
}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("slimfly-q5-lfa")
    loaded = load_inventory(INVENTORY)
    spec = loaded.spec.routing.model_copy(update={"backup": "lfa"})
    compiled = api.compile_loaded(loaded, spec)
    api.build_output(compiled, platforms=list(PLATFORMS)).commit(out)
    return out


@pytest.fixture
def out(pristine: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "out"
    shutil.copytree(pristine, copy)
    return copy


def _verify(out: Path, platform: str) -> list[Finding]:
    loaded = load_compiled(out)
    return check_forwarding(loaded, plan_reading(loaded, platform)).findings


def _v4(loaded: LoadedCompiled) -> FamilyAddresses:
    assert loaded.addresses is not None and loaded.addresses.v4 is not None
    return loaded.addresses.v4


def _prefix(loaded: LoadedCompiled, layer: int, t: int) -> str:
    return _v4(loaded).subnets[layer - 1][t]


def _hop_address(loaded: LoadedCompiled, s: int, n: int) -> str:
    index = loaded.fabric.link_between[(s, n)]
    side = "a" if loaded.fabric.links[index].a == n else "b"
    return _v4(loaded).links[index][0 if side == "a" else 1].split("/")[0]


def _backup_line(out: Path, platform: str, switch: str, prefix: str, hop: str) -> int:
    path = out / ROUTES_FILE[platform].format(switch)
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        words = text.split()
        if prefix in words and hop in words and str(BACKUP_DISTANCE) in words:
            return number
    raise AssertionError(f"no backup route to {prefix} via {hop} in {path}")


def _replace_line(out: Path, platform: str, switch: str, line: int, text: str | None) -> None:
    path = out / ROUTES_FILE[platform].format(switch)
    lines = path.read_text().splitlines(keepends=True)
    lines[line - 1 : line] = [] if text is None else [text]
    path.write_text("".join(lines))


def _upstream_case(loaded: LoadedCompiled, layer: int) -> tuple[int, int, int]:
    """(s, t, n): s has a backup towards t, and n is a neighbour of s in the layer whose own
    route towards t goes through s: a backup via n loops once s's primary cable fails."""
    assert loaded.backup is not None
    nh, backup = loaded.next_hop[layer - 1], loaded.backup[layer - 1]
    mask = loaded.layer_masks[layer - 1]
    between = loaded.fabric.link_between
    nr = loaded.fabric.nr
    return next(
        (s, t, n)
        for s in range(nr)
        for t in range(nr)
        if backup[s, t] >= 0
        for n in range(nr)
        if (s, n) in between and mask[between[(s, n)]] and nh[n, t] == s
    )


@pytest.mark.parametrize("platform", PLATFORMS)
def test_pristine_backups_verify(pristine: Path, platform: str) -> None:
    loaded = load_compiled(pristine)
    check = check_forwarding(loaded, plan_reading(loaded, platform))
    assert check.findings == []
    assert check.backups is not None
    assert loaded.backup is not None
    assert check.backups.routes == int((loaded.backup >= 0).sum())
    assert check.backups.loops == 0
    assert check.backups.walks - check.backups.dropped > 0


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_backup_through_an_upstream_neighbour_loops_and_names_the_line(
    out: Path, platform: str
) -> None:
    loaded = load_compiled(out)
    assert loaded.backup is not None
    layer = 2
    s, t, n = _upstream_case(loaded, layer)
    names = [sw.name for sw in loaded.fabric.switches]
    prefix = _prefix(loaded, layer, t)
    right = _hop_address(loaded, s, int(loaded.backup[layer - 1, s, t]))
    line = _backup_line(out, platform, names[s], prefix, right)
    text = (out / ROUTES_FILE[platform].format(names[s])).read_text().splitlines()[line - 1]
    _replace_line(
        out, platform, names[s], line, text.replace(right, _hop_address(loaded, s, n)) + "\n"
    )
    findings = _verify(out, platform)
    kinds = {f.kind for f in findings}
    assert kinds == {BACKUP_LOOP, BACKUP_NOT_LOOP_FREE, BACKUP_DIFFERS}
    where = (ROUTES_FILE[platform].format(names[s]), line)
    for finding in findings:
        assert finding.location is not None
        assert (finding.location.file, finding.location.line) == where
        assert finding.layer == layer
    loop = next(f for f in findings if f.kind == BACKUP_LOOP)
    assert loop.source == names[s] and loop.destination == names[t]
    assert names[s] in loop.path[1:] and names[n] in loop.path
    assert "down" in loop.message and "loops" in loop.message


def test_a_deleted_backup_is_missing_at_its_switch(out: Path) -> None:
    loaded = load_compiled(out)
    assert loaded.backup is not None
    s, t = 3, next(t for t in range(loaded.fabric.nr) if loaded.backup[0, 3, t] >= 0)
    names = [sw.name for sw in loaded.fabric.switches]
    hop = _hop_address(loaded, s, int(loaded.backup[0, s, t]))
    line = _backup_line(out, "frr", names[s], _prefix(loaded, 1, t), hop)
    _replace_line(out, "frr", names[s], line, None)
    findings = _verify(out, "frr")
    assert [f.kind for f in findings] == [MISSING_BACKUP]
    assert findings[0].source == names[s] and findings[0].destination == names[t]


def test_a_backup_with_another_distance_is_not_read_as_a_backup(out: Path) -> None:
    loaded = load_compiled(out)
    assert loaded.backup is not None
    s, t = 3, next(t for t in range(loaded.fabric.nr) if loaded.backup[0, 3, t] >= 0)
    names = [sw.name for sw in loaded.fabric.switches]
    hop = _hop_address(loaded, s, int(loaded.backup[0, s, t]))
    line = _backup_line(out, "frr", names[s], _prefix(loaded, 1, t), hop)
    _replace_line(out, "frr", names[s], line, f"ip route {_prefix(loaded, 1, t)} {hop} 20\n")
    kinds = sorted(f.kind for f in _verify(out, "frr"))
    assert kinds == ["missing-backup", "unparsed-line"]
