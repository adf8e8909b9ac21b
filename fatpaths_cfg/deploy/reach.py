"""A TCP connection to a switch made from inside a named network namespace.

A lab's management network (`fatpaths lab up OUT --mgmt`) lives in namespaces only, so that
its addresses never reach the deploying machine's own network. A socket belongs to the
namespace it was created in for its whole life, so only its creation has to happen there;
`setns` moves the calling thread alone, which lets the deploy's worker threads each dial
their switch while the rest of the process stays where it was.
"""

from __future__ import annotations

import ctypes
import ipaddress
import os
import socket
from pathlib import Path

NETNS_DIR = Path("/run/netns")  # where `ip netns add` names its namespaces
CLONE_NEWNET = 0x40000000


def _setns(fd: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))


def connect_in_netns(netns: str, host: str, port: int, timeout: float) -> socket.socket:
    """A socket connected to host:port, created inside `netns` (a name under /run/netns)."""
    path = NETNS_DIR / netns
    if "/" in netns or not path.exists():
        raise OSError(f"no network namespace {netns!r} (is the lab up with --mgmt?)")
    family = socket.AF_INET6 if ipaddress.ip_address(host).version == 6 else socket.AF_INET
    with open(path, "rb") as target, open("/proc/thread-self/ns/net", "rb") as home:
        try:
            _setns(target.fileno())
        except OSError as exc:
            raise OSError(
                f"entering network namespace {netns}: {exc.strerror} (needs root)"
            ) from exc
        try:
            sock = socket.socket(family, socket.SOCK_STREAM)
        finally:
            # A thread left in the lab's namespace would carry every later connection of this
            # worker there: going home is not optional.
            _setns(home.fileno())
    try:
        sock.settimeout(timeout)
        sock.connect((host, port))
    except OSError:
        sock.close()
        raise
    return sock
