"""The containerlab engine of `lab up`/`down`: deploy `OUT/lab/<fabric>.clab.yml` as emitted.

After the deploy every container's network namespace is attached under the name the namespace
engine would have given it (`ip netns attach NAME PID`), so `lab test`, `fail`, `repair` and
`mptcp` run the very same probes, from outside the containers, on both engines.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.lab.netns import LabCommandError, LabWaitError, existing_netns, ip_batch, run
from fatpaths_cfg.lab.plan import LabPlan

CONTAINER_PREFIX = "clab"
# containerlab's documented switch for its release check (a network round trip per command).
_ENV = {**os.environ, "CLAB_VERSION_CHECK": "disable"}


def topology_path(plan: LabPlan) -> Path:
    return plan.lab_dir / f"{plan.name}.clab.yml"


def load_topology(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return loaded


def container_name(topo_name: str, node: str) -> str:
    return f"{CONTAINER_PREFIX}-{topo_name}-{node}"


def check_engine(plan: LabPlan) -> Path:
    """The topology to deploy; a user error if containerlab, Docker or an image is missing."""
    path = topology_path(plan)
    if not path.is_file():
        raise UserErrors.single(str(path), "", "no containerlab topology", "recompile")
    if shutil.which("containerlab") is None:
        raise UserErrors.single(
            "containerlab",
            "",
            "containerlab is not installed",
            "go install github.com/srl-labs/containerlab@latest (or see containerlab.dev)",
        )
    from fatpaths_cfg.lab.images import docker_available

    reason = docker_available()
    if reason is not None:
        raise UserErrors.single("docker", "", f"no Docker engine: {reason}", "start dockerd")
    topo = load_topology(path)
    nodes: dict[str, Any] = topo["topology"]["nodes"]
    for image in sorted({str(node["image"]) for node in nodes.values()}):
        done = subprocess.run(
            ["docker", "image", "inspect", image], capture_output=True, check=False
        )
        if done.returncode != 0:
            raise UserErrors.single(
                str(path),
                "topology.nodes.image",
                f"image {image} is not in the local Docker engine",
                f"build the lab images with `fatpaths lab image {plan.out}`",
            )
    names = [container_name(str(topo["name"]), n) for n in nodes]
    leftover = _existing_containers(names)
    if leftover:
        raise UserErrors.single(
            "docker",
            "",
            f"container {leftover[0]} exists but no lab state records it",
            f"remove it (`containerlab destroy -t {path}`) if it is a leftover",
        )
    return path


def _existing_containers(names: list[str]) -> list[str]:
    out = run(["docker", "ps", "-a", "--format", "{{.Names}}"])
    have = set(out.split())
    return [n for n in names if n in have]


# Slim Fly q=5 (250 containers) deploys in 80 s on overlay2; half an hour means it is stuck.
CONTAINERLAB_TIMEOUT_SECONDS = 1800.0


def _containerlab(argv: list[str], path: Path) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            argv,
            cwd=path.parent,
            env=_ENV,
            capture_output=True,
            text=True,
            check=False,
            timeout=CONTAINERLAB_TIMEOUT_SECONDS,
        )
    except subprocess.TimeoutExpired:
        raise LabWaitError(
            f"{' '.join(argv[:2])} {path} did not finish in {CONTAINERLAB_TIMEOUT_SECONDS:g} s",
            "see `docker ps -a` for the lab's containers; `fatpaths lab down OUT` removes them",
        ) from None


def deploy(path: Path) -> None:
    done = _containerlab(["containerlab", "deploy", "-t", path.name], path)
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-5:])
        raise LabCommandError(f"containerlab deploy -t {path} failed:\n{tail}")


def destroy(path: Path) -> None:
    done = _containerlab(["containerlab", "destroy", "-t", path.name, "--cleanup"], path)
    if done.returncode != 0:
        raise LabCommandError(f"containerlab destroy -t {path} failed: {done.stderr.strip()}")


def container_pids(topo_name: str, nodes: list[str]) -> dict[str, int]:
    names = [container_name(topo_name, n) for n in nodes]
    out = run(["docker", "inspect", "-f", "{{.State.Pid}}", *names])
    pids = dict(zip(nodes, (int(p) for p in out.split()), strict=True))
    dead = [n for n, pid in pids.items() if pid == 0]
    if dead:
        raise LabCommandError(f"containers not running after deploy: {', '.join(dead[:5])}")
    return pids


def attach_namespaces(plan: LabPlan, topo_name: str) -> list[str]:
    """`ip netns attach` every node under its namespace-engine name; the names attached."""
    names = {s.name: s.netns for s in plan.switches} | {h.name: h.netns for h in plan.hosts}
    pids = container_pids(topo_name, list(names))
    ip_batch(f"netns attach {names[node]} {pid}" for node, pid in pids.items())
    return list(names.values())


def detach_namespaces(namespaces: list[str]) -> int:
    """Only the names go: the namespaces themselves belong to the containers."""
    ours = [ns for ns in namespaces if ns in existing_netns()]
    ip_batch(f"netns del {ns}" for ns in ours)
    return len(ours)
