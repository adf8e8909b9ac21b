"""The per-platform commands of one `deploy --from` round: new routes in before old ones out
(make before break), and the registry's list of platforms that can move in rounds."""

from __future__ import annotations

import subprocess

from fatpaths_cfg.deploy.rounds import check_ordered_platforms, ordered_platforms
from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.platforms import PLATFORMS, resolve
from fatpaths_cfg.platforms.frr.deploy import FrrDriver
from fatpaths_cfg.platforms.linux.deploy import LinuxDriver

ADD = [("v4", "10.1.0.0/24", "10.0.0.3"), ("v6", "fd00:1::/64", "fd00::3")]
REMOVE = [("v4", "10.1.0.0/24", "10.0.0.2"), ("v4", "10.2.0.0/24", "10.0.0.2")]


def test_every_platform_that_moves_in_rounds_has_a_driver_that_writes_the_round() -> None:
    assert ordered_platforms() == ["frr", "linux"]
    for name in ordered_platforms():
        deploy = PLATFORMS[name].deploy
        assert deploy is not None and callable(resolve(deploy.driver).route_change_command)


def test_a_platform_without_single_route_changes_is_refused_by_name() -> None:
    try:
        check_ordered_platforms({"frr", "eos"})
    except UserErrors as exc:
        assert "platform eos cannot change single routes" in str(exc)
    else:
        raise AssertionError("eos was accepted for rounds")
    check_ordered_platforms({"frr", "linux"})  # no error


def test_frr_adds_the_new_routes_in_one_file_before_removing_the_old_in_another() -> None:
    driver = FrrDriver("sw1", "root", None, optional_args={"vty_socket": "/run/x"})
    command = driver.route_change_command(ADD, REMOVE)
    first, second = command.index("ip route 10.1.0.0/24 10.0.0.3"), command.index("no ip route")
    assert first < second
    assert "ipv6 route fd00:1::/64 fd00::3" in command
    assert command.count("vtysh --vty_socket /run/x -f /dev/stdin <<") == 2
    # The shell reads it as two here-documents, the second only if the first succeeded.
    assert command.startswith("set -e\n")
    assert subprocess.run(["bash", "-n"], input=command, text=True, check=False).returncode == 0
    only_new = driver.route_change_command(ADD, [])
    assert only_new.count("<<") == 1 and "no ip" not in only_new


def test_linux_replaces_a_moved_route_and_deletes_only_routes_with_no_successor() -> None:
    driver = LinuxDriver("sw1", "root", None)
    lines = driver.route_change_command(ADD, REMOVE).splitlines()
    assert lines == [
        "set -e",
        "ip route replace 10.1.0.0/24 via 10.0.0.3",
        "ip -6 route replace fd00:1::/64 via fd00::3",
        "ip route del 10.2.0.0/24 via 10.0.0.2",
    ]
