"""Ordered deploy on real switches: hand-6 as six namespaces with sshd and FRR, seed 7 -> seed 8
in the plan's rounds. Between rounds every switch is read back and the fabric walked; a switch
that fails in round 2 sends every switch back to the old routing, read back and walked."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_deploy_support import NamespaceLab, build_fabric, compiled_frr_table
from typer.testing import CliRunner

from fatpaths_cfg import api
from fatpaths_cfg.cli import build_app
from fatpaths_cfg.deploy.devices import Access, load_device_book
from fatpaths_cfg.deploy.push import DeployOptions
from fatpaths_cfg.deploy.rounds import RoundResult, ordered_deploy
from fatpaths_cfg.plan.run import make_plan

SWITCHES = [f"leaf{i}" for i in range(1, 7)]


@pytest.fixture
def hand6(tmp_path: Path, repo: Path) -> Iterator[tuple[NamespaceLab, dict[int, Path], Path]]:
    outs = {}
    for seed in (7, 8):
        out = tmp_path / f"seed{seed}"
        api.compile_to_directory(repo / "inventories/hand-6.yaml", out, seed)
        outs[seed] = out
    lab = NamespaceLab(tmp_path)
    try:
        build_fabric(lab, outs[7] / "fabric.json", lldp=False)
        devices = lab.devices_file(tmp_path / "devices.yaml")
        result = CliRunner().invoke(
            build_app(),
            [
                "deploy",
                str(outs[7]),
                "--devices",
                str(devices),
                "--known-hosts",
                str(lab.known_hosts),
            ],
        )
        assert result.exit_code == 0, result.output
        yield lab, outs, devices
    finally:
        lab.close()


def _book_and_options(lab: NamespaceLab, devices: Path) -> tuple[object, DeployOptions]:
    book = load_device_book(devices, Access())
    return book, DeployOptions(known_hosts=lab.known_hosts, verify_timeout=20.0)


@pytest.mark.lab
@pytest.mark.slow
def test_rounds_are_read_back_and_walked_and_end_on_the_new_tables(
    hand6: tuple[NamespaceLab, dict[int, Path], Path],
) -> None:
    lab, outs, devices = hand6
    plan = make_plan(outs[7], outs[8], check=False)
    route_rounds = [r for r in plan.update.rounds if r.kind == "routes"]
    assert len(route_rounds) >= 2, "seed 7 -> 8 should need more than one round"
    book, options = _book_and_options(lab, devices)
    seen: list[RoundResult] = []
    report = ordered_deploy(outs[7], outs[8], book, options, 3, on_round=seen.append)  # type: ignore[arg-type]
    assert report.outcome == "committed", [(r.number, r.failed) for r in seen]
    assert report.exit_code == 0
    pushed = [r for r in seen if r.kind == "routes"]
    assert [r.number for r in pushed] == [r.number for r in route_rounds]
    for result in seen:
        # Every state between rounds was read back from all six switches and walked.
        assert result.proof is not None and result.proof.ok, result
        assert result.proof.walked >= 6 * 5 * 3
        assert not result.failed
    for name in SWITCHES:
        want = compiled_frr_table(outs[8], name)
        assert lab.devices[name].rib() == want == lab.devices[name].fib(), name
        # The last step installs NEW's files (without a reload: the routes are in place), and
        # the running config equals them, read back.
        installed = (lab.devices[name].frr_dir / "frr.conf").read_bytes()
        assert installed == (outs[8] / "configs" / "frr" / name / "frr.conf").read_bytes(), name
    assert report.final is not None
    assert [r.status for r in report.final.results] == ["committed"] * 6
    # Only routes changed, and they went in round by round: no switch needs a reload.
    details = {r.name: r.detail for r in report.final.results}
    assert set(details.values()) == {"installed without a reload"}, details


@pytest.mark.lab
def test_a_switch_that_cannot_stage_its_files_refuses_the_deploy_before_any_route_moves(
    hand6: tuple[NamespaceLab, dict[int, Path], Path],
) -> None:
    lab, outs, devices = hand6
    # leaf3's state directory becomes a plain file: staging NEW's files there fails on the
    # device (mkdir: not a directory), as a full disk or a read-only mount would.
    state = lab.devices["leaf3"].state_dir
    aside = state.with_name("state.aside")
    state.rename(aside)
    state.write_text("not a directory\n")
    book, options = _book_and_options(lab, devices)
    seen: list[RoundResult] = []
    try:
        report = ordered_deploy(outs[7], outs[8], book, options, 3, on_round=seen.append)  # type: ignore[arg-type]
    finally:
        state.unlink()
        aside.rename(state)
    assert report.outcome == "refused" and report.exit_code == 1
    assert report.state == "OLD (nothing pushed)"
    assert [r.number for r in seen] == [-1]
    assert "candidate rejected" in seen[0].failed["leaf3"]
    assert set(seen[0].failed) == {"leaf3"}
    for name in SWITCHES:
        want = compiled_frr_table(outs[7], name)
        assert lab.devices[name].rib() == want == lab.devices[name].fib(), name
        # Nothing stays staged on a switch after a refused deploy.
        assert not (lab.devices[name].state_dir / "candidate").exists(), name


@pytest.mark.lab
@pytest.mark.slow
def test_a_switch_failing_in_round_2_sends_the_fabric_back_to_old(
    hand6: tuple[NamespaceLab, dict[int, Path], Path],
) -> None:
    lab, outs, devices = hand6
    plan = make_plan(outs[7], outs[8], check=False)
    route_rounds = [r for r in plan.update.rounds if r.kind == "routes"]
    second = route_rounds[1]
    victim = second.switches[0]
    socket = lab.devices[victim].frr_dir / "staticd.vty"
    hidden = socket.with_suffix(".hidden")

    def before(number: int) -> None:
        if number == second.number:
            socket.rename(hidden)  # vtysh on the victim can no longer reach staticd

    def after(result: RoundResult) -> None:
        if result.number == second.number and not result.undo and hidden.exists():
            hidden.rename(socket)  # back, so that the undo can reach it

    book, options = _book_and_options(lab, devices)
    seen: list[RoundResult] = []

    def record(result: RoundResult) -> None:
        seen.append(result)
        after(result)

    report = ordered_deploy(
        outs[7],
        outs[8],
        book,
        options,
        3,
        on_round=record,
        before_round=before,  # type: ignore[arg-type]
    )
    assert report.outcome == "rolled back" and report.exit_code == 1
    assert report.state == "OLD"
    failed = next(r for r in seen if r.number == second.number and not r.undo)
    assert victim in failed.failed
    undone = [r.number for r in seen if r.undo]
    assert undone == [second.number, *reversed([r.number for r in route_rounds[:1]])]
    assert all(r.proof is not None and r.proof.ok for r in seen if r.undo)
    for name in SWITCHES:
        want = compiled_frr_table(outs[7], name)
        assert lab.devices[name].rib() == want == lab.devices[name].fib(), name


@pytest.mark.lab
def test_ordered_deploy_refuses_a_platform_that_cannot_change_single_routes(
    hand6: tuple[NamespaceLab, dict[int, Path], Path], tmp_path: Path, repo: Path
) -> None:
    _, outs, devices = hand6
    eos = tmp_path / "eos"
    text = (repo / "inventories/hand-6.yaml").read_text().replace("platform: frr", "platform: eos")
    (tmp_path / "hand-6.yaml").write_text(text)
    api.compile_to_directory(tmp_path / "hand-6.yaml", eos, 8)
    result = CliRunner().invoke(
        build_app(),
        ["deploy", str(eos), "--from", str(outs[7]), "--devices", str(devices)],
    )
    assert result.exit_code == 2
    assert "platform eos cannot change single routes" in result.output


def _verify_live(out: Path, lab: NamespaceLab, devices: Path, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        build_app(),
        [
            "verify",
            str(out),
            "--live",
            "--devices",
            str(devices),
            "--known-hosts",
            str(lab.known_hosts),
            *extra,
        ],
    )
    return result.exit_code, result.output


@pytest.mark.lab
@pytest.mark.slow
def test_verify_live_finds_a_planted_loop_a_blackhole_and_a_stray_route(
    hand6: tuple[NamespaceLab, dict[int, Path], Path],
) -> None:
    lab, outs, devices = hand6
    code, output = _verify_live(outs[7], lab, devices, "--compare", str(outs[8]))
    assert code == 0, output
    assert output.count(f"matches {outs[7]}") == 6
    assert "PASS: live fabric walked" in output and "0 loops, 0 blackholes" in output

    # A loop: leaf1 sends a prefix to a neighbour that, for that prefix, sends it back.
    table1 = compiled_frr_table(outs[7], "leaf1")
    fabric = json.loads((outs[7] / "fabric.json").read_text())
    peer_of = {}  # leaf1's next-hop address -> (neighbour, the neighbour's hop back to leaf1)
    for link, addresses in zip(fabric["links"], fabric["addressing"]["links"], strict=True):
        ends = {link["a"]["switch"]: addresses["a_v4"], link["b"]["switch"]: addresses["b_v4"]}
        if "leaf1" in ends:
            (neighbour,) = set(ends) - {"leaf1"}
            peer_of[ends[neighbour].split("/")[0]] = (neighbour, ends["leaf1"].split("/")[0])
    prefix, (neighbour, back) = next(
        (p, peer_of[next(iter(h))])
        for p, h in sorted(table1.items())
        if p in compiled_frr_table(outs[7], peer_of[next(iter(h))][0])
    )
    (old_hop,) = compiled_frr_table(outs[7], neighbour)[prefix]
    lab.devices[neighbour].vtysh(
        "configure terminal", f"ip route {prefix} {back}", f"no ip route {prefix} {old_hop}"
    )
    code, output = _verify_live(outs[7], lab, devices)
    assert code == 1, output
    assert f"{neighbour}: drift: 1 routes missing, 1 not compiled" in output
    assert "loop" in output and "FAIL: live fabric walked" in output

    # Undo it, then a blackhole: one switch loses one route.
    lab.devices[neighbour].vtysh(
        "configure terminal", f"ip route {prefix} {old_hop}", f"no ip route {prefix} {back}"
    )
    assert _verify_live(outs[7], lab, devices)[0] == 0
    lab.devices[neighbour].vtysh("configure terminal", f"no ip route {prefix} {old_hop}")
    code, output = _verify_live(outs[7], lab, devices)
    assert code == 1 and "blackhole" in output, output
    lab.devices[neighbour].vtysh("configure terminal", f"ip route {prefix} {old_hop}")

    # A stray route: a prefix no compile has.
    hop3 = sorted(compiled_frr_table(outs[7], "leaf3").values())[0].pop()
    lab.devices["leaf3"].vtysh("configure terminal", f"ip route 10.98.0.0/24 {hop3}")
    code, output = _verify_live(outs[7], lab, devices)
    assert code == 1 and "stray route 10.98.0.0/24" in output, output
