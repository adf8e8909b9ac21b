"""The options that say how to reach the switches, shared by `deploy` and `discover` so that
both read the same flags the same way (see deploy.devices.access_from_flags)."""

from __future__ import annotations

import typer

USERNAME = typer.Option(None, "--username", "-u", help="Login (default root).")
PASSWORD_ENV = typer.Option(
    None, "--password-env", help="Environment variable holding the password."
)
PASSWORD_FILE = typer.Option(None, "--password-file", help="File holding the password.")
KEY_FILE = typer.Option(None, "--key-file", help="SSH private key file.")
KNOWN_HOSTS = typer.Option(
    None, "--known-hosts", help="Extra known_hosts file (unknown host keys are refused)."
)
PORT = typer.Option(None, "--port", min=1, max=65535, help="SSH (or eAPI) port (default 22).")
LLDP_SOCKET = typer.Option(
    None, "--lldp-socket", help="lldpcli -u on the device (lldpd with its own socket)."
)
TIMEOUT = typer.Option(30, "--timeout", help="Connect and command timeout, seconds.")
