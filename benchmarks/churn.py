"""Churn: how much of a compiled fabric one change of the wiring rewrites (issue "Change the
fabric without rewriting it"), beside an earlier commit's code in the same run.

For each change it compiles the fabric before and after and compares them route by route
(`fatpaths_cfg.plan.change`): a route (switch, layer, family, destination) *must change* when
its old next hop is no longer a shortest-path next hop in the new layer; `churn ratio = routes
changed / routes that must change`. Scenarios:

- Slim Fly q=7 (98 switches, 539 cables, 4 layers, rho 0.6, seed 1): every single-cable removal,
  every single-cable addition (the same cable put back: from the fabric without it to the whole
  one) and every single-switch removal;
- Slim Fly q=19 (9 layers) with --big: a seeded sample of 50 cables, removed and added;
- Jellyfish growth: 98 switches of 11 network ports, 20 switches added one after another, each
  splitting 5 random cables (as Jellyfish expands).

Modes: `now` compiles each side afresh (stable layers and tie-breaks by name); `keep` compiles
the after side with `--keep-layers` of the before side; `ref` is the code of `--ref` (default: the
commit before stable compiles) compiling each side afresh. Printed per scenario and mode: median
and max of churn ratio, routes changed, switch configs changed (a switch whose routes or interface
addresses differ: exactly what its frr.conf and interfaces.sh hold), and layer links changed.

    python benchmarks/churn.py [--ref REF] [--ref-native SO] [--big] [--limit N]

The ref's code runs with this checkout's native extension unless --ref-native names one built
from the ref: the crate's tie-break without name keys is the ref's own, so its tables are the
ref's (checked: the ref's goldens pass with it).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from io import BytesIO
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
NATIVE_SO = "fatpaths_cfg/_native.abi3.so"
DEFAULT_REF = "7b0c6ff"  # the last commit before stable compiles

# A change of the wiring, as data both this checkout and the ref's worker apply to an inventory.
Mutation = dict[str, Any]


def mutate(loaded: Any, mutation: Mutation) -> Any:
    """The inventory with one change applied: `remove_links` (entries of `links:`),
    `remove_switch` (a name: its cables and hosts go too) or `grow` (a new switch, its ports,
    hosts, and the cables it splits)."""
    spec = loaded.spec
    links = list(spec.links)
    switches = list(spec.switches)
    hosts = list(spec.hosts)
    if "remove_links" in mutation:
        gone = set(mutation["remove_links"])
        links = [link for i, link in enumerate(links) if i not in gone]
    if "remove_switch" in mutation:
        name = mutation["remove_switch"]
        switches = [s for s in switches if s.name != name]
        links = [
            link for link in links if link.a.split(":")[0] != name and link.b.split(":")[0] != name
        ]
        hosts = [h for h in hosts if h.uplink is None or h.uplink.split(":")[0] != name]
    if "grow" in mutation:
        grow = mutation["grow"]
        switch_type = type(switches[0])
        link_type = type(links[0])
        host_type = type(hosts[0])
        switches.append(switch_type.model_validate({**grow["switch"]}))
        split = {tuple(pair) for pair in grow["split"]}
        kept = [link for link in links if (link.a, link.b) not in split]
        added = [link_type.model_validate(cable) for cable in grow["cables"]]
        links = kept + added
        hosts = hosts + [host_type.model_validate(host) for host in grow["hosts"]]
    new_spec = spec.model_copy(update={"links": links, "switches": switches, "hosts": hosts})
    return dataclasses.replace(loaded, spec=new_spec)


def growth_steps(inventory: Path, steps: int, seed: int) -> list[Mutation]:
    """Jellyfish expansion: each new switch takes k/2 random cables (u, v) of the fabric as it
    is by then, and is cabled to u and v on the ports those cables freed."""
    import yaml

    data = yaml.safe_load(inventory.read_text(encoding="utf-8"))
    rng = random.Random(seed)
    links = [(link["a"], link["b"]) for link in data["links"]]
    count = len(data["switches"])
    ports = int(data["switches"][0]["ports"])
    hosts_each = sum(1 for h in data["hosts"] if h["uplink"].startswith("jf-0:"))
    network = ports - hosts_each
    mutations = []
    for step in range(steps):
        name = f"jf-{count + step}"
        # Cables with no switch in common, or the new switch would get two cables to one.
        chosen: list[int] = []
        ends: set[str] = set()
        for i in rng.sample(range(len(links)), len(links)):
            pair = {end.split(":")[0] for end in links[i]}
            if not pair & ends:
                chosen.append(i)
                ends |= pair
            if len(chosen) == network // 2:
                break
        split = [links[i] for i in chosen]
        cables = []
        for j, (a, b) in enumerate(split):
            cables.append({"a": a, "b": f"{name}:Ethernet{2 * j + 1}"})
            cables.append({"a": b, "b": f"{name}:Ethernet{2 * j + 2}"})
        host_ports = range(network + 1, network + 1 + hosts_each)
        mutations.append(
            {
                "grow": {
                    "switch": {"name": name, "role": "switch", "ports": ports},
                    "split": [list(pair) for pair in split],
                    "cables": cables,
                    "hosts": [
                        {"name": f"{name}-h{i}", "uplink": f"{name}:Ethernet{p}"}
                        for i, p in enumerate(host_ports)
                    ],
                }
            }
        )
        links = [link for i, link in enumerate(links) if i not in set(chosen)]
        links += [(c["a"], c["b"]) for c in cables]
    return mutations


# --- the worker: runs under either checkout's fatpaths_cfg and writes each compile's tables --


def worker(spec_file: Path, out_dir: Path) -> None:
    """Compile the base inventory and each mutation afresh (as `fatpaths compile` would),
    writing each side's fabric.json data and tables; print a line per compile."""
    import numpy as np

    from fatpaths_cfg import api
    from fatpaths_cfg.inventory.load import load_inventory

    spec = json.loads(spec_file.read_text(encoding="utf-8"))
    loaded = load_inventory(Path(spec["inventory"]))
    sequential = spec.get("sequential", False)
    current = loaded
    for i, mutation in enumerate([None, *spec["mutations"]]):
        if mutation is not None:
            current = mutate(current if sequential else loaded, mutation)
        compiled = api.compile_loaded(current)
        target = out_dir / f"{i}.npz"
        np.savez(
            target,
            data=np.frombuffer(json.dumps(compiled.to_json()).encode(), dtype=np.uint8),
            dist=compiled.routing.dist,
            next_hop=compiled.routing.next_hop,
        )
        print(target, flush=True)


