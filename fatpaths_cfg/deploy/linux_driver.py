"""A NAPALM driver for a plain Linux switch: the compiled iproute2 script (configs/linux/) is
the whole configuration, the kernel's tables are the running config."""

from __future__ import annotations

from fatpaths_cfg.deploy.linux_box import LinuxBoxDriver


class LinuxDriver(LinuxBoxDriver):
    """`linux` platform: see LinuxBoxDriver for the commit, check and rollback contract."""

    script_name = "switch.sh"
    routes_in_kernel_view = True
