"""`fatpaths lab image`: the containerlab images, built from Debian packages without a registry.

Each image is a `debootstrap --variant=minbase` root filesystem with the recipe's packages and a
start script, turned into an image by `docker import`. The recipe's hash is stored in an image
label; an image whose label equals the current recipe's hash is left alone, so a rebuild only
happens when the recipe (suite, mirror, packages, start script) changed.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.lab.clab import ClabImages
from fatpaths_cfg.lab.netns import LabCommandError, run

RECIPE_LABEL = "org.fatpaths.recipe"
DEFAULT_SUITE = "bookworm"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
START = "/usr/local/sbin/fatpaths-start"

# PID 1 of both images: returns promptly on SIGTERM so `containerlab destroy` never waits for
# the engine's kill timeout.
_WAIT = 'trap "exit 0" TERM INT\nwhile :; do sleep 3600 & wait $!; done\n'
SWITCH_START = (
    "#!/bin/sh\n"
    "# fatpaths switch image: FRR (watchfrr, zebra, staticd) from the bound /etc/frr/frr.conf.\n"
    "chown frr:frr /etc/frr/frr.conf 2>/dev/null\n"
    "/usr/lib/frr/frrinit.sh start\n" + _WAIT
)
HOST_START = "#!/bin/sh\n# fatpaths host image: the lab configures it from outside.\n" + _WAIT
# Run in the new root before import. Every container is a full copy of its image on some
# storage drivers (vfs), so documentation, translations and caches go.
TRIM = (
    "rm -rf /usr/share/doc/* /usr/share/man/* /usr/share/info/* /usr/share/locale/* "
    "/var/cache/apt/* /var/lib/apt/lists/* /var/cache/debconf/*-old /var/log/*.log; "
    "find /usr/lib/python3* -name __pycache__ -prune -exec rm -rf {} +"
)
# FRR's daemons file must start staticd (the static routes), in case the package says no.
SWITCH_TWEAK = "sed -i 's/^staticd=no/staticd=yes/' /etc/frr/daemons; " + TRIM

SWITCH_PACKAGES = (
    "frr",
    "frr-pythontools",
    "iproute2",
    "procps",
    "lldpd",
    "openssh-server",
)
# python3 runs the MPTCP demo peer (client and server) inside a host, iproute2 has `ip mptcp`.
HOST_PACKAGES = ("iproute2", "iputils-ping", "traceroute", "procps", "python3-minimal")


@dataclass(frozen=True)
class Recipe:
    role: str  # "switch" or "host"
    tag: str
    packages: tuple[str, ...]
    start: str
    tweak: str = ""
    suite: str = DEFAULT_SUITE
    mirror: str = DEFAULT_MIRROR

    @property
    def digest(self) -> str:
        data = {
            "packages": sorted(self.packages),
            "start": self.start,
            "tweak": self.tweak,
            "suite": self.suite,
            "mirror": self.mirror,
        }
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def recipes(
    images: ClabImages | None = None, suite: str = DEFAULT_SUITE, mirror: str = DEFAULT_MIRROR
) -> list[Recipe]:
    images = images or ClabImages()
    return [
        Recipe("switch", images.frr, SWITCH_PACKAGES, SWITCH_START, SWITCH_TWEAK, suite, mirror),
        Recipe("host", images.host, HOST_PACKAGES, HOST_START, TRIM, suite, mirror),
    ]


def docker_available() -> str | None:
    """None if a Docker engine answers, else why not."""
    if shutil.which("docker") is None:
        return "the docker command is not installed"
    done = subprocess.run(["docker", "info"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return f"`docker info` failed: {(done.stderr or done.stdout).strip().splitlines()[-1:]}"
    return None


def image_digest(tag: str) -> str | None:
    """The recipe hash label of a local image, or None if there is no such image."""
    done = subprocess.run(
        ["docker", "image", "inspect", "-f", "{{json .Config.Labels}}", tag],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        return None
    labels = json.loads(done.stdout.strip() or "null") or {}
    return str(labels.get(RECIPE_LABEL, ""))


@dataclass(frozen=True)
class ImageResult:
    recipe: Recipe
    built: bool
    seconds: float


# A slow mirror takes minutes; an hour means the download is stuck.
DEBOOTSTRAP_TIMEOUT_SECONDS = 3600.0


def build_image(recipe: Recipe, force: bool = False) -> ImageResult:
    started = time.monotonic()
    if not force and image_digest(recipe.tag) == recipe.digest:
        return ImageResult(recipe, False, 0.0)
    with tempfile.TemporaryDirectory(prefix=f"fatpaths-image-{recipe.role}-") as work:
        root = Path(work) / "rootfs"
        run(
            [
                "debootstrap",
                "--variant=minbase",
                f"--include={','.join(recipe.packages)}",
                recipe.suite,
                str(root),
                recipe.mirror,
            ],
            timeout=DEBOOTSTRAP_TIMEOUT_SECONDS,
        )
        start = root / START.lstrip("/")
        start.parent.mkdir(parents=True, exist_ok=True)
        start.write_text(recipe.start, encoding="utf-8")
        start.chmod(0o755)
        if recipe.tweak:
            run(["chroot", str(root), "sh", "-c", recipe.tweak])
        tar = subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
        imported = subprocess.run(
            [
                "docker",
                "import",
                "-c",
                f'CMD ["{START}"]',
                "-c",
                f"LABEL {RECIPE_LABEL}={recipe.digest}",
                "-",
                recipe.tag,
            ],
            stdin=tar.stdout,
            capture_output=True,
            text=True,
            check=False,
        )
        assert tar.stdout is not None
        tar.stdout.close()
        if tar.wait() != 0 or imported.returncode != 0:
            raise LabCommandError(f"docker import of {recipe.tag} failed: {imported.stderr}")
    return ImageResult(recipe, True, round(time.monotonic() - started, 1))


def build_images(
    images: ClabImages | None = None,
    force: bool = False,
    suite: str = DEFAULT_SUITE,
    mirror: str = DEFAULT_MIRROR,
    progress: Callable[[str], None] | None = None,
) -> list[ImageResult]:
    """Both images side by side (debootstrap mostly waits on downloads)."""
    reason = docker_available()
    if reason is not None:
        raise UserErrors.single("docker", "", f"no Docker engine: {reason}", "start dockerd")
    if shutil.which("debootstrap") is None:
        raise UserErrors.single(
            "debootstrap", "", "debootstrap is not installed", "apt-get install debootstrap"
        )
    wanted = recipes(images, suite, mirror)
    if progress is not None:
        progress(", ".join(r.tag for r in wanted))
    with ThreadPoolExecutor(max_workers=len(wanted)) as pool:
        return list(pool.map(lambda r: build_image(r, force), wanted))
