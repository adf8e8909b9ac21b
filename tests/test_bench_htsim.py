"""The simulator benchmark's side-by-side run with csg-htsim: reading htsim's output and the
arguments it passes on to its own runs. (htsim itself is not built here; the benchmark runs it.)"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from script_loader import load_script


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_script("benchmarks/sim_fattree_perm.py")


# The shape of htsim_ndp's output (ndp.cpp prints one such line per flow as its source has
# every byte acknowledged), with the lines it prints around them.
HTSIM_OUTPUT = """\
startflow ndp_1_0 CWND 200000 rts 0 at 0
Flow ndp_239_822 flow_id 240 finished at 203.788 total bytes 2000000
Flow ndp_533_823 flow_id 534 finished at 199.5 total bytes 2000000
Flow ndp_571_1021 flow_id 572 finished at 204.52 total bytes 2000000
.Done
New: 512000 Rtx: 0 Bounced: 0
"""


def test_htsim_figures_are_read_from_its_flow_lines(bench: ModuleType) -> None:
    figures = bench.htsim_figures(HTSIM_OUTPUT)
    assert figures == {"flows": 3, "median_us": 203.79, "max_us": 204.52}


def test_htsim_output_without_a_finished_flow_is_refused(bench: ModuleType) -> None:
    with pytest.raises(SystemExit, match="no finished flow"):
        bench.htsim_figures("startflow ndp_1_0 CWND 200000 rts 0 at 0\n.Done\n")


def test_options_for_htsim_are_not_passed_to_this_run(bench: ModuleType) -> None:
    argv = ["--htsim", "/x/htsim_ndp", "--repeat", "3", "--incast", "64", "--json", "--seed=2"]
    assert bench.without_options(argv, {"--htsim": 1, "--repeat": 1, "--json": 0}) == [
        "--incast",
        "64",
        "--seed=2",
    ]
    assert bench.without_options(["--htsim=/x", "--k", "8"], {"--htsim": 1}) == ["--k", "8"]


def test_a_missing_htsim_binary_is_a_usage_error(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "htsim_ndp"
    assert bench.main(["--htsim", str(missing)]) == 2
    assert "is not an executable file" in capsys.readouterr().err


def test_htsim_beside_the_incast_takes_no_matrix(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # An executable that is no htsim: the arguments are refused before anything runs.
    binary = tmp_path / "htsim_ndp"
    binary.write_text("#!/bin/sh\nexit 1\n")
    binary.chmod(0o755)
    argv = ["--htsim", str(binary), "--incast", "64", "--htsim-matrix", str(tmp_path / "m.cm")]
    assert bench.main(argv) == 2
    assert "not --htsim-matrix" in capsys.readouterr().err


def test_the_incast_beside_another_run_is_timed_as_a_whole_process(bench: ModuleType) -> None:
    # As htsim's: from outside, the interpreter's exit included, so never less than what the
    # process counted itself up to the end of its run.
    figures = bench.run_figures(["--incast", "2", "--size", "8000"], bench.HERE)
    assert figures is not None and figures["flows_finished"] == 2
    whole, own = figures["process_cpu_seconds"], figures["process_cpu_seconds_to_run_end"]
    assert isinstance(whole, float) and isinstance(own, float)
    assert 0 < own <= whole