# --- the measuring side ---------------------------------------------------------------------


def read_side(path: Path) -> Any:
    import shutil

    import numpy as np

    from fatpaths_cfg.compiled import EARLIER_SCHEMAS, load_compiled
    from fatpaths_cfg.plan.view import RouteView

    # The side as an output directory (without checksums: the structure is still checked), read
    # by the one loader every stage uses.
    side = path.with_suffix(".out")
    side.mkdir()
    with np.load(path) as arrays:
        (side / "fabric.json").write_bytes(arrays["data"].tobytes())
        np.savez(side / "routing.npz", dist=arrays["dist"], next_hop=arrays["next_hop"])
    view = RouteView(load_compiled(side, schemas=EARLIER_SCHEMAS))
    shutil.rmtree(side)
    path.unlink()
    return view


def ref_views(python: str, root: Path, spec: dict[str, Any], scratch: Path) -> Iterator[Any]:
    """The ref's compile of the base and of each mutation, one at a time."""
    spec_file = scratch / "spec.json"
    spec_file.write_text(json.dumps(spec), encoding="utf-8")
    out = scratch / "ref-out"
    out.mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(root)}
    with subprocess.Popen(
        [python, str(Path(__file__).resolve()), "--worker", str(spec_file), str(out)],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        cwd=scratch,
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            yield read_side(Path(line.strip()))
    if process.returncode:
        raise SystemExit(f"the ref's worker failed with exit code {process.returncode}")


@dataclasses.dataclass
class Sample:
    ratio: float
    routes: int
    must: int
    switches: int
    layer_links: int
    layer_excess: int  # layer link moves beyond the change's own cables and completion


def sample_of(old: Any, new: Any) -> Sample:
    from fatpaths_cfg.plan.change import compare

    change = compare(old, new)
    own = {f"{a} - {b}" for a, b in set(old.cables) ^ set(new.cables)}
    excess = 0
    for layer in change.layers:
        if layer.before is None or layer.after is None:
            continue
        others = [c for c in layer.links_in + layer.links_out if c not in own]
        completion = abs(new.completed[layer.number - 1] - old.completed[layer.number - 1])
        excess += max(0, len(others) - completion)
    return Sample(
        change.churn_ratio,
        change.routes_changed,
        change.routes_must_change,
        len(change.switches_changed),
        change.layer_links_changed,
        excess,
    )


def view_of(compiled: Any) -> Any:
    from fatpaths_cfg.compiled import view_of as compiled_view
    from fatpaths_cfg.plan.view import RouteView

    return RouteView(compiled_view(compiled))


def earlier_of(compiled: Any) -> Any:
    from fatpaths_cfg.compiled import view_of as compiled_view

    return compiled_view(compiled)


@dataclasses.dataclass
class Scenario:
    name: str
    inventory: Path
    mutations: list[Mutation]
    # Removals are measured both ways (base -> mutated is a removal, mutated -> base the
    # addition); growth steps are sequential and measured forward only.
    sequential: bool = False


def run_now(scenario: Scenario, tick: Callable[[], None]) -> dict[str, list[Sample]]:
    from fatpaths_cfg import api
    from fatpaths_cfg.inventory.load import load_inventory

    loaded = load_inventory(scenario.inventory)
    base = api.compile_loaded(loaded)
    base_view = view_of(base)
    samples: dict[str, list[Sample]] = {}

    def add(key: str, sample: Sample) -> None:
        samples.setdefault(key, []).append(sample)

    previous, previous_kept = loaded, base
    previous_view, previous_kept_view = base_view, base_view
    for mutation in scenario.mutations:
        if scenario.sequential:
            changed = mutate(previous, mutation)
            fresh = api.compile_loaded(changed)
            kept = api.compile_loaded(changed, keep_layers=earlier_of(previous_kept))
            fresh_view, kept_view = view_of(fresh), view_of(kept)
            add("now", sample_of(previous_view, fresh_view))
            add("keep", sample_of(previous_kept_view, kept_view))
            previous, previous_kept = changed, kept
            previous_view, previous_kept_view = fresh_view, kept_view
        else:
            changed = mutate(loaded, mutation)
            fresh = api.compile_loaded(changed)
            fresh_view = view_of(fresh)
            add("now removal", sample_of(base_view, fresh_view))
            add("now addition", sample_of(fresh_view, base_view))
            kept = api.compile_loaded(changed, keep_layers=earlier_of(base))
            add("keep removal", sample_of(base_view, view_of(kept)))
            back = api.compile_loaded(loaded, keep_layers=earlier_of(fresh))
            add("keep addition", sample_of(fresh_view, view_of(back)))
        tick()
    return samples


def run_ref(
    scenario: Scenario, python: str, root: Path, scratch: Path, tick: Callable[[], None]
) -> dict[str, list[Sample]]:
    spec = {
        "inventory": str(scenario.inventory),
        "mutations": scenario.mutations,
        "sequential": scenario.sequential,
    }
    views = ref_views(python, root, spec, scratch)
    base = next(views)
    samples: dict[str, list[Sample]] = {}
    previous = base
    for view in views:
        if scenario.sequential:
            samples.setdefault("ref", []).append(sample_of(previous, view))
            previous = view
        else:
            samples.setdefault("ref removal", []).append(sample_of(base, view))
            samples.setdefault("ref addition", []).append(sample_of(view, base))
        tick()
    return samples


def print_table(scenario: str, results: dict[str, list[Sample]], seconds: dict[str, float]) -> None:
    header = (
        f"{'scenario':<22} {'mode':<14} {'n':>4}  {'ratio med':>9} {'max':>6}  "
        f"{'routes med':>10} {'max':>6}  {'must med':>8}  {'switches med':>12} {'max':>4}  "
        f"{'layer links med':>15} {'max':>4} {'excess':>6}  {'s':>6}"
    )
    print(header)
    for mode in sorted(results, key=lambda m: (not m.startswith("ref"), m)):
        rows = results[mode]
        ratios = [r.ratio for r in rows]
        routes = [r.routes for r in rows]
        switches = [r.switches for r in rows]
        links = [r.layer_links for r in rows]
        print(
            f"{scenario:<22} {mode:<14} {len(rows):>4}  {statistics.median(ratios):>9.3f} "
            f"{max(ratios):>6.2f}  {statistics.median(routes):>10.0f} {max(routes):>6}  "
            f"{statistics.median([r.must for r in rows]):>8.0f}  "
            f"{statistics.median(switches):>12.0f} {max(switches):>4}  "
            f"{statistics.median(links):>15.0f} {max(links):>4} "
            f"{sum(r.layer_excess for r in rows):>6}  {seconds.get(mode.split()[0], 0):>6.1f}",
            flush=True,
        )


def extract_ref(ref: str, into: Path, native: Path | None) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", ref], check=True, capture_output=True
    ).stdout
    root = into / "ref"
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(root, filter="data")
    shutil.copy2(native or REPO / NATIVE_SO, root / NATIVE_SO)
    return root


