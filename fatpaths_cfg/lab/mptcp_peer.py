"""The two ends of the MPTCP demo, run inside host namespaces as `python3 -m` this module.

Plain sockets with IPPROTO_MPTCP (262): the kernel's path manager opens the subflows, so no
`mptcpize` or iperf build with MPTCP support is needed.

Neither end waits without a limit: the receiver gives up when no client connects, or when the
connection goes quiet, and the sender when it cannot connect or its data stops moving; each
says why in one line on stderr and exits 1, so the demo reports it instead of hanging.
"""

from __future__ import annotations

import socket
import sys
import time
from typing import NoReturn

IPPROTO_MPTCP = 262
CHUNK = 1 << 16


def _give_up(message: str) -> NoReturn:
    print(message, file=sys.stderr, flush=True)
    raise SystemExit(1)


def serve(address: str, port: int, wait: float) -> None:
    """Accept one connection; print the running byte count every 100 ms until it closes, or
    until nothing arrived for `wait` seconds."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((address, port))
    listener.listen(1)
    listener.settimeout(wait)
    print("listening", flush=True)
    try:
        connection, _ = listener.accept()
    except TimeoutError:
        _give_up(f"receiver: no client connected to port {port} in {wait:g} s")
    connection.settimeout(0.1)
    received, last, heard = 0, 0.0, time.monotonic()
    while True:
        try:
            data = connection.recv(CHUNK)
        except TimeoutError:
            data = b"-"
        if not data:
            break
        now = time.monotonic()
        if data != b"-":
            received += len(data)
            heard = now
        elif now - heard > wait:
            print(f"{now:.3f} {received}", flush=True)
            _give_up(f"receiver: nothing received for {wait:g} s after {received} bytes")
        if now - last >= 0.1:
            print(f"{now:.3f} {received}", flush=True)
            last = now
    print(f"{time.monotonic():.3f} {received}", flush=True)


def send(address: str, port: int, seconds: float, wait: float) -> None:
    client = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP)
    client.settimeout(wait)
    try:
        client.connect((address, port))
    except OSError as exc:
        _give_up(f"sender: cannot connect to {address} port {port}: {exc.strerror or exc}")
    payload = b"\0" * CHUNK
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            client.sendall(payload)
    except OSError as exc:
        _give_up(f"sender: sending to {address} stopped: {exc.strerror or exc}")
    client.close()


if __name__ == "__main__":
    role, address, port, wait = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    if role == "server":
        serve(address, port, wait)
    else:
        send(address, port, float(sys.argv[5]), wait)
