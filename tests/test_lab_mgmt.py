"""What `lab up --mgmt` and the deploy's reach rest on, without root: the management pool's
checks and addressing, the devices file's `netns:` and `known_hosts:`, and a device read whose
command fails becoming an error with that command's reason (the lab end to end is in
test_deploy_fabric.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fatpaths_cfg import api
from fatpaths_cfg.deploy.devices import Access, load_device_book
from fatpaths_cfg.deploy.linux_box import DeviceReadError, LinuxBoxDriver, RemoteResult
from fatpaths_cfg.deploy.push import plan_targets
from fatpaths_cfg.deploy.reach import connect_in_netns
from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.lab import mgmt
from fatpaths_cfg.lab.plan import build_plan


@pytest.fixture(scope="module")
def hand6(tmp_path_factory: pytest.TempPathFactory, repo: Path) -> Path:
    out = tmp_path_factory.mktemp("hand6")
    api.compile_to_directory(repo / "inventories/hand-6.yaml", out, 7)
    return out


def test_pool_gives_each_switch_a_point_to_point_subnet(hand6: Path) -> None:
    plan = build_plan(hand6)
    ports = mgmt.mgmt_ports(plan, mgmt.check_pool(plan, mgmt.DEFAULT_POOL))
    assert [(p.switch.name, p.near, p.address, p.prefixlen) for p in ports[:2]] == [
        ("leaf1", "198.18.0.0", "198.18.0.1", 31),
        ("leaf2", "198.18.0.2", "198.18.0.3", 31),
    ]
    assert len({p.mgmt_if for p in ports}) == 6
    six = mgmt.mgmt_ports(plan, mgmt.check_pool(plan, "fd00:fa75::/120"))
    assert (six[5].near, six[5].address, six[5].prefixlen) == ("fd00:fa75::a", "fd00:fa75::b", 127)


@pytest.mark.parametrize(
    ("pool", "message"),
    [
        ("198.18.0.0/29", "198.18.0.0/29 holds too few /31 subnets for 6 switches"),
        ("10.0.0.0/24", "10.0.0.0/24 overlaps the fabric's 10.0.0.0/"),
        ("198.18.0.1/24", "has host bits set"),
    ],
)
def test_pool_too_small_overlapping_or_malformed_is_refused(
    hand6: Path, pool: str, message: str
) -> None:
    with pytest.raises(UserErrors) as caught:
        mgmt.check_pool(build_plan(hand6), pool)
    assert message in str(caught.value.errors[0])


def test_devices_file_carries_netns_and_known_hosts_to_the_driver(
    hand6: Path, tmp_path: Path
) -> None:
    key, known = tmp_path / "key", tmp_path / "known_hosts"
    key.write_text("unused")
    key.chmod(0o600)  # ssh (and deploy) refuse a key others can read
    known.write_text("")
    devices = tmp_path / "devices.yaml"
    devices.write_text(
        f"defaults: {{key_file: {key}, known_hosts: {known}, netns: fp-abc123-mgmt}}\n"
        "devices:\n  leaf1: {host: 198.18.0.1, state_dir: /run/x/s0}\n"
    )
    targets, _ = plan_targets(hand6, ["leaf1"], load_device_book(devices, Access()))
    assert targets[0].access.paths == {
        "state_dir": "/run/x/s0",
        "known_hosts": str(known),
        "netns": "fp-abc123-mgmt",
    }

    devices.write_text("devices:\n  leaf1: {host: 198.18.0.1, netns: ../../etc}\n")
    with pytest.raises(UserErrors) as caught:
        load_device_book(devices, Access())
    assert "devices.leaf1.netns" in str(caught.value.errors[0])

    devices.write_text(
        f"defaults: {{key_file: {key}, known_hosts: {tmp_path / 'absent'}}}\n"
        "devices:\n  leaf1: {host: 198.18.0.1}\n"
    )
    with pytest.raises(UserErrors) as caught:
        plan_targets(hand6, ["leaf1"], load_device_book(devices, Access()))
    assert "known_hosts" in str(caught.value.errors[0]) and "no such file" in str(
        caught.value.errors[0]
    )


def test_dialling_from_a_namespace_that_does_not_exist_says_so() -> None:
    with pytest.raises(OSError, match="no network namespace 'fp-nosuch-mgmt'"):
        connect_in_netns("fp-nosuch-mgmt", "198.18.0.1", 22, 1.0)


class LocalBox(LinuxBoxDriver):
    """The driver's reads run by this machine's sh instead of over SSH."""

    def __init__(self, commands: dict[str, str]) -> None:
        super().__init__("local", "root", None)
        self.commands = commands

    def state_commands(self) -> dict[str, str]:
        return self.commands

    def run_script(self, script: str) -> RemoteResult:
        done = subprocess.run(["sh", "-s"], input=script.encode(), capture_output=True, check=False)
        return RemoteResult(done.returncode, done.stdout, done.stderr)


def test_device_read_keeps_each_output_and_fails_with_the_commands_reason(
    tmp_path: Path,
) -> None:
    kept = tmp_path / "kept"
    kept.write_text("a\n\nb")
    state = LocalBox({"one": "printf 'x\\ny\\n'", "two": "echo noise >&2; printf ''"}).read_state(
        [str(kept), str(tmp_path / "absent")]
    )
    assert state.outputs["one"] == "x\ny\n" and state.outputs["two"] == ""
    assert state.file(str(kept)) == "a\n\nb" and state.file(str(tmp_path / "absent")) == ""

    # vtysh without daemons prints its reason on stdout and exits 1; an empty answer taken
    # as an empty table would show the whole candidate as new.
    failing = "echo 'Exiting: failed to connect to any daemons.'; exit 1"
    with pytest.raises(DeviceReadError) as caught:
        LocalBox({"one": "true", "running": failing}).read_state()
    assert str(caught.value) == f"{failing}: Exiting: failed to connect to any daemons."
    with pytest.raises(DeviceReadError, match="ip: cannot open netns"):
        LocalBox({"addr": "echo 'ip: cannot open netns' >&2; exit 255"}).read_state()


def test_changes_run_before_the_read_in_the_same_round_trip(tmp_path: Path) -> None:
    """A round's push and its read-back are one session: the changes run first (a here-document
    is their input), a failed change is reported and does not stop the read."""
    written = tmp_path / "routes"
    box = LocalBox({"one": f"cat {written}"})
    state = box.read_state(
        before={
            "write": f"set -e\ncat > {written} <<'END'\nip route 10.0.0.0/24 10.1.0.1\nEND",
            "refused": "echo 'line 1: % Unknown command' >&2; exit 2",
        }
    )
    assert state.outputs["one"] == "ip route 10.0.0.0/24 10.1.0.1\n"
    assert state.before["write"].status == 0
    assert state.before["refused"].status == 2
    assert state.before["refused"].message() == "line 1: % Unknown command"
    assert "write" not in state.outputs and "refused" not in state.outputs
