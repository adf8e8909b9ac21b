"""Parallel dataplanes (P-Net): the fabric model, the inventory forms and the compile."""

from __future__ import annotations

import pytest

from fatpaths_cfg.fabric import Fabric, Host, Link, Switch, Uplink


def two_plane_fabric() -> Fabric:
    """Two planes of two switches each; h0 and h1 attach to both planes."""
    switches = [
        Switch(i, f"p{i // 2 + 1}-s{i % 2}", "frr", "switch", ("e1", "e2", "e3"), None, i // 2)
        for i in range(4)
    ]
    links = [Link(0, 0, "e1", 1, "e1", 50.0), Link(1, 2, "e1", 3, "e1", 50.0)]
    hosts = [
        Host(0, "h0", 0, "e2", 50.0, None, (Uplink(0, 0, "e2"), Uplink(1, 2, "e2"))),
        Host(1, "h1", 1, "e2", 50.0, None, (Uplink(0, 1, "e2"), Uplink(1, 3, "e2"))),
    ]
    return Fabric("two", switches, links, hosts)


def test_single_plane_host_gets_its_one_uplink() -> None:
    host = Host(0, "h", 3, "Ethernet5", 100.0)
    assert host.uplinks == (Uplink(0, 3, "Ethernet5"),)
    fabric = Fabric("one", [Switch(0, "s", "frr", "switch", ("e1",))], [], [])
    assert fabric.planes == 1
    assert fabric.switches_of_plane(0) == [0]


def test_two_plane_model_invariants() -> None:
    fabric = two_plane_fabric()
    assert fabric.planes == 2
    assert fabric.switches_of_plane(0) == [0, 1]
    assert fabric.switches_of_plane(1) == [2, 3]
    assert fabric.hosts_of_switch == [[0], [1], [0], [1]]
    for host in fabric.hosts:
        assert [u.plane for u in host.uplinks] == [0, 1]
        assert (host.switch, host.port) == (host.uplinks[0].switch, host.uplinks[0].port)
        assert all(fabric.switches[u.switch].plane == u.plane for u in host.uplinks)


def test_host_rejects_inconsistent_uplinks() -> None:
    with pytest.raises(ValueError, match="first uplink"):
        Host(0, "h", 1, "e2", 1.0, None, (Uplink(0, 0, "e2"),))
    with pytest.raises(ValueError, match="one per plane"):
        Host(0, "h", 0, "e2", 1.0, None, (Uplink(0, 0, "e2"), Uplink(0, 1, "e2")))