def generate(kind: str, params: list[str], target: Path) -> Path:
    from fatpaths_cfg.cli.topo import topo_generate

    topo_generate(kind, params, target, None, 1, True)
    return target


def scenarios(work: Path, big: bool, limit: int | None) -> list[Scenario]:
    q7 = generate("slimfly", ["q=7"], work / "sf7.yaml")
    import yaml

    data = yaml.safe_load(q7.read_text(encoding="utf-8"))
    cables = list(range(len(data["links"])))[:limit]
    names = [s["name"] for s in data["switches"]][:limit]
    result = [
        Scenario("slimfly q=7 cable", q7, [{"remove_links": [i]} for i in cables]),
        Scenario("slimfly q=7 switch", q7, [{"remove_switch": n} for n in names]),
    ]
    jf = generate("jellyfish", ["nr=98", "k=11", "p=6"], work / "jf98.yaml")
    result.append(Scenario("jellyfish growth", jf, growth_steps(jf, limit or 20, 1), True))
    if big:
        q19 = generate("slimfly", ["q=19"], work / "sf19.yaml")
        text = q19.read_text(encoding="utf-8").replace(
            "defaults:", "routing: {layers: 9, rho: 0.6, algorithm: random, seed: 1}\ndefaults:"
        )
        q19.write_text(text, encoding="utf-8")
        links = len(yaml.safe_load(text)["links"])
        picked = sorted(random.Random(19).sample(range(links), limit or 50))
        result.append(Scenario("slimfly q=19 cable", q19, [{"remove_links": [i]} for i in picked]))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ref", default=DEFAULT_REF, help="git ref of the baseline code")
    parser.add_argument("--ref-native", type=Path, default=None, help="the ref's extension")
    parser.add_argument("--big", action="store_true", help="add Slim Fly q=19 (50 cables)")
    parser.add_argument("--limit", type=int, default=None, help="first N changes (a quick run)")
    parser.add_argument("--worker", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker)
        return
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fatpaths-churn-") as scratch_name:
        scratch = Path(scratch_name)
        root = extract_ref(args.ref, scratch, args.ref_native)
        print(f"baseline: {args.ref} (ref); this checkout: now, keep", flush=True)
        for scenario in scenarios(scratch, args.big, args.limit):
            done = [0]

            def tick(scenario: Scenario = scenario, done: list[int] = done) -> None:
                done[0] += 1
                if done[0] % 50 == 0:
                    print(f"  {scenario.name}: {done[0]} compiles compared", file=sys.stderr)

            seconds: dict[str, float] = {}
            t0 = time.perf_counter()
            results = run_ref(scenario, sys.executable, root, scratch, tick)
            seconds["ref"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            results.update(run_now(scenario, tick))
            seconds["now"] = seconds["keep"] = time.perf_counter() - t0
            print_table(scenario.name, results, seconds)
    print(f"total {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
