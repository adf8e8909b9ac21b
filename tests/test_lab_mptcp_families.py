"""MPTCP per address family on a real dual-stack lab, with the host plans' own endpoints.

A host's endpoint list and limits are per host, not per family, so the host plans order them
(IPv6 first) and size them (one family's count) such that every connection opens one subflow
per layer in its own family and none in the other. This runs it: a v6 and a v4 connection
between two hosts, and the subflows the client's kernel opened.
"""

from __future__ import annotations

import ipaddress
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from lab_fixtures import compiled_lab_output, torn_down_after

from fatpaths_cfg.lab.lifecycle import up
from fatpaths_cfg.lab.netns import in_netns, run
from fatpaths_cfg.lab.plan import HostNode, LabPlan, build_plan
from fatpaths_cfg.lab.probe import family_addresses

HAND6_DUAL = Path(__file__).resolve().parent / "golden" / "hand6-dual.yaml"
PORT = 5301

pytestmark = [pytest.mark.lab, pytest.mark.usefixtures("mptcp_lab")]

# One MPTCP connection (IPPROTO_MPTCP = 262): the server reads until the client closes; the
# client sends for the given seconds. A v6 socket is dual-stack, as applications' usually are.
# How long the client keeps its connection open: the bound on waiting for its subflows.
SENDING_SECONDS = 30

PEER = """
import socket, sys, time
role, version, address, port = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
family = socket.AF_INET6 if version == "6" else socket.AF_INET
sock = socket.socket(family, socket.SOCK_STREAM, 262)
if role == "server":
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((address, port))
    sock.listen(1)
    print("listening", flush=True)
    connection, _ = sock.accept()
    while connection.recv(1 << 16):
        pass
else:
    sock.connect((address, port))
    deadline = time.monotonic() + float(sys.argv[5])
    while time.monotonic() < deadline:
        sock.sendall(bytes(1 << 16))
    sock.close()
"""


@pytest.fixture
def dual_up(tmp_path: Path) -> Iterator[LabPlan]:
    out = compiled_lab_output(HAND6_DUAL, tmp_path / "hand6-dual")
    with torn_down_after(out):
        up(out)
        yield build_plan(out)


def _subflow_peers(client: HostNode, port: int) -> set[str]:
    out = run(in_netns(client.netns, ["ss", "-tnH", "state", "established"]))
    peers = set()
    for line in out.splitlines():
        peer = line.split()[-1]
        address, _, peer_port = peer.rpartition(":")
        if int(peer_port) == port:
            peers.add(address.strip("[]"))
    return peers


def _connection_subflows(plan: LabPlan, version: int, port: int) -> set[str]:
    """Destination addresses of the subflows of one `version` connection h1a -> h2a."""
    client, server = plan.hosts[0], plan.hosts[2]
    assert client.switch != server.switch
    first = family_addresses(plan)[version][server.name][plan.layer_ids[0]]
    any_address = "::" if version == 6 else "0.0.0.0"
    python = [sys.executable, "-c", PEER]
    receiver = subprocess.Popen(
        in_netns(server.netns, [*python, "server", str(version), any_address, str(port)]),
        stdout=subprocess.PIPE,
        text=True,
    )
    sender = None
    try:
        assert receiver.stdout is not None
        receiver.stdout.readline()
        sender = subprocess.Popen(
            in_netns(
                client.netns,
                [*python, "client", str(version), first, str(port), str(SENDING_SECONDS)],
            )
        )
        peers: set[str] = set()
        # Generous: on a loaded machine an announcement can take seconds to become a subflow;
        # the loop ends as soon as every layer's subflow is there, and always before the
        # sender stops (its subflows close with it).
        deadline = time.monotonic() + SENDING_SECONDS - 0.5
        while time.monotonic() < deadline and len(peers) < len(plan.layer_ids):
            peers |= _subflow_peers(client, port)
            time.sleep(0.1)
        return peers
    finally:
        for process in (sender, receiver):
            if process is not None:
                process.kill()
                process.wait()


@pytest.mark.parametrize("version", [6, 4])
def test_a_connection_opens_one_subflow_per_layer_in_its_own_family(
    dual_up: LabPlan, version: int
) -> None:
    server = dual_up.hosts[2]
    layers = family_addresses(dual_up)[version][server.name]
    peers = _connection_subflows(dual_up, version, PORT + version)
    assert {ipaddress.ip_address(p).version for p in peers} == {version}, peers
    assert peers == set(layers.values()), _path_manager_state(dual_up)


# Where the server sends packets that must never arrive: a next hop nobody answers (onlink, so
# it needs no subnet), which holds a connection attempt until neighbour resolution gives up.
UNANSWERED_NEXT_HOP = {4: ["198.51.100.1", "onlink"], 6: ["fe80::dead:beef"]}


@pytest.mark.parametrize("version", [6, 4])
def test_the_servers_futile_joins_leave_room_for_the_clients(
    dual_up: LabPlan, version: int
) -> None:
    """Every host announces, so the server joins the client's announced addresses too; those
    joins go to the client's ephemeral port and fail, but while pending they hold subflow slots.
    Routed into nowhere, they stay pending for seconds: the client's own joins must still fit."""
    client, server = dual_up.hosts[0], dual_up.hosts[2]
    further = list(family_addresses(dual_up)[version][client.name].values())[1:]
    assert further, "the fabric needs more than one layer"
    prefix_length = 32 if version == 4 else 128
    for address in further:
        route = [f"{address}/{prefix_length}", "via", UNANSWERED_NEXT_HOP[version][0]]
        route += ["dev", server.device_in(0), *UNANSWERED_NEXT_HOP[version][1:]]
        run(in_netns(server.netns, ["ip", f"-{version}", "route", "add", *route]))
    layers = family_addresses(dual_up)[version][server.name]
    peers = _connection_subflows(dual_up, version, PORT + 10 + version)
    assert peers == set(layers.values()), _path_manager_state(dual_up)


def _path_manager_state(plan: LabPlan) -> str:
    """What both ends' path managers hold and counted, to tell a lost announcement from a
    refused join when a subflow is missing."""
    shown = []
    for host in (plan.hosts[0], plan.hosts[2]):
        for argv in (
            ["ip", "mptcp", "limits", "show"],
            ["ip", "mptcp", "endpoint", "show"],
            ["sysctl", "net.mptcp.add_addr_timeout"],
            ["nstat", "-asz", "MPTcp*"],
        ):
            out = run(in_netns(host.netns, argv), check=False)
            shown.append(f"{host.name}$ {' '.join(argv)}\n{out}")
    return "\n".join(shown)
