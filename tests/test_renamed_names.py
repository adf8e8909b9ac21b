"""A renamed scheme's old name is still read, as the new one, everywhere a scheme is named."""

from __future__ import annotations

import pytest

from fatpaths_cfg.sim.options import SimOptions, run_schemes
from fatpaths_cfg.sim.run import LOAD_BALANCING, SimConfig
from fatpaths_cfg.support.scheme_names import RENAMED, current_name
from fatpaths_cfg.sweep.spec import AnalyzeTask, layer_independent


def test_the_old_name_of_single_path_is_read_as_it_by_simulate() -> None:
    assert run_schemes(SimOptions(lb="minimal")) == ["single-path"]
    assert run_schemes(SimOptions(compare="minimal,ecmp")) == ["single-path", "ecmp"]
    assert SimConfig(load_balancing="minimal").load_balancing == "single-path"


def test_every_renamed_name_leads_to_a_scheme_that_exists() -> None:
    for old, new in RENAMED.items():
        assert old not in LOAD_BALANCING and new in LOAD_BALANCING
        assert current_name(old) == new and current_name(new) == new


def test_a_sweep_reads_the_old_name_and_counts_it_as_layer_independent() -> None:
    task = AnalyzeTask(scheme=["minimal", "fatpaths"])
    assert task.scheme == ["single-path", "fatpaths"]
    assert layer_independent("analyze", {"scheme": "single-path"})
    assert layer_independent("simulate", {"lb": "single-path"})


def test_an_unknown_scheme_is_still_refused_by_its_flag() -> None:
    from fatpaths_cfg.errors import UserErrors

    with pytest.raises(UserErrors, match="--lb/--compare 'minimum'"):
        run_schemes(SimOptions(lb="minimum"))
