"""The two ends of the MPTCP demo, run inside host namespaces as `python3 -m` this module.

Plain sockets with IPPROTO_MPTCP (262): the kernel's path manager opens the subflows, so no
`mptcpize` or iperf build with MPTCP support is needed.
"""

from __future__ import annotations

import socket
import sys
import time

IPPROTO_MPTCP = 262
CHUNK = 1 << 16


def serve(address: str, port: int) -> None:
    """Accept one connection; print the running byte count every 100 ms until it closes."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((address, port))
    listener.listen(1)
    print("listening", flush=True)
    connection, _ = listener.accept()
    connection.settimeout(0.1)
    received, last = 0, 0.0
    while True:
        try:
            data = connection.recv(CHUNK)
        except TimeoutError:
            data = b"-"
        if not data:
            break
        if data != b"-":
            received += len(data)
        now = time.monotonic()
        if now - last >= 0.1:
            print(f"{now:.3f} {received}", flush=True)
            last = now
    print(f"{time.monotonic():.3f} {received}", flush=True)


def send(address: str, port: int, seconds: float) -> None:
    client = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP)
    client.connect((address, port))
    payload = b"\0" * CHUNK
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        client.sendall(payload)
    client.close()


if __name__ == "__main__":
    role, address, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if role == "server":
        serve(address, port)
    else:
        send(address, port, float(sys.argv[4]))
