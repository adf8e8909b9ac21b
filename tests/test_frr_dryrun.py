"""Every rendered frr.conf (frr and sonic platforms, Slim Fly q=5) passes FRR's own parser.

Uses `vtysh --dryrun -f FILE` from Debian's FRR package (`.ci/run` installs it). A missing vtysh
fails the test: the check is part of the definition of done, not an optional extra.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from fatpaths_cfg import api

SLIMFLY_Q5 = Path(__file__).resolve().parent.parent / "inventories" / "slimfly-q5.yaml"


def test_every_frr_conf_passes_vtysh_dryrun(tmp_path: Path) -> None:
    vtysh = shutil.which("vtysh") or ("/usr/bin/vtysh" if Path("/usr/bin/vtysh").exists() else None)
    assert vtysh, "vtysh not found: install Debian's frr package (apt-get install frr)"
    out = tmp_path / "out"
    tree = api.build_output(api.compile_fabric(SLIMFLY_Q5), platforms=["frr", "sonic"])
    tree.commit(out)
    files = sorted(out.glob("configs/*/*/frr.conf"))
    assert len(files) == 2 * 50
    failures = []
    for path in files:
        result = subprocess.run(
            [vtysh, "--dryrun", "-f", str(path)], capture_output=True, text=True, timeout=60
        )
        if result.returncode != 0 or "Unknown command" in result.stdout + result.stderr:
            failures.append(f"{path.relative_to(out)}: {result.stdout}{result.stderr}")
    assert not failures, "\n".join(failures[:5])
    # vtysh really parses: a broken line is rejected.
    broken = tmp_path / "broken.conf"
    text = files[0].read_text()
    broken.write_text(text.replace("! layer 1\n", "! layer 1\nip route 10.0.0.0/29 nowhere x\n"))
    assert subprocess.run([vtysh, "--dryrun", "-f", str(broken)], capture_output=True).returncode
